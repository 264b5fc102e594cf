"""Lifecycle of deployment targets: ``diff ADDR``, ``status ADDR``, and the ADDR forms of
``deploy``, ``stop``, ``ready``, ``servers`` and ``slurm submit``.

Every command uses exactly the bytes in ``out/deploy/<name>``, refuses a stale artifact
(``--build`` rebuilds it first) and the wrong kube context or Slurm host.
"""

from __future__ import annotations

import sys

from manifesto.cli.hints import DEPLOYMENTS
from manifesto.cli.common import info, kube, settings, target_args, verbose
from manifesto.cli.flags import add_output
from manifesto.util.outputs import emit
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register", "target_command", "deploy", "diff", "status", "stop", "ready", "servers", "submit"]

_ADDR = ("a deployment target address (//:NAME, `kind: deployment` in BUILD.yaml) or its artifact "
         "out/deploy/NAME.yaml")


def register(sub, add) -> None:
    p = add(sub, "diff", help=SUMMARIES["diff"])
    p.add_argument("spec", metavar="ADDR", nargs="*",
                   help=_ADDR + "; with --base, any build addresses (default: all)").complete = DEPLOYMENTS
    p.add_argument("--context", help="kube context (must be the target's)")
    p.add_argument("--base", metavar="REV", help="compare the artifacts in out/ at git revision REV with the "
                   "working tree: per role GPUs, pods, parallelism, image, vLLM args and picker plugins, and whether "
                   "each change applies in place, rolls pods or recreates them")
    p.add_argument("--fail-on-recreate", action="store_true",
                   help="with --base: exit 3 when a change recreates every pod or job of a deployment (with -q, "
                   "print no report: the exit status is the answer)")
    add_output(p, formats=("text", "json", "markdown"))
    target_args(p, dry_run=False)
    p.set_defaults(func=diff)
    p = add(sub, "status", help=SUMMARIES["status"])
    p.add_argument("spec", metavar="ADDR", help=_ADDR).complete = DEPLOYMENTS
    p.add_argument("--context", help="kube context (must be the target's)")
    add_output(p)
    target_args(p, dry_run=False)
    p.set_defaults(func=status)


def target_command(args, action: str) -> int | None:
    """Run ``action`` of this module when SPEC names a deployment target (an address or an
    out/ path); None when it is an ordinary spec."""
    from manifesto.build_graph.deployments import is_target_ref

    if not is_target_ref(getattr(args, "spec", None)):
        return None
    return globals()[action](args)


# -- shared edges -----------------------------------------------------------------------

def _fixed() -> tuple[str, ...]:
    """Flags a deployment target fixes: the cluster, the instance and every render option it fixes."""
    from manifesto.resolve.options import fixed_dests

    return ("cluster", *fixed_dests(), "instance")


def _target(args, *, allow_stale: bool = False):
    from manifesto.errors import OpsError
    from manifesto.build_graph.deployments import load_target

    given = [name for name in _fixed() if getattr(args, name, None)]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise OpsError(f"{flag}: {args.spec} is a deployment target, which fixes its cluster, namespace, user and "
                       "render options; change them in BUILD.yaml")
    return load_target(args.spec, build=getattr(args, "build", False), allow_stale=allow_stale)


def _kube_for(art, args):
    """(settings, kubectl builder) for a Kubernetes target, after the context check."""
    import manifesto.cli.settings as cli_settings
    from manifesto.errors import OpsError
    from manifesto.ops.targets import check_context

    if art.platform != "kubernetes":
        raise OpsError(f"{art.address} is a Slurm target ({art.rel}); use `manifesto deploy {art.address}` or "
                       "`manifesto slurm ...`")
    env = settings(args)
    explicit = getattr(args, "context", None)
    context = check_context(art, explicit, None if explicit else cli_settings.current_context(env))
    return env, kube(args, env, art.namespace, context)


def _objects(art):
    from manifesto.ops.targets import instance_of, parse_objects

    objs = parse_objects(art.text, art.rel)
    return objs, instance_of(objs)


# -- commands ---------------------------------------------------------------------------

def deploy(args) -> int:
    from manifesto.ops.deploy import SECRET, deploy_objects, hf_token, object_facts

    art = _target(args)
    if art.platform == "slurm":
        return _submit(art, args, test_only=False)
    env, client = _kube_for(art, args)
    objs, instance = _objects(art)
    if args.dry_run:
        hf_token(env, art.namespace)  # what the real deploy would stop at, a dry run reports too
        secret = client.write("apply", "-f", "-")
        print(f"{secret.show()}  # stdin: Secret {SECRET} from $HF_TOKEN")
        print(f"{client.write('apply', '-f', '-').show()} < {art.rel}")
        info(args, f"# then: delete leftovers of the other routing frontend of {instance}, if any")
        return 0
    deploy_objects(client, object_facts(objs, instance), objs, env, text=art.text,
                   take_over=getattr(args, "take_over", False))
    return 0


