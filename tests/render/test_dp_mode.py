"""Data-parallel launch mode by model kind: vLLM 0.33.0 refuses external DP for dense models.

vllm/engine/arg_utils.py (0.33.0) raises "Non-MoE models do not support external data
parallel mode. For external load balancing, launch independent vLLM instances without
--data-parallel-* arguments." whenever data_parallel_size > 1 with an external rank
(--data-parallel-rank, --data-parallel-external-lb, or the multi-port supervisor's children)
and the model has no experts. A dense model's routed DP ranks are therefore independent
servers; a MoE model keeps vLLM's external DP.
"""

from __future__ import annotations

import os
import subprocess
import textwrap

import msgspec
import pytest

import kit
from kit import plan_of

CLUSTERS = kit.REPO_ROOT / "clusters"


def _spec(tmp_path, model_id: str, parallelism: str, size: int = 1):
    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(f"""\
        release: dp
        model: {{id: {model_id}, image_ref: vllm.standard}}
        routing: {{kind: load_aware, target_role: decode}}
        roles:
          - name: decode
            lws: {{size: {size}}}
            parallelism: {parallelism}
        """))
    return path


def _script(plan):
    from manifesto.render.launch import launch_script

    return launch_script(plan, plan.roles[0])


@pytest.mark.parametrize(("model_id", "launch"), [
    ("Qwen/Qwen3-0.6B", "independent"),  # dense
    ("Qwen/Qwen3-30B-A3B", "multi-port"),  # MoE
])
def test_several_ranks_per_pod(tmp_path, model_id, launch):
    plan = plan_of(_spec(tmp_path, model_id, "{tp: 2, dp: 4}"), CLUSTERS / "example-h200.yaml")[0]
    lay = plan.roles[0].layout
    assert (lay.dp_mode, lay.launch, lay.public_ports) == ("external", launch, (8000, 8001, 8002, 8003))
    script = _script(plan)
    assert ("--data-parallel" in script) is (launch != "independent")


def test_dense_rank_per_pod_is_a_plain_server(tmp_path):
    plan = plan_of(_spec(tmp_path, "Qwen/Qwen3-0.6B", "{tp: 8, dp: 2}", size=2),
                   CLUSTERS / "example-h200.yaml")[0]
    script = _script(plan)
    assert plan.roles[0].layout.launch == "independent"
    assert "--data-parallel" not in script
    assert "\nargs+=(--port 8000)\n" in script and "NODE_INDEX" not in script


def test_dense_rank_wider_than_a_pod_counts_its_own_nodes(tmp_path):
    """TP8 on 4-GPU pods: each rank is its own two-pod group and its own server."""
    plan = plan_of(_spec(tmp_path, "Qwen/Qwen3-0.6B", "{tp: 8, dp: 2}", size=4),
                   CLUSTERS / "example-gb200.yaml", accelerator="gb200")[0]
    lay = plan.roles[0].layout
    assert (lay.launch, lay.nodes_per_rank, lay.rank_groups) == ("independent", 2, 2)
    script = _script(plan)
    assert "--data-parallel" not in script
    assert 'args+=(--nnodes "$RANK_NODES" --node-rank "$RANK_NODE" --master-addr "$RANK_HEAD")' in script
    assert "RANK_NODES=2\n" in script


def test_unknown_model_without_ep_runs_independent_servers(tmp_path):
    spec = _spec(tmp_path, "org/unknown", "{tp: 1, dp: 2}")
    assert plan_of(spec, CLUSTERS / "example-h200.yaml")[0].roles[0].layout.launch == "independent"
    spec = _spec(tmp_path, "org/unknown", "{tp: 1, dp: 2, ep: true}")
    assert plan_of(spec, CLUSTERS / "example-h200.yaml")[0].roles[0].layout.launch == "multi-port"


FAKE_VLLM = """\
#!/bin/bash
# Stands in for vllm: records its GPUs and port, then rank 1 fails while the others wait.
port=""
while [ $# -gt 0 ]; do [ "$1" = --port ] && port=$2; shift; done
echo "$CUDA_VISIBLE_DEVICES $port" >> "$RECORD"
if [ "$port" = 8001 ]; then sleep 0.5; exit 3; fi
sleep 30 &
trap 'echo "stopped $port" >> "$RECORD"; kill $!; exit 143' TERM
wait
"""


