"""Assemble the sbatch script: directives, batch-host set-up, srun steps, shared lifetime."""

from __future__ import annotations

import posixpath
import shlex

from manifesto.render.header import provenance_header
from manifesto.resolve import names
from manifesto.render.envoy import EPP_GRPC_PORT, envoy_config
import manifesto.render.slurm.routing as rtg
import manifesto.render.slurm.runtime as rt
from manifesto.render.slurm.checks import SlurmUnsupported, check_plan, ignored_requests
from manifesto.util.quantity import cpus, mebibytes
from manifesto.render.slurm.task import launch_text, needs_node_ip, task_text
from manifesto.util.yamlemit import dump_yaml

__all__ = ["render_slurm"]

EPP_HEALTH_PORT = 9003
EPP_METRICS_PORT = 9090
SRUN_COMMON = "--cpu-bind=none --kill-on-bad-exit=1 --wait=30 --export=ALL"


def _var(role, kind: str) -> str:
    return f"{kind}_{role.name.upper().replace('-', '_')}"


def _heredoc(var: str, delimiter: str, body: str) -> list[str]:
    """``var`` holds ``body`` exactly (a quoted here-document: nothing is expanded)."""
    if any(line == delimiter for line in body.split("\n")):
        raise SlurmUnsupported(f"a script line is exactly '{delimiter}', which would end its here-document "
                               "in the Slurm batch script", "spec", ("runtime", "pre_launch"))
    return [f"IFS= read -r -d '' {var} <<'{delimiter}' || true", *body.rstrip("\n").split("\n"), delimiter]


def _file(path_expr: str, delimiter: str, body: str) -> list[str]:
    if any(line == delimiter for line in body.split("\n")):
        raise SlurmUnsupported(f"a generated file has a line '{delimiter}', which would end its here-document "
                               "in the Slurm batch script", "spec", ("routing",))
    return [f"cat > {path_expr} <<'{delimiter}'", *body.rstrip("\n").split("\n"), delimiter]


def _srun(options: list[list[str]], command: list[list[str]] | str, background: bool = False,
          env: list[str] = ()) -> list[str]:
    """One srun call: ``env`` assignments, then option groups and command groups on
    continuation lines."""
    commands = [command] if isinstance(command, str) else [" ".join(c) for c in command if c]
    groups = [" ".join(g) for g in options if g] + commands
    lines = [" ".join([*env, "srun", groups[0]]) + " \\"] + ["  " + g + " \\" for g in groups[1:]]
    lines[-1] = lines[-1][: -len(" \\")] + (" &" if background else "")
    return lines


def _directives(plan, role, *, nodes: int, cpu: int, mem: int, output: str | None,
                array: int | None) -> list[str]:
    s = plan.slurm
    lines = [f"--job-name=manifesto-{plan.instance}", f"--nodes={nodes}", f"--ntasks={nodes}",
             "--ntasks-per-node=1", f"--cpus-per-task={cpu}", f"--mem={mem}M",
             f"--gres={plan.accelerator.gres}:{role.layout.gpus_per_pod}", f"--time={s.time}"]
    for opt in ("partition", "account", "qos", "constraint"):
        value = getattr(s, opt)
        if value:
            lines.append(f"--{opt}={value}")
    if s.exclusive:
        lines.append("--exclusive")
    lines.append("--export=ALL")
    if array is not None:
        lines.append(f"--array=0-{array - 1}")
    if output:
        lines.append(f"--output={output}")
    return ["#SBATCH " + line for line in lines]


def _output(plan, pattern: str) -> str:
    """The job log: in the log root when the profile sets one (``manifesto slurm submit`` makes
    the directory; Slurm does not), else in the directory sbatch runs in."""
    log_dir = plan.roles[0].storage.log_dir
    if not log_dir:
        return pattern
    return posixpath.join(posixpath.dirname(log_dir).replace("%", "%%"), pattern)


def _log_note(directives: list[str]) -> list[str]:
    logs = [d.split("=", 1)[1] for d in directives if d.startswith("#SBATCH --output=/")]
    if not logs:
        return []
    return [f"# Slurm does not create {posixpath.dirname(logs[0])}/; `manifesto slurm submit` does (with plain "
            "sbatch, mkdir -p it first)."]


