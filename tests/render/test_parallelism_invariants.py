"""Parallelism invariants, read back from rendered artifacts over generated spec x cluster pairs.

For every generated pair that resolves, and every role:

* GPUs requested per pod (the extended resource limit, the DRA claim's device count, or the
  Slurm step's --gres) equal tp x pp x (DP ranks per pod) of the spec;
* the GPUs the launch script makes vLLM 0.33.0 use on one pod equal them too. That number is
  computed the way vllm/engine/arg_utils.py does: with --nnodes N > 1, a process uses
  data_parallel_size x tp x pp / N GPUs; otherwise --data-parallel-size-local x tp x pp (one
  rank when it is an external rank); independent servers are counted one by one;
* the DP world vLLM sees (--data-parallel-size x tp x pp) equals the GPUs of the pods that form
  it, and with expert parallelism the EP group (tp x data-parallel size) covers that world.

Everything is read from the rendered objects and script text, not from the Plan.
"""

from __future__ import annotations

import os
import re
import textwrap

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import kit

CLUSTER_TEXT = {
    "ext4": """\
        name: ext4
        accelerators:
          default: gpu
          profiles:
            gpu: {gpus_per_node: 4, memory: 186G, allocation: {extended_resource: {resource_name: nvidia.com/gpu}}}
        """,
    "ext8": """\
        name: ext8
        accelerators:
          default: gpu
          profiles:
            gpu: {gpus_per_node: 8, memory: 141G, allocation: {extended_resource: {resource_name: nvidia.com/gpu}}}
        """,
    "dra4": """\
        name: dra4
        accelerators:
          default: gpu
          profiles:
            gpu: {gpus_per_node: 4, memory: 186G, allocation: {dra: {device_class_name: gpu.nvidia.com}}}
        """,
    "slurm8": """\
        name: slurm8
        platform: slurm
        slurm: {partition: gpu}
        accelerators:
          default: gpu
          profiles:
            gpu: {gpus_per_node: 8, memory: 180G, allocation: {slurm: {gres: gpu}}}
        """,
}
MODELS = ("Qwen/Qwen3-0.6B", "Qwen/Qwen3-30B-A3B", "org/unknown")  # dense, MoE, no architecture


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    from manifesto.cluster import load_cluster

    root = tmp_path_factory.mktemp("clusters")
    out = {}
    for name, text in CLUSTER_TEXT.items():
        path = root / f"{name}.yaml"
        path.write_text(textwrap.dedent(text))
        out[name] = load_cluster(str(path))
    return out