def diff(args) -> int:
    from manifesto.errors import OpsError

    if args.base is not None:
        return build_diff(args)
    if len(args.spec) != 1 or args.fail_on_recreate or args.output != "text":
        what = ("--fail-on-recreate" if args.fail_on_recreate else f"--output {args.output}"
                if args.output != "text" else f"{len(args.spec)} addresses")
        raise OpsError(f"diff: {what} without --base; `manifesto diff ADDR` takes exactly one deployment target "
                       "and diffs it against the cluster, `manifesto diff --base REV [ADDR...]` compares builds")
    args.spec = args.spec[0]
    art = _target(args)
    if art.platform == "slurm":
        return _slurm_diff(art, args)
    _, client = _kube_for(art, args)
    return _idle_aware_diff(client, art)


def _idle_aware_diff(client, art) -> int:
    """kubectl diff of the artifact, with every field the idle-shutdown controller owns taken
    as the controller left it (0) where it did: an idle instance is no difference, as for
    `status` and for Argo CD (whose ignoreDifferences name the same fields)."""
    import os
    import tempfile

    from manifesto.ops.deploy import file_diff
    from manifesto.ops.targets import as_left_idle, idle_scaled, live_objects
    from manifesto.util.yamlemit import dump_all

    objs, instance = _objects(art)
    scaled = idle_scaled(objs)  # only the kinds the controller scales are read
    live = live_objects(client, [o for o in objs if (o["kind"], o["metadata"]["name"]) in scaled], instance)
    idle = as_left_idle(objs, live) if scaled else None
    if idle is None:
        return file_diff(client, art.path)
    with tempfile.TemporaryDirectory(prefix="manifesto-diff-") as folder:
        path = os.path.join(folder, os.path.basename(art.rel))
        from manifesto.edge.fs import write_atomic

        write_atomic(path, dump_all(idle), root=folder)
        return file_diff(client, path, shown=art.rel)


def build_diff(args) -> int:
    """``diff --base REV [ADDR...]``: what the change to out/ means for running deployments."""
    import json

    import msgspec

    from manifesto.review import semdiff
    from manifesto.review.base import semantic_diff

    # Text and markdown show the totals only beside changes; JSON always has them.
    result = semantic_diff(args.base, args.spec, totals_when_unchanged=args.output == "json")
    failed = args.fail_on_recreate and result.impact is semdiff.Impact.RECREATE
    if args.fail_on_recreate and getattr(args, "quiet", False):
        return 3 if failed else 0  # a gate: -q asks for the exit status alone
    if args.output == "json":
        print(json.dumps(msgspec.to_builtins(result), indent=2))
    elif args.output == "markdown":
        sys.stdout.write(semdiff.format_markdown(result))
    else:
        sys.stdout.write(semdiff.format_text(result))
    return 3 if failed else 0


def status(args) -> int:
    from manifesto.errors import printable
    from manifesto.ops.health import health, worst
    from manifesto.ops.targets import live_objects, object_report, summarize

    art = _target(args)
    if art.platform == "slurm":
        return _slurm_status(art, args)
    _, client = _kube_for(art, args)
    objs, instance = _objects(art)
    live = live_objects(client, objs, instance)
    rows = object_report(objs, live)
    overall = summarize(rows)
    # The verdict Argo CD's health checks (manifesto/data/argocd) give the live objects.
    healths = {(k, n): health(live[k, n]) for k, n, *_ in rows if (k, n) in live}
    data = {"target": art.address, "artifact": art.rel, "namespace": art.namespace, "context": art.context,
            "instance": instance, "status": overall,
            "health": worst(h["status"] for h in healths.values() if h is not None),
            "objects": [{"kind": k, "name": n, "status": s, "detail": d,
                         "differences": [{"path": p, "live": _absent(a), "desired": _absent(b)} for p, a, b in diffs],
                         **({"health": healths[k, n]} if healths.get((k, n)) else {})}
                        for k, n, s, d, diffs in rows]}

    def text() -> None:
        print(f"{art.address}  {overall}  ({instance} in namespace {art.namespace}, context {art.context}, "
              f"from {art.rel})")
        if data["health"] is not None:
            print(f"  health: {data['health']}")
        width = max(len(f"{k}/{n}") for k, n, *_ in rows)
        for kind, name, state, detail, diffs in rows:
            print(f"  {f'{kind}/{name}'.ljust(width)}  {state}{'  ' + detail if detail and not diffs else ''}")
            for path, live_value, desired in diffs:
                print(f"      {path}: live {_shown(live_value)}, desired {_shown(desired)}")
            verdict = healths.get((kind, name))
            if verdict is not None:  # the message quotes the cluster's text: escaped for the terminal
                print(f"      health: {verdict['status']}: {printable(verdict.get('message', ''))}")

    emit(getattr(args, "output", "text"), data, text=text,
         names=lambda: [f"{k}/{n}" for k, n, s, *_ in rows if s not in ("in-sync", "idle")])
    return 0 if overall in ("in-sync", "idle") else 1