@pytest.mark.integration
def test_independent_servers_run_on_their_own_gpus_and_stop_together(tmp_path):
    plan = plan_of(_spec(tmp_path, "Qwen/Qwen3-0.6B", "{tp: 2, dp: 4}"), CLUSTERS / "example-h200.yaml")[0]
    role = plan.roles[0]
    role = msgspec.structs.replace(role, storage=msgspec.structs.replace(role.storage, log_dir=None,
                                                                         cleanup_on_crash=False))
    from manifesto.render.launch import launch_script

    script = launch_script(plan, role)
    kit.shellcheck(script)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "vllm").write_text(FAKE_VLLM)
    (bin_dir / "vllm").chmod(0o755)
    record = tmp_path / "record"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "RECORD": str(record),
           "CUDA_VISIBLE_DEVICES": "2,3,4,5,6,7,8,9"}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    lines = record.read_text().splitlines()
    assert sorted(line for line in lines if not line.startswith("stopped")) == [
        "2,3 8000", "4,5 8001", "6,7 8002", "8,9 8003"]
    assert sorted(line for line in lines if line.startswith("stopped")) == [
        "stopped 8000", "stopped 8002", "stopped 8003"]


@pytest.mark.integration
def test_slurm_script_of_independent_servers_passes_its_checks(tmp_path):
    """The batch script and the launch script it carries pass bash -n and shellcheck."""
    import re

    from manifesto.render import artifact_text
    from manifesto.resolve.plan import Options

    spec, cluster = kit.load_pair(_spec(tmp_path, "Qwen/Qwen3-0.6B", "{tp: 2, dp: 4}"), CLUSTERS / "example-slurm.yaml")
    plan, _ = spec.resolve(cluster, Options(user="u", namespace="ns"))
    assert plan.roles[0].layout.launch == "independent"
    text, suffix = artifact_text(plan, spec, cluster)
    assert suffix == ".sbatch" and "--data-parallel" not in text
    kit.shellcheck(text)
    launch = re.search(r"<<'MANIFESTO_LAUNCH'[^\n]*\n(.*?)\nMANIFESTO_LAUNCH\n", text, re.S).group(1)
    assert "for rank in $(seq 0 3); do" in launch
    kit.shellcheck(launch)


def _spec_with(tmp_path, parallelism: str, vllm: str, size: int = 1, model_id: str = "Qwen/Qwen3-30B-A3B"):
    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(f"""\
        release: dp
        model: {{id: {model_id}, image_ref: vllm.standard}}
        routing: {{kind: load_aware, target_role: decode}}
        roles:
          - name: decode
            lws: {{size: {size}}}
            parallelism: {parallelism}
            {vllm}
        """))
    return path


@pytest.mark.parametrize("vllm", ["vllm: {api_server_count: 4}", "vllm: {api-server-count: 2}",
                                  "vllm_raw_args: ['--api-server-count=4']"])
def test_api_server_count_refused_under_the_dp_supervisor(tmp_path, vllm):
    """vllm/entrypoints/launchers/dp_supervisor.py (0.33.0), validate_multi_port_external_lb_args:
    'if args.api_server_count not in (None, 1): raise ValueError(... requires --api-server-count=1)'."""
    from manifesto.errors import ResolveError

    with pytest.raises(ResolveError) as err:
        plan_of(_spec_with(tmp_path, "{tp: 2, dp: 4}", vllm), CLUSTERS / "example-h200.yaml")
    assert "api_server_count = " in err.value.message and "dp_supervisor.py" in err.value.message
    field = "vllm_raw_args" if "raw" in vllm else "vllm."
    assert f"roles[0].{field}" in str(err.value.path) or field in str(err.value)


def test_api_server_count_one_is_accepted_under_the_dp_supervisor(tmp_path):
    plan = plan_of(_spec_with(tmp_path, "{tp: 2, dp: 4}", "vllm: {api_server_count: 1}"),
                   CLUSTERS / "example-h200.yaml")[0]
    assert plan.roles[0].layout.launch == "multi-port"


def test_api_server_count_refused_with_headless_pods(tmp_path):
    """vllm/entrypoints/cli/serve.py (0.33.0): '--api-server-count=N cannot be used with
    --headless'; a rank two pods wide runs its second pod headless."""
    from manifesto.errors import ResolveError

    spec = _spec_with(tmp_path, "{tp: 16, dp: 2}", "vllm: {api_server_count: 2}", size=4)
    with pytest.raises(ResolveError, match="--headless"):
        plan_of(spec, CLUSTERS / "example-h200.yaml")