def _notes(plan) -> list[str]:
    ignored = ignored_requests(plan)
    if not ignored:
        return []
    return ["# Not applied on Slurm (Kubernetes-only requests):", *(f"#   {n}" for n in ignored)]


def _prologue(plan) -> list[str]:
    if not plan.slurm.setup:
        return ["set -euo pipefail"]
    # Site set-up (module load ...) often reads unset variables: -u only after it.
    return ["set -eo pipefail", "# slurm.setup from the cluster profile: trusted commands for this batch host.",
            *plan.slurm.setup, "set -u"]


def _pyxis_env(role, *names_: str) -> str:
    """--container-env value: host values that must win over the image's inside the container
    (HF_TOKEN only when the submitter set it)."""
    fixed = ["CUDA_VISIBLE_DEVICES", *names_] + (["MANIFESTO_IPS"] if needs_node_ip(role) else [])
    return f'"{",".join(fixed)}${{HF_TOKEN:+,HF_TOKEN}}"'


def _resolve_function() -> list[str]:
    return [
        "# IPv4 of each host named on stdin (NIXL side channels need literal addresses).",
        "manifesto_ipv4() {",
        "  python3 -c '",
        "import socket, sys",
        "for host in sys.stdin.read().split():",
        "    try:",
        "        print(socket.getaddrinfo(host, None, socket.AF_INET)[0][4][0])",
        "    except OSError as exc:",
        "        sys.exit(f\"manifesto: cannot resolve {host} to an IPv4 address: {exc}\")",
        "'",
        "}",
    ]


# ---- direct serving: one job (array element) per replica --------------------------------------


def _direct(plan) -> list[str]:
    role = plan.roles[0]
    lay = role.layout
    cpu, mem = cpus(role.resources.cpu), mebibytes(role.resources.memory)
    directives = _directives(plan, role, nodes=lay.nodes, cpu=cpu, mem=mem,
                             output=_output(plan, f"manifesto-{plan.instance}-%A_%a.out"), array=lay.replicas)
    body = [
        "",
        f"# Direct vLLM serving of {plan.model_id}: each array element is one replica of {lay.nodes} "
        f"node{'s' if lay.nodes > 1 else ''},",
        "# one srun task per node; the first host is the replica's leader and serves HTTP.",
        *_prologue(plan),
        "",
        'hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST")',
        'mapfile -t MANIFESTO_HOST_LIST <<< "$hosts"',
        "export MANIFESTO_HOSTS=${hosts//$'\\n'/,}",
        'export MANIFESTO_POD_UID="${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}-${SLURM_ARRAY_TASK_ID:-0}"',
    ]
    if needs_node_ip(role):
        body += ["", *_resolve_function()]
        body += ['ips=$(printf \'%s\\n\' "${MANIFESTO_HOST_LIST[@]}" | manifesto_ipv4)',
                 "export MANIFESTO_IPS=${ips//$'\\n'/,}"]
    body.append(f'echo "manifesto: {plan.instance} replica ${{SLURM_ARRAY_TASK_ID:-0}} (job $MANIFESTO_POD_UID) '
                f'serves http://${{MANIFESTO_HOST_LIST[0]}}:{lay.public_ports[0]}"')
    body.append("")
    body += _heredoc("MANIFESTO_TASK", "MANIFESTO_TASK", task_text(plan, role, size=lay.nodes, pod_uid=None))
    body += _heredoc("MANIFESTO_LAUNCH", "MANIFESTO_LAUNCH", launch_text(plan, role))
    body.append("")
    body.append("# srun ends the replica when any of its nodes fails.")
    opts = [
        [f"--nodes={lay.nodes}", f"--ntasks={lay.nodes}", "--ntasks-per-node=1", f"--cpus-per-task={cpu}"],
        [SRUN_COMMON],
        rt.srun_options(plan, role.image, binds=rt.binds_of(plan),
                        env_names=_pyxis_env(role, "MANIFESTO_HOSTS", "MANIFESTO_POD_UID")),
    ]
    body += _srun(opts, f'bash -c "$MANIFESTO_TASK" manifesto-{role.name} "$MANIFESTO_LAUNCH"')
    return directives + body