def _absent(value):
    """A difference's side for JSON: None when the field is absent on that side."""
    return None if value == "(absent)" else value


def _shown(value) -> str:
    import json

    return value if value == "(absent)" else json.dumps(value, sort_keys=True)


def servers(args) -> int:
    """``servers ADDR``: the target's status."""
    return status(args)


def stop(args) -> int:
    from manifesto.ops.lifecycle import stop as stop_instance

    art = _target(args, allow_stale=True)  # the bytes in out/ name what was deployed
    if art.platform == "slurm":
        return _slurm_stop(art, args)
    from manifesto.resolve.names import OWNER_LABEL

    _, client = _kube_for(art, args)
    objs, instance = _objects(art)
    owner = next((o["metadata"]["labels"][OWNER_LABEL] for o in objs
                  if OWNER_LABEL in (o["metadata"].get("labels") or {})), "unknown")
    return stop_instance(client, instance, owner=owner, take_over=getattr(args, "take_over", False), now=args.now,
                         output=getattr(args, "output", "text"))


def ready(args) -> int:
    from manifesto.ops.lifecycle import wait_ready
    from manifesto.ops.targets import target_plan

    art = _target(args)
    if art.platform == "slurm":
        from manifesto.errors import OpsError

        raise OpsError(f"{art.address} is a Slurm target: `manifesto ready` waits for Kubernetes pods; "
                       f"`manifesto status {art.address}` shows whether its job runs")
    _, client = _kube_for(art, args)
    wait_ready(client, target_plan(art), args.timeout, args.interval, objects=_objects(art)[0],
               frontend_timeout=getattr(args, "gateway_timeout", None))
    return 0


def submit(args) -> int:
    """``slurm submit ADDR``."""
    return _submit(_target(args), args, test_only=args.test_only)


def _submit(art, args, *, test_only: bool) -> int:
    import shlex

    from manifesto.errors import OpsError
    from manifesto.ops import slurm

    if art.platform != "slurm":
        raise OpsError(f"{art.address} is a Kubernetes target; deploy it with `manifesto deploy {art.address}`")
    ssh_host = _slurm_host(art)
    call = slurm.submit_call(art.text, ssh_host, test_only)
    if getattr(args, "dry_run", False):
        mkdir = f"mkdir -p -- {shlex.join(call.mkdirs)} && " if call.mkdirs and not ssh_host else ""
        print(f"{mkdir}{shlex.join(call.command())} < {art.rel}")
        return 0
    proc = slurm.run(call, trace=verbose(args))
    if test_only:
        from manifesto.errors import printable

        answer = (proc.stderr or proc.stdout).strip()  # sbatch answers on stderr
        info(args, printable(answer[-4000:], keep="\n"))
        return 0
    job = slurm.job_id(proc.stdout)
    info(args, f"submitted Slurm job {job} for {art.address}; see it with `manifesto status {art.address}`, cancel it "
         f"with `manifesto stop {art.address}`")
    emit(getattr(args, "output", "text"), {"job": job, "target": art.address}, text=lambda: print(job),
         names=lambda: [job])
    return 0


# -- Slurm targets ----------------------------------------------------------------------

def _slurm_host(art) -> str | None:
    """The profile's ssh host (None: submit here), after refusing the wrong host."""
    import os

    from manifesto.cluster import load_cluster
    from manifesto.ops.targets import check_slurm_host

    profile = load_cluster(art.cluster_path).profile.slurm
    ssh_host = profile.ssh_host if profile else None
    check_slurm_host(art, ssh_host, os.uname().nodename)  # gethostname() without a socket module
    return ssh_host