@st.composite
def layouts(draw):
    """A spec whose layout fits its cluster: tp x pp x dp split over whole pods."""
    cluster = draw(st.sampled_from(sorted(CLUSTER_TEXT)))
    per_node = 8 if cluster.endswith("8") else 4
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    pp = draw(st.sampled_from([1, 1, 2]))
    dp = draw(st.sampled_from([False, 1, 2, 4, 8, 16]))
    total = tp * pp * (dp or 1)
    sizes = [n for n in range(1, total + 1) if total % n == 0 and total // n <= per_node
             and (tp * pp) % (total // n) == 0 or total % n == 0 and total // n <= per_node
             and (total // n) % (tp * pp) == 0]
    assume(sizes)
    size = draw(st.sampled_from(sizes))
    return {
        "cluster": cluster, "model": draw(st.sampled_from(MODELS)), "tp": tp, "pp": pp, "dp": dp,
        "ep": draw(st.booleans()), "size": size, "replicas": draw(st.sampled_from([1, 2])),
        "routed": draw(st.booleans()), "pd": draw(st.booleans()),
    }


def _spec_text(c: dict) -> str:
    par = f"{{tp: {c['tp']}, pp: {c['pp']}, dp: {str(c['dp']).lower()}, ep: {str(c['ep']).lower()}}}"
    role = (f"    lws: {{size: {c['size']}, replicas: {c['replicas']}}}\n    parallelism: {par}\n"
            "    vllm: {max_model_len: 4096}\n    resources: {cpu: '8', memory: 64Gi}\n")
    kv = "    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}\n"
    head = f"release: prop\nmodel: {{id: {c['model']}, image_ref: vllm.standard}}\nruntime: {{sidecars: []}}\n"
    if c["pd"]:
        return (head + "topology: pd\nrouting: {kind: pd, target_role: decode}\nroles:\n"
                + "  - name: prefill\n" + role + kv + "  - name: decode\n" + role + kv)
    routing = "routing: {kind: load_aware, target_role: decode}\n" if c["routed"] else ""
    return head + routing + "roles:\n  - name: decode\n" + role


# --- reading the numbers back ----------------------------------------------------------------

_FLAG = r'--{name}[ =](?:"([^"]+)"|([^"\s)]+))'


def _number(text: str, variables: dict[str, int]) -> int:
    """A launch-script value: a literal, $VAR, or $((arithmetic over literals and VARs))."""
    expr = text.strip('"')
    if expr.startswith("$((") and expr.endswith("))"):
        expr = expr[3:-2]
    expr = re.sub(r"\$?\{?([A-Z_]+)\}?", lambda m: str(variables[m.group(1)]), expr)
    assert re.fullmatch(r"[\d\s*+()-]+", expr), text
    return eval(expr)  # noqa: S307 - digits and * + - ( ) only, checked above


def _flag(script: str, name: str, variables: dict[str, int]) -> int | None:
    found = re.findall(_FLAG.format(name=name), script)
    values = {_number(quoted or bare, variables) for quoted, bare in found}
    assert len(values) <= 1, (name, values)
    return values.pop() if values else None


def vllm_gpus_per_pod(script: str) -> tuple[int, int | None]:
    """(GPUs the launch script's vLLM processes use on one pod, the DP size vLLM sees)."""
    variables = {k: int(v) for k, v in re.findall(r"^([A-Z_]+)=(\d+)$", script, re.M)}
    tp = _flag(script, "tensor-parallel-size", variables)
    pp = _flag(script, "pipeline-parallel-size", variables) or 1
    dp = _flag(script, "data-parallel-size", variables)
    local = _flag(script, "data-parallel-size-local", variables)
    nnodes = _flag(script, "nnodes", variables) or 1
    loop = re.search(r"for rank in \$\(seq 0 (\d+)\)", script)
    servers = int(loop.group(1)) + 1 if loop else 1
    if loop:  # independent servers: each takes its own slice of tp x pp GPUs
        assert re.search(rf'\$\(\(rank \* {tp * pp}\)\):{tp * pp}', script), script
    if nnodes > 1:
        return (dp or 1) * tp * pp // nnodes * servers, dp
    return (local or 1) * tp * pp * servers, dp


def _k8s_roles(objects: list[dict]) -> dict[str, tuple[list[dict], int, int]]:
    """workload name -> (pod specs, pods per group, groups) of every model workload."""
    out = {}
    for obj in objects:
        if obj["kind"] == "Deployment" and obj["metadata"]["name"].startswith("prop-") and \
                obj["metadata"].get("labels", {}).get("manifesto.llm-d.ai/role"):
            out[obj["metadata"]["name"]] = ([obj["spec"]["template"]["spec"]], 1, obj["spec"]["replicas"])
        elif obj["kind"] == "LeaderWorkerSet":
            t = obj["spec"]["leaderWorkerTemplate"]
            pods = [t.get("leaderTemplate", t["workerTemplate"])["spec"], t["workerTemplate"]["spec"]]
            out[obj["metadata"]["name"]] = (pods, t["size"], obj["spec"]["replicas"])
    return out


def _requested(pod: dict, objects: list[dict]) -> tuple[int, int | None]:
    """(GPUs the vllm container requests, the DRA claim's device count or None)."""
    vllm = next(c for c in pod["containers"] if c["name"] == "vllm")
    limit = int(vllm["resources"].get("limits", {}).get("nvidia.com/gpu", 0))
    claims = [c["resourceClaimTemplateName"] for c in pod.get("resourceClaims", []) if c["name"] == "accelerator"]
    if not claims:
        return limit, None
    template = next(o for o in objects if o["kind"] == "ResourceClaimTemplate" and o["metadata"]["name"] == claims[0])
    count = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"]
    return count, count


def _expected_per_pod(c: dict) -> int:
    return c["tp"] * c["pp"] * (c["dp"] or 1) // c["size"]


def check_kubernetes(c: dict, plan, spec) -> None:
    from manifesto.render import k8s_objects

    objects = k8s_objects(plan, spec)
    workloads = _k8s_roles(objects)
    assert len(workloads) == len(plan.roles)
    per_pod = _expected_per_pod(c)
    for name, (pods, size, groups) in workloads.items():
        for pod in pods:
            requested, claim = _requested(pod, objects)
            script = next(x for x in pod["containers"] if x["name"] == "vllm")["command"][2]
            used, dp = vllm_gpus_per_pod(script)
            assert requested == used == per_pod, (name, requested, used, per_pod, script)
            if claim is not None:
                assert claim == per_pod
            _check_world(c, script, dp, size * groups * per_pod, size, per_pod)


def _check_world(c: dict, script: str, dp: int | None, role_gpus: int, pods_per_group: int, per_pod: int) -> None:
    tp, pp = c["tp"], c["pp"]
    assert role_gpus == tp * pp * (c["dp"] or 1) * c["replicas"]
    if dp is not None:  # one DP world of dp ranks: its GPUs are whole pods of this role
        assert dp == c["dp"]
        assert (dp * tp * pp) % per_pod == 0
    # vLLM's EP group is tp x data_parallel_size: with DP flags (checked above: dp is the spec's)
    # it spans the spec's whole DP world; an independent server's EP group is its own tp.
    assert ("--enable-expert-parallel" in script) == c["ep"]
    if c["ep"] and dp is None and (c["dp"] or 1) > 1:
        assert re.search(r"for rank in|RANK_NODES=", script) or per_pod == tp * pp, script


def check_slurm(c: dict, text: str, plan) -> None:
    """Each role's step: ``srun ... --gres=gpu:N ... bash -c "$TASK" manifesto-ROLE "$LAUNCH"``
    (a single step may take its GRES from the #SBATCH lines), and the launch script it runs."""
    per_pod = _expected_per_pod(c)
    launches = dict(re.findall(r"read -r -d '' (\w+) <<'MANIFESTO_LAUNCH'[^\n]*\n(.*?)\nMANIFESTO_LAUNCH\n", text, re.S))
    header_gres = re.search(r"^#SBATCH --gres=gpu:(\d+)$", text, re.M)
    for role in plan.roles:
        call = re.search(rf'bash -c "\$\w+" manifesto-{role.name} "\$(\w+)"', text)
        assert call, role.name
        step = text[text.rindex("srun ", 0, call.start()):call.start()]
        gres = re.search(r"--gres=gpu:(\d+)", step) or header_gres
        nodes = int(re.search(r"--nodes=(\d+)", step).group(1))
        used, dp = vllm_gpus_per_pod(launches[call.group(1)])
        assert int(gres.group(1)) == used == per_pod, (role.name, gres.group(1), used, per_pod)
        assert nodes % c["size"] == 0
        _check_world(c, launches[call.group(1)], dp, c["size"] * c["replicas"] * per_pod, c["size"], per_pod)


def _render_one(c: dict, clusters, tmp_path_factory) -> bool:
    from manifesto.errors import ManifestoError
    from manifesto.render import artifact_text
    from manifesto.resolve.plan import Options
    from manifesto.spec import load_spec

    path = tmp_path_factory.mktemp("spec") / "m.yaml"
    path.write_text(_spec_text(c))
    cluster = clusters[c["cluster"]]
    try:
        spec = load_spec(str(path), cluster)
        plan, _ = spec.resolve(cluster, Options(user="u", namespace="ns"))
        if cluster.profile.platform == "slurm":
            text, _ = artifact_text(plan, spec, cluster)
    except ManifestoError:
        return False  # a refusal (say, a Slurm layout it does not render) is not an artifact
    if cluster.profile.platform == "slurm":
        check_slurm(c, text, plan)
    else:
        check_kubernetes(c, plan, spec)
    return True


def test_parallelism_invariants_hold_in_every_artifact(clusters, tmp_path_factory):
    """At least 1,000 generated pairs render, and every one keeps the invariants."""
    rendered = []

    @settings(max_examples=int(os.environ.get("PROP_EXAMPLES", 1500)), deadline=None, derandomize=True,
              database=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    @given(c=layouts())
    def each(c):
        if _render_one(c, clusters, tmp_path_factory):
            rendered.append(c)

    each()
    if "PROP_EXAMPLES" not in os.environ:
        assert len(rendered) >= 1000
    assert {c["cluster"] for c in rendered} == set(CLUSTER_TEXT)
    assert {c["model"] for c in rendered} == set(MODELS)


def test_wide_moe_ranks_count_nodes_over_the_whole_world(clusters, tmp_path_factory):
    c = {"cluster": "ext4", "model": "Qwen/Qwen3-30B-A3B", "tp": 8, "pp": 1, "dp": 2, "ep": True, "size": 4,
         "replicas": 1, "routed": True, "pd": False}
    assert _render_one(c, clusters, tmp_path_factory)


def test_reader_counts_independent_servers():
    script = textwrap.dedent("""\
        args=(
          serve m
          --tensor-parallel-size 2
        )
        for rank in $(seq 0 3); do
          devices=$(IFS=,; echo "${gpus[*]:$((rank * 2)):2}")
        done
        """)
    assert vllm_gpus_per_pod(script) == (8, None)
    wide = 'RANK_NODES=2\nargs=(\n  --tensor-parallel-size 8\n)\nargs+=(--data-parallel-size 2)\n' \
           'args+=(--nnodes "$((2 * RANK_NODES))" --node-rank 0)\n'
    assert vllm_gpus_per_pod(wide) == (4, 2)