# ---- llm-d routing: one allocation, one heterogeneous component per role ------------------------


def _component_resources(plan, g: int, role) -> tuple[int, int]:
    s = plan.slurm
    cpu, mem = cpus(role.resources.cpu), mebibytes(role.resources.memory)
    if g == 0:
        cpu += s.router_cpus
        mem += mebibytes(s.router_memory)
    if role.proxy:
        cpu += s.proxy_cpus
        mem += mebibytes(s.proxy_memory)
    return cpu, mem


def _routed(plan) -> list[str]:
    s = plan.slurm
    roles = list(plan.roles)
    het = len(roles) > 1
    directives: list[str] = []
    for g, role in enumerate(roles):
        cpu, mem = _component_resources(plan, g, role)
        if g:
            directives.append("#SBATCH hetjob")
        directives += _directives(plan, role, nodes=role.layout.nodes * role.layout.replicas, cpu=cpu, mem=mem,
                                  output=_output(plan, f"manifesto-{plan.instance}-%j.out") if g == 0 else None,
                                  array=None)
    kind = "prefill/decode disaggregation" if plan.routing.kind == "pd" else "load-aware routing"
    body = [
        "",
        f"# llm-d {kind} of {plan.model_id} in one allocation"
        + (f",\n# one heterogeneous component per role ({', '.join(f'{g}: {r.name}' for g, r in enumerate(roles))})."
           if het else "."),
        "# Envoy and the endpoint picker run on the first node; every step shares the job's lifetime.",
        *_prologue(plan),
        "",
        'export MANIFESTO_JOB="$SLURM_JOB_ID"',
        'MANIFESTO_ROUTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/manifesto-${SLURM_JOB_ID}.XXXXXX")',
        "trap 'rm -rf \"$MANIFESTO_ROUTER_DIR\"' EXIT",
        "trap 'exit 143' TERM INT",
        'mkdir -p "$MANIFESTO_ROUTER_DIR/epp"',
        "",
        "# Allocated hosts of each component, in Slurm's order.",
    ]
    for g, role in enumerate(roles):
        nodelist = f"SLURM_JOB_NODELIST_HET_GROUP_{g}" if het else "SLURM_JOB_NODELIST"
        body += [f'hosts=$(scontrol show hostnames "${nodelist}")',
                 f'printf \'%s\\n\' "$hosts" > "$MANIFESTO_ROUTER_DIR/hosts-{g}"',
                 f'mapfile -t HOSTS_{g} <<< "$hosts"',
                 f"HOSTLIST_{g}=${{hosts//$'\\n'/,}}"]
    body += [
        "",
        "# Resolve the hosts to IPv4 and write the endpoint picker's discovery file: one entry per",
        "# API node and port of the routed roles (headless nodes serve no HTTP).",
        *_heredoc("MANIFESTO_RESOLVER", "MANIFESTO_PY", rtg.resolver_program(plan, roles)),
        'python3 -c "$MANIFESTO_RESOLVER" "$MANIFESTO_ROUTER_DIR"',
    ]
    for g, role in enumerate(roles):
        body.append(f'mapfile -t IPS_{g} < "$MANIFESTO_ROUTER_DIR/ips-{g}"')
        if needs_node_ip(role):
            body.append(f'IPLIST_{g}=$(IFS=,; echo "${{IPS_{g}[*]}}")')
    epp_name, epp_text = rtg.epp_config(plan)
    envoy_text = dump_yaml(envoy_config(s.port, EPP_GRPC_PORT, plan.routing_sizing.envoy_buffer_limit,
                                          plan.routing_sizing.envoy_circuit_limit))
    body += [
        "",
        f"# Endpoint picker policy ({_policy_source(plan.routing.profile_source)}) plus file discovery of the "
        "endpoints above.",
        *_heredoc("MANIFESTO_EPP_CONFIG", "MANIFESTO_EPP", epp_text),
        f'printf \'%s\' "${{MANIFESTO_EPP_CONFIG//{rtg.ROUTER_DIR_TOKEN}/$MANIFESTO_ROUTER_DIR}}" '
        f'> "$MANIFESTO_ROUTER_DIR/epp/{epp_name}"',
        "# Envoy sends each request through the picker (ext_proc) to the endpoint it names.",
        *_file('"$MANIFESTO_ROUTER_DIR/envoy.yaml"', "MANIFESTO_ENVOY", envoy_text),
        "",
        "MANIFESTO_STEPS=()",
    ]
    for g, role in enumerate(roles):
        body += _model_step(plan, g, role, het)
    for g, role in enumerate(roles):
        if role.proxy:
            body += _proxy_step(plan, g, role, het)
    body += _router_steps(plan, het)
    body += [
        "",
        f'echo "manifesto: {plan.instance} router (Envoy + endpoint picker) at http://${{IPS_0[0]}}:{s.port} '
        '(host ${HOSTS_0[0]}, job $MANIFESTO_JOB)"',
        "# All steps share one lifetime: the first to end, for any reason, ends the others and the job.",
        "status=0",
        "wait -n || status=$?",
        'echo "manifesto: a job step ended with status $status; stopping the others" >&2',
        'kill "${MANIFESTO_STEPS[@]}" 2>/dev/null || true',
        "wait || true",
        'exit "$status"',
    ]
    return directives + body