def _slurm_jobs(art, args) -> tuple[str | None, str, list[dict]]:
    """(ssh host, instance, the instance's queued or running jobs)."""
    from manifesto.ops import slurm

    ssh_host = _slurm_host(art)
    instance = slurm.script_instance(art.text)
    rows = slurm.parse_servers(slurm.run(slurm.servers_call(ssh_host), trace=verbose(args)).stdout)
    return ssh_host, instance, slurm.instance_jobs(rows, instance)


def _submitted_script(job: str, ssh_host: str | None, args) -> str | None:
    from manifesto.errors import OpsError
    from manifesto.ops import slurm

    try:
        return slurm.run(slurm.batch_script_call(job, ssh_host), trace=verbose(args)).stdout or None
    except OpsError:
        return None


def _slurm_status(art, args) -> int:
    """in-sync: a job of the instance runs (or waits) with exactly the artifact's bytes; drifted:
    its jobs were submitted from other bytes; missing: none is queued or running."""
    from manifesto.ops.slurm import live_jobs

    ssh_host, instance, jobs = _slurm_jobs(art, args)
    jobs = live_jobs(jobs)  # a job Slurm is still cleaning up after (COMPLETING) no longer serves
    for job in jobs:
        script = _submitted_script(job["job"], ssh_host, args)
        job["status"] = "in-sync" if script == art.text else (
            "drifted" if script is not None else "unknown")
        job["detail"] = "" if script == art.text else (
            "submitted from another artifact" if script is not None else "its batch script is not readable")
    overall = "missing" if not jobs else ("in-sync" if any(j["status"] == "in-sync" for j in jobs) else "drifted")
    data = {"target": art.address, "artifact": art.rel, "slurm_host": art.slurm_host, "instance": instance,
            "status": overall, "jobs": jobs}

    def text() -> None:
        print(f"{art.address}  {overall}  ({instance} on Slurm host {art.slurm_host}, from {art.rel})")
        for job in jobs:
            where = job["nodes"] or job["reason"]
            print(f"  job {job['job']}  {job['state']}  {job['status']}"
                  f"{'  ' + where if where else ''}{'  ' + job['detail'] if job['detail'] else ''}")
        if not jobs:
            print("  no queued or running job")

    emit(getattr(args, "output", "text"), data, text=text, names=lambda: [job["job"] for job in jobs])
    return 0 if overall == "in-sync" else 1


def _slurm_stop(art, args) -> int:
    from manifesto.ops import slurm

    output = getattr(args, "output", "text")
    ssh_host, instance, jobs = _slurm_jobs(art, args)
    if not jobs:
        info(args, f"manifesto: no queued or running Slurm job of {art.address} ({instance}); nothing to stop")
    for job in jobs:
        if slurm.check_cancelled(job["job"], slurm.run(slurm.stop_call(job["job"], ssh_host), trace=verbose(args))):
            info(args, f"cancelled Slurm job {job['job']} of {art.address}")
        else:
            info(args, f"manifesto: Slurm job {job['job']} of {art.address} had already ended")
    if output != "text":
        cancelled = [job["job"] for job in jobs]
        emit(output, {"target": art.address, "instance": instance, "cancelled": cancelled},
             names=lambda: cancelled)
    return 0


def _slurm_diff(art, args) -> int:
    """The unified diff from the script the instance's job was submitted with to the artifact
    (exit 1: differs or no job)."""
    import difflib

    from manifesto.edge.escape import lines, terminal

    ssh_host, instance, jobs = _slurm_jobs(art, args)
    if not jobs:
        info(args, terminal(f"manifesto: no queued or running Slurm job of {art.address} ({instance})"))
        return 1
    script = _submitted_script(jobs[0]["job"], ssh_host, args) or ""
    if script == art.text:
        info(args, f"manifesto: no differences between {art.rel} and the script of Slurm job {jobs[0]['job']}")
        return 0
    # the submitted script comes from Slurm and the artifact from out/: no escape sequence of
    # either reaches the terminal (line breaks and tabs stay, a CR or ESC is shown escaped)
    sys.stdout.writelines(lines(line) for line in difflib.unified_diff(
        _split_lines(script), _split_lines(art.text), terminal(f"job {jobs[0]['job']}"), terminal(art.rel)))
    return 1


def _split_lines(text: str) -> list[str]:
    """``text``'s lines split at line feeds only (a lone CR stays inside its line, escaped)."""
    import re

    return re.findall(r"[^\n]*\n|[^\n]+$", text)