def _het(g: int, het: bool) -> list[str]:
    return [f"--het-group={g}"] if het else []


def _model_step(plan, g: int, role, het: bool) -> list[str]:
    lay = role.layout
    n = lay.nodes * lay.replicas
    cpu, mem = cpus(role.resources.cpu), mebibytes(role.resources.memory)
    task, launch = _var(role, "TASK"), _var(role, "LAUNCH")
    env = [f'MANIFESTO_HOSTS="$HOSTLIST_{g}"']
    if needs_node_ip(role):
        env.append(f'MANIFESTO_IPS="$IPLIST_{g}"')
    uid = f'"${{MANIFESTO_JOB}}-{role.name}-$((node / {lay.nodes}))"'
    lines = [
        "",
        f"# Role {role.name}: {lay.replicas} replica{'s' if lay.replicas > 1 else ''} of {lay.nodes} "
        f"node{'s' if lay.nodes > 1 else ''} on consecutive hosts of component {g}.",
        *_heredoc(task, "MANIFESTO_TASK", task_text(plan, role, size=lay.nodes, pod_uid=uid)),
        *_heredoc(launch, "MANIFESTO_LAUNCH", launch_text(plan, role)),
    ]
    opts = [
        _het(g, het) + ["--overlap", f"--nodes={n}", f"--ntasks={n}", "--ntasks-per-node=1"],
        [f"--cpus-per-task={cpu}", f"--mem={mem}M", f"--gres={plan.accelerator.gres}:{lay.gpus_per_pod}"],
        [SRUN_COMMON],
        rt.srun_options(plan, role.image, binds=rt.binds_of(plan),
                        env_names=_pyxis_env(role, "MANIFESTO_HOSTS", "MANIFESTO_JOB")),
    ]
    srun = _srun(opts, f'bash -c "${task}" manifesto-{role.name} "${launch}"', background=True, env=env)
    return lines + srun + ['MANIFESTO_STEPS+=("$!")']


def _proxy_step(plan, g: int, role, het: bool) -> list[str]:
    s = plan.slurm
    lay = role.layout
    nodes = [r * lay.nodes + n for r in range(lay.replicas) for n in lay.serving_nodes]
    hosts = ",".join(f"${{HOSTS_{g}[{i}]}}" for i in nodes)
    image = plan.images["llm_d.routing_sidecar"]
    binds = rt.binds_of(plan)
    command = [rt.exec_prefix(plan, image, gpu=False, binds=binds),
               [rt.program(s.runtime, "pd-sidecar"), *(shlex.quote(a) for a in rtg.proxy_args(plan, role))]]
    opts = [
        _het(g, het) + ["--overlap", f'--nodelist="{hosts}"', f"--nodes={len(nodes)}", f"--ntasks={len(nodes)}",
                        "--ntasks-per-node=1"],
        [f"--cpus-per-task={s.proxy_cpus}", f"--mem={mebibytes(s.proxy_memory)}M", "--gres=none"],
        [SRUN_COMMON],
        rt.srun_options(plan, image, binds=binds, env_names=None),
    ]
    return ["", f"# P/D proxy beside each {role.name} API node: clients and the picker reach {role.name} "
                f"through it on port{'s' if len(lay.public_ports) > 1 else ''} "
                f"{', '.join(map(str, lay.public_ports))}.",
            *_srun(opts, command, background=True), 'MANIFESTO_STEPS+=("$!")']


def _router_steps(plan, het: bool) -> list[str]:
    s = plan.slurm
    half_cpu = max(1, s.router_cpus // 2)
    half_mem = max(1, mebibytes(s.router_memory) // 2)
    router_dir = ("$MANIFESTO_ROUTER_DIR", "$MANIFESTO_ROUTER_DIR", True)
    binds = rt.binds_of(plan, (router_dir,))
    epp_name = plan.routing.config_file
    epp_image, envoy_image = plan.images["llm_d.epp"], plan.images["llm_d.envoy"]
    epp = [rt.program(s.runtime, "epp"),
           f"--pool-name={names.pool(plan.instance)}", f"--pool-namespace={shlex.quote(plan.namespace)}",
           f'--config-file="$MANIFESTO_ROUTER_DIR/epp/{epp_name}"',
           f"--grpc-port={EPP_GRPC_PORT}", f"--grpc-health-port={EPP_HEALTH_PORT}",
           f"--metrics-port={EPP_METRICS_PORT}",
           # Envoy reaches the picker on loopback in plaintext h2 (as on Kubernetes), and without a
           # Kubernetes API there is no TokenReview to authenticate /metrics scrapes with.
           "--secure-serving=false", "--metrics-endpoint-auth=false"]
    if plan.routing.experimental_plugins:  # Alpha plugins in the config (router v0.10+ refuses them otherwise)
        from manifesto.resolve.routing import EXPERIMENTAL_FLAG

        epp.append(EXPERIMENTAL_FLAG)
    envoy = [rt.program(s.runtime, "envoy"),
             "--log-level", "warn", "--concurrency", str(half_cpu), "--disable-hot-restart",
             "--drain-strategy", "immediate", "--drain-time-s", "1", "-c", '"$MANIFESTO_ROUTER_DIR/envoy.yaml"']
    out = ["", "# Router on the first host of component 0, over its reserved slurm.router_cpus / router_memory."]
    for image, command in ((epp_image, epp), (envoy_image, envoy)):
        opts = [
            _het(0, het) + ["--overlap", '--nodelist="${HOSTS_0[0]}"', "--nodes=1", "--ntasks=1"],
            [f"--cpus-per-task={half_cpu}", f"--mem={half_mem}M", "--gres=none"],
            [SRUN_COMMON],
            rt.srun_options(plan, image, binds=binds, env_names=None),
        ]
        cmd = [rt.exec_prefix(plan, image, gpu=False, binds=binds), command]
        out += _srun(opts, cmd, background=True) + ['MANIFESTO_STEPS+=("$!")']
    return out


def _policy_source(source: str) -> str:
    """Where the EPP policy came from, without a file path (the header inlines that file)."""
    return "the --routing-profile file" if source.startswith("--routing-profile") else source


def render_slurm(plan, model_yaml: str, cluster_yaml: str, options=None, routing_yaml=None) -> str:
    """The complete sbatch script for a Slurm-platform Plan."""
    check_plan(plan)
    if plan.routing is None and len(plan.roles) != 1:
        raise SlurmUnsupported(
            f"direct serving on Slurm runs one role per job, but the spec has {len(plan.roles)} roles; use "
            "llm-d routing (routing.kind: load_aware or pd) to run several roles in one allocation",
            "spec", ("roles",))
    lines = _routed(plan) if plan.routing is not None else _direct(plan)
    directives = [line for line in lines if line.startswith("#SBATCH")]
    rest = lines[len(directives):]
    head = ["#!/bin/bash", provenance_header("render manifest", model_yaml, cluster_yaml, options=options,
                                              routing_yaml=routing_yaml).rstrip("\n"),
            *directives, *_log_note(directives), *_notes(plan)]
    return "\n".join(head + rest) + "\n"
