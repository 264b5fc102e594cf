"""Slurm batch scripts: every example pair, the script's parts, and the scheduler's verdict.

* Every bundled model on clusters/example-slurm.yaml and every upstream model on the
  upstream Slurm clusters renders, or fails with a clear error (accelerator mismatch, or a
  Kubernetes-only request such as runtime.sidecars).
* Every script, and every bash script embedded in it, passes ``bash -n`` and shellcheck;
  the embedded resolver compiles; the embedded endpoint-picker config passes the project's
  EndpointPickerConfig schema and carries file discovery.
* ``@pytest.mark.slurm``: ``sbatch --test-only`` on the local Slurm kit accepts every script
  rendered against a copy of its cluster aimed at the kit's partitions (``gpu``: gpu:8;
  ``nvidia_gr100``: typed gpu:nvidia_gr100:4).
* The generated bash and Python is also executed here, outside Slurm, with a faked task
  environment: node placement, pod identity, IPv4 lookup, the endpoints file.

The real job runs (stand-in vLLM, P/D with stand-in router) are in test_slurm_jobs.py.
Golden scripts: tests/golden_slurm/<case>.sbatch (refresh with --update-golden).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import msgspec
import pytest
import yaml

import kit
from kit import REPO_ROOT, shellcheck

UPSTREAM = Path("reference") / "upstream-examples"
GOLDEN = Path(__file__).resolve().parent / "golden_slurm"
BUNDLED_SLURM_CLUSTER = REPO_ROOT / "clusters" / "example-slurm.yaml"
HEREDOC = re.compile(r"<<'(?P<tag>[A-Z_]+)'[^\n]*\n(?P<body>.*?)\n(?P=tag)\n", re.S)
BASH_PARTS = ("MANIFESTO_TASK", "MANIFESTO_LAUNCH")
MISMATCH = "is not offered by cluster"


# ---- helpers (also imported by test_slurm_jobs.py) -------------------------------------------


def models_under(root: Path) -> list[Path]:
    """Every model file (with or without .yaml); ``*-base.yaml`` files are only extended."""
    return sorted(p for p in (root / "models").rglob("*")
                  if p.is_file() and not p.name.startswith(".") and not p.name.endswith("-base.yaml"))


def load_pair(model, cluster):
    from manifesto.cluster import load_cluster
    from manifesto.spec import load_spec

    cl = load_cluster(str(cluster))
    return load_spec(str(model), cl), cl


def plan_of(model, cluster, **options):
    from manifesto.service import plan_for
    from manifesto.resolve.plan import Options

    spec, cl = load_pair(model, cluster)
    plan, _ = plan_for(spec, cl, Options(**{"user": "tester", "namespace": "test-ns", **options}))
    return plan, spec, cl


def render_plan(plan, spec, cl) -> str:
    from manifesto.render import expanded_inputs
    from manifesto.render.slurm import render_slurm

    return render_slurm(plan, *expanded_inputs(spec, cl))


def render_pair(model, cluster, **options) -> str:
    return render_plan(*plan_of(model, cluster, **options))


def artifact_text(model, cluster) -> str:
    """The artifact as the CLI writes it (its header names the options, so it regenerates)."""
    from manifesto.resolve.plan import Options
    from manifesto.service import render_text

    spec, cl = load_pair(model, cluster)
    return render_text(spec, cl, Options(user="tester", namespace="test-ns"))[0]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def heredocs(text: str) -> list[tuple[str, str]]:
    return [(m["tag"], m["body"]) for m in HEREDOC.finditer(text)]


def heredoc(text: str, tag: str, index: int = 0) -> str:
    return [body for t, body in heredocs(text) if t == tag][index]


def directives(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("#SBATCH")]


def components(text: str) -> list[dict[str, str]]:
    """The #SBATCH options of each heterogeneous component, as {option: value}."""
    out: list[dict[str, str]] = [{}]
    for line in directives(text):
        if line == "#SBATCH hetjob":
            out.append({})
            continue
        opt, _, value = line[len("#SBATCH "):].partition("=")
        out[-1][opt] = value
    return out


def check_epp_config(text: str) -> dict:
    from manifesto.render.slurm.routing import DISCOVERY_PLUGIN, ROUTER_DIR_TOKEN
    from manifesto.schema.routing import EndpointPickerConfig

    data = yaml.safe_load(text)
    EndpointPickerConfig.model_validate(data)
    plugin = next(p for p in data["plugins"] if p.get("name") == DISCOVERY_PLUGIN)
    assert plugin["type"] == "file-discovery"
    assert plugin["parameters"] == {"path": f"{ROUTER_DIR_TOKEN}/endpoints.json", "watchFile": False}
    discovery = data["dataLayer"]["discovery"]
    assert DISCOVERY_PLUGIN in (discovery.get("pluginRef"), discovery.get("endpoints", {}).get("pluginRef"))
    return data


def check_script(text: str) -> None:
    """bash -n + shellcheck of the script and of each embedded bash script; the embedded
    Python compiles; the embedded configs parse; sbatch sees every directive."""
    assert text.startswith("#!/bin/bash\n# Generated by:\n"), text[:200]
    shellcheck(text)
    parts = heredocs(text)
    assert {t for t, _ in parts} >= set(BASH_PARTS), "no task/launch scripts found"
    for tag, body in parts:
        if tag in BASH_PARTS:
            try:
                shellcheck(body + "\n")
            except AssertionError as exc:
                raise AssertionError(f"embedded {tag}:\n{exc}") from None
        elif tag == "MANIFESTO_PY":
            compile(body, "<resolver>", "exec")
        elif tag == "MANIFESTO_EPP":
            check_epp_config(body)
        elif tag == "MANIFESTO_ENVOY":
            assert "static_resources" in yaml.safe_load(body)
        else:
            raise AssertionError(f"unexpected here-document {tag}")
    # sbatch stops reading directives at the first command: only comments and blank lines before.
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("#SBATCH"))
    assert all(not line.strip() or line.startswith("#") for line in lines[1:last]), "a command precedes #SBATCH"
    assert "--device-ids" not in text, "vLLM must keep Slurm's CUDA_VISIBLE_DEVICES (no --device-ids)"


def kit_cluster(source: Path, tmp: Path, **slurm) -> Path:
    """A copy of a Slurm cluster profile aimed at the local kit: the partition follows the
    profile's GRES (typed ``gpu:nvidia_gr100`` -> partition nvidia_gr100, else gpu)."""
    data = yaml.safe_load(Path(source).read_text())
    gres = {str(((p.get("allocation") or {}).get("slurm") or {}).get("gres", "gpu"))
            for p in data["accelerators"]["profiles"].values()}
    s = data.setdefault("slurm", {})
    s["partition"] = "nvidia_gr100" if any("nvidia_gr100" in g for g in gres) else "gpu"
    s["time"] = "00:30:00"
    for key in ("account", "qos", "constraint"):
        s.pop(key, None)
    s.update(slurm)
    return write(tmp / f"kit-{Path(source).stem}.yaml", yaml.safe_dump(data, sort_keys=False))


def sbatch_test_only(script: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["sbatch", "--test-only", str(script)], capture_output=True, text=True,
                          cwd=script.parent, timeout=60)


def fits_partition(text: str) -> bool:
    """Whether every component's per-node CPU and memory request fits a node of its partition
    (the kit's nodes are smaller than some models' real requests)."""
    for opts in components(text):
        proc = subprocess.run(["sinfo", "-h", "-p", opts["--partition"], "-o", "%c %m"],
                              capture_output=True, text=True, check=True)
        node_cpus, node_mem = (int(v) for v in proc.stdout.split()[:2])
        if int(opts["--cpus-per-task"]) > node_cpus or int(opts["--mem"].rstrip("M")) > node_mem:
            return False
    return True


def _upstream_root() -> Path:
    return kit.shared_dir() / UPSTREAM


def _pairs() -> list:
    out = [pytest.param(m, BUNDLED_SLURM_CLUSTER, id=f"bundled/{m.relative_to(REPO_ROOT / 'models')}@example-slurm")
           for m in models_under(REPO_ROOT)]
    root = _upstream_root()
    if root.is_dir():
        for c in sorted((root / "clusters").glob("example-slurm*.yaml")):
            out += [pytest.param(m, c, id=f"upstream/{m.relative_to(root / 'models')}@{c.stem}")
                    for m in models_under(root)]
    else:
        out.append(pytest.param(None, None, id="upstream-examples-missing"))
    return out


PAIRS = _pairs()


pytestmark = pytest.mark.usefixtures("isolated_config")


def _render_or_error(model, cluster):
    """(script, None) or (None, error) for a pair; anything but a ManifestoError fails."""
    from manifesto.errors import ManifestoError

    try:
        return render_pair(model, cluster), None
    except ManifestoError as exc:
        return None, exc


def _assert_clear(exc, model, cluster) -> None:
    from manifesto.errors import IncompatiblePairError
    from manifesto.render.slurm import SlurmUnsupported

    if isinstance(exc, IncompatiblePairError):
        assert MISMATCH in exc.message
        return
    assert isinstance(exc, SlurmUnsupported), f"{model} on {cluster}: unexpected {type(exc).__name__}: {exc}"
    from manifesto.errors import format_path

    assert exc.path == format_path(exc.fields) and str(exc).startswith(exc.path + ": "), str(exc)
    assert exc.source in ("spec", "cluster") and exc.fields
    assert "Slurm" in exc.message and not exc.message.startswith(exc.path), exc.message


# ---- (a) every example pair ------------------------------------------------------------------


@pytest.mark.parametrize(("model", "cluster"), PAIRS)
def test_pair_renders_or_fails_clearly(model, cluster):
    if model is None:
        kit.require_shared(str(UPSTREAM))
    text, exc = _render_or_error(model, cluster)
    if exc is not None:
        _assert_clear(exc, model, cluster)
        return
    check_script(text)


def test_expected_outcomes():
    """The pairs that must render do, and upstream's explicit exporter sidecars are refused."""
    from manifesto.render.slurm import SlurmUnsupported

    for name in ("qwen3-0.6b.yaml", "qwen3-0.6b-pd.yaml", "aggregated.yaml"):
        text, exc = _render_or_error(REPO_ROOT / "models" / "qwen" / name, BUNDLED_SLURM_CLUSTER)
        assert exc is None, f"{name}: {exc}"
    root = kit.require_shared(str(UPSTREAM))
    _, exc = _render_or_error(root / "models" / "deepseek-v4" / "1P-EP8-1D-EP8.yaml",
                              root / "clusters" / "example-slurm.yaml")
    assert isinstance(exc, SlurmUnsupported) and exc.fields == ("runtime", "sidecars")
    assert "dcgm-exporter, node-exporter" in exc.message
    for model in ("qwen/slurm.yaml", "qwen/qwen3-0.6b-pd.yaml"):
        _, exc = _render_or_error(root / "models" / model, root / "clusters" / "example-slurm-gr100.yaml")
        assert exc is None, f"{model}: {exc}"
    # A Kubernetes pod storage request in the spec is refused, not silently dropped.
    _, exc = _render_or_error(root / "models" / "poolside" / "laguna-S-2.1-NVFP4",
                              root / "clusters" / "example-slurm-gr100.yaml")
    assert isinstance(exc, SlurmUnsupported) and exc.fields == ("roles", 0, "resources", "ephemeral_storage")


@pytest.mark.slurm
@pytest.mark.parametrize(("model", "cluster"), PAIRS)
def test_pair_passes_sbatch_test_only(model, cluster, slurm_cluster, tmp_path):
    if model is None:
        kit.require_shared(str(UPSTREAM))
    text, exc = _render_or_error(model, kit_cluster(cluster, tmp_path))
    if exc is not None:
        _assert_clear(exc, model, cluster)  # nothing to submit
        return
    proc = sbatch_test_only(write(tmp_path / "job.sbatch", text))
    if not fits_partition(text):
        # Larger nodes than the kit's: Slurm itself must refuse the rendered request.
        assert proc.returncode != 0 and "allocation failure" in proc.stderr, proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    assert "to start at" in proc.stderr


# ---- (b) runtimes ----------------------------------------------------------------------------

RUNTIME_MODELS = ["qwen3-0.6b.yaml", "qwen3-0.6b-pd.yaml", "aggregated.yaml"]
RUNTIMES = ["apptainer", "singularity", "pyxis", "native"]


def _runtime_cluster(tmp_path: Path, runtime: str, **slurm) -> Path:
    return kit_cluster(BUNDLED_SLURM_CLUSTER, tmp_path, runtime=runtime, **slurm)


@pytest.mark.parametrize("model", RUNTIME_MODELS)
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_runtime(runtime, model, tmp_path):
    text = render_pair(REPO_ROOT / "models" / "qwen" / model, _runtime_cluster(tmp_path, runtime))
    check_script(text)
    task = heredoc(text, "MANIFESTO_TASK")
    routed = "hetjob" in text or "MANIFESTO_EPP" in text
    if runtime in ("apptainer", "singularity"):
        assert f"exec {runtime} exec --no-eval --nv --bind /shared:/shared:rw docker://vllm/vllm-openai:" in task
        prefix = "APPTAINERENV_" if runtime == "apptainer" else "SINGULARITYENV_"
        assert f'export "{prefix}${{name}}=${{!name}}"' in task
        assert "CUDA_VISIBLE_DEVICES HF_TOKEN" in task
        if routed:
            # CPU-only router containers get no --nv; the router dir is bound read-only.
            assert f'{runtime} exec --no-eval --bind "$MANIFESTO_ROUTER_DIR:$MANIFESTO_ROUTER_DIR:ro" ' \
                   "--bind /shared:/shared:rw docker://ghcr.io/llm-d/llm-d-router-endpoint-picker:" in text
            assert "/app/epp --pool-name=" in text and "/usr/local/bin/envoy --log-level warn" in text
    elif runtime == "pyxis":
        assert "--container-image=vllm/vllm-openai:v" in text
        assert "--no-container-entrypoint" in text
        assert '--container-env="CUDA_VISIBLE_DEVICES,MANIFESTO_HOSTS,' in text
        assert "${HF_TOKEN:+,HF_TOKEN}" in text
        assert "--container-mounts=/shared:/shared:rw" in text
        assert task.rstrip().endswith('exec bash -c "$1"')
        if routed:
            assert "--container-image=ghcr.io#llm-d/llm-d-router-endpoint-picker:" in text
            assert "--container-image=docker.io#envoyproxy/envoy:" in text
            assert '--container-mounts="$MANIFESTO_ROUTER_DIR:$MANIFESTO_ROUTER_DIR:ro,/shared:/shared:rw"' in text
    else:
        assert "apptainer" not in text and "--container-image" not in text
        assert task.rstrip().endswith('exec bash -c "$1"')
        if routed:
            assert "\n  epp --pool-name=" in text and "\n  envoy --log-level warn" in text
        if "pd" in model:
            assert "\n  pd-sidecar --port=8000" in text


@pytest.mark.slurm
@pytest.mark.parametrize("model", RUNTIME_MODELS)
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_runtime_passes_sbatch_test_only(runtime, model, slurm_cluster, tmp_path):
    text = render_pair(REPO_ROOT / "models" / "qwen" / model, _runtime_cluster(tmp_path, runtime))
    proc = sbatch_test_only(write(tmp_path / "job.sbatch", text))
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slurm
def test_typed_gres_and_impossible_requests(slurm_cluster, tmp_path):
    """Typed GPUs land on the typed partition; asking the kit for more than it has is refused
    by Slurm itself (the rendered counts are what Slurm checks)."""
    root = kit.require_shared(str(UPSTREAM))
    typed = kit_cluster(root / "clusters" / "example-slurm-gr100.yaml", tmp_path)
    text = render_pair(REPO_ROOT / "models" / "qwen" / "qwen3-0.6b-pd.yaml", typed)
    assert "#SBATCH --gres=gpu:nvidia_gr100:1" in text and "#SBATCH --partition=nvidia_gr100" in text
    assert sbatch_test_only(write(tmp_path / "typed.sbatch", text)).returncode == 0
    wrong = text.replace("--partition=nvidia_gr100", "--partition=gpu")
    proc = sbatch_test_only(write(tmp_path / "wrong.sbatch", wrong))
    assert proc.returncode != 0 and "allocation failure" in proc.stderr, proc.stderr


# ---- (c) directives and steps ----------------------------------------------------------------

SLURM_CLUSTER = """\
name: unit-slurm
platform: slurm
slurm:
  partition: gpu
  time: "00:20:00"
  runtime: {runtime}
{extra}accelerators:
  default: gpu
  profiles:
    gpu:
      gpus_per_node: 8
      allocation:
        slurm: {{gres: "{gres}"}}
cache:
  hf_home: /shared/hf
paths:
  cache_root: /shared/{{user}}/jit/{{release}}
  log_root: /shared/{{user}}/logs/{{release}}
"""


def unit_cluster(tmp_path: Path, runtime: str = "native", gres: str = "gpu", extra: str = "") -> Path:
    return write(tmp_path / "cluster.yaml", SLURM_CLUSTER.format(runtime=runtime, gres=gres, extra=extra))


def unit_model(tmp_path: Path, text: str, name: str = "model.yaml") -> Path:
    return write(tmp_path / name, text)


DIRECT_3 = """\
release: three
model: {id: org/three}
routing: {kind: disabled}
roles:
  - name: decode
    lws: {size: 2, replicas: 3}
    parallelism: {tp: 8, dp: false}
    resources: {cpu: "2500m", memory: 100G}
"""


PD_MODEL = (REPO_ROOT / "models" / "qwen" / "qwen3-0.6b-pd.yaml").read_text()
ONE_GPU = (REPO_ROOT / "models" / "qwen" / "qwen3-0.6b.yaml").read_text()


def test_quantities_and_image_names():
    from manifesto.quantity import cpus, mebibytes
    from manifesto.render.slurm.runtime import apptainer_image, enroot_image

    assert [cpus(q) for q in ("8", "500m", "2.5", "0.1", "14")] == [8, 1, 3, 1, 14]
    assert [mebibytes(q) for q in ("32Gi", "128G", "1Mi", "1", "1.5Ki")] == [32768, 122071, 1, 1, 1]
    assert apptainer_image("vllm/vllm-openai:v1") == "docker://vllm/vllm-openai:v1"
    assert apptainer_image("/images/vllm.sif") == "/images/vllm.sif"
    assert apptainer_image("oras://reg/x:1") == "oras://reg/x:1"
    assert apptainer_image("vllm.sif") == "vllm.sif"
    assert enroot_image("ghcr.io/llm-d/epp:v0.11.0") == "ghcr.io#llm-d/epp:v0.11.0"
    assert enroot_image("docker://nvcr.io/nvidia/vllm:25.01") == "nvcr.io#nvidia/vllm:25.01"
    assert enroot_image("localhost:5000/x/y:1") == "localhost:5000#x/y:1"
    assert enroot_image("localhost/x") == "localhost#x"
    assert enroot_image("vllm/vllm-openai:v1") == "vllm/vllm-openai:v1"
    assert enroot_image("/sq/vllm.sqsh") == "/sq/vllm.sqsh"
    assert enroot_image("nvcr.io#nvidia/x") == "nvcr.io#nvidia/x"


def test_direct_replicas_are_a_job_array(tmp_path):
    text = render_pair(unit_model(tmp_path, DIRECT_3), unit_cluster(tmp_path, gres="gpu:h100"))
    check_script(text)
    [opts] = components(text)
    assert opts == {
        "--job-name": "manifesto-three", "--nodes": "2", "--ntasks": "2", "--ntasks-per-node": "1",
        "--cpus-per-task": "3", "--mem": "95368M", "--gres": "gpu:h100:4", "--time": "00:20:00",
        "--partition": "gpu", "--exclusive": "", "--export": "ALL", "--array": "0-2",
        "--output": "manifesto-three-%A_%a.out",
    }
    assert 'export MANIFESTO_POD_UID="${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}-${SLURM_ARRAY_TASK_ID:-0}"' in text
    assert "srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=3 \\\n" \
           "  --cpu-bind=none --kill-on-bad-exit=1 --wait=30 --export=ALL \\\n" \
           '  bash -c "$MANIFESTO_TASK" manifesto-decode "$MANIFESTO_LAUNCH"\n' in text
    assert "--het-group" not in text and "hetjob" not in text


def test_single_replica_is_array_element_zero(tmp_path):
    text = render_pair(REPO_ROOT / "models" / "qwen" / "qwen3-0.6b.yaml", BUNDLED_SLURM_CLUSTER)
    assert "#SBATCH --array=0-0" in text
    assert "#SBATCH --output=manifesto-qwen3-0-6b-%A_%a.out" in text
    assert "#SBATCH --cpus-per-task=8\n#SBATCH --mem=32768M\n#SBATCH --gres=gpu:1\n#SBATCH --time=04:00:00\n" \
           "#SBATCH --partition=gpu-demo\n#SBATCH --exclusive\n#SBATCH --export=ALL\n" in text


def test_pd_is_one_heterogeneous_allocation():
    text = render_pair(REPO_ROOT / "models" / "qwen" / "qwen3-0.6b-pd.yaml", BUNDLED_SLURM_CLUSTER)
    prefill, decode = components(text)
    common = {"--job-name": "manifesto-qwen3-0-6b-pd", "--nodes": "1", "--ntasks": "1",
              "--ntasks-per-node": "1", "--gres": "gpu:1", "--time": "04:00:00",
              "--partition": "gpu-demo", "--exclusive": "", "--export": "ALL"}
    # Component 0 (first role) also holds the router (8 CPU, 16Gi); decode its proxy (2 CPU, 4Gi).
    assert prefill == {**common, "--cpus-per-task": "16", "--mem": f"{32768 + 16384}M",
                       "--output": "manifesto-qwen3-0-6b-pd-%j.out"}
    assert decode == {**common, "--cpus-per-task": "10", "--mem": f"{32768 + 4096}M"}
    assert text.count("#SBATCH hetjob") == 1 and "--array" not in text
    for role, g in (("PREFILL", 0), ("DECODE", 1)):
        assert f'MANIFESTO_HOSTS="$HOSTLIST_{g}" MANIFESTO_IPS="$IPLIST_{g}" srun --het-group={g} --overlap ' \
               "--nodes=1 --ntasks=1 --ntasks-per-node=1 \\\n" \
               "  --cpus-per-task=8 --mem=32768M --gres=gpu:1 \\\n" \
               "  --cpu-bind=none --kill-on-bad-exit=1 --wait=30 --export=ALL \\\n" \
               f'  bash -c "$TASK_{role}" manifesto-{role.lower()} "$LAUNCH_{role}" &\n' in text
    assert 'srun --het-group=1 --overlap --nodelist="${HOSTS_1[0]}" --nodes=1 --ntasks=1 --ntasks-per-node=1 \\\n' \
           "  --cpus-per-task=2 --mem=4096M --gres=none \\\n" in text
    assert text.count('srun --het-group=0 --overlap --nodelist="${HOSTS_0[0]}" --nodes=1 --ntasks=1 \\\n'
                      "  --cpus-per-task=4 --mem=8192M --gres=none \\\n") == 2
    assert "wait -n || status=$?" in text and 'kill "${MANIFESTO_STEPS[@]}"' in text
    assert text.count('MANIFESTO_STEPS+=("$!")') == 5  # 2 roles, 1 proxy, EPP, Envoy
    # The decode proxy is the Kubernetes sidecar's command line.
    assert "/app/pd-sidecar --port=8000 --model-server-port=8200 --data-parallel-size=1 " \
           "--kv-connector=nixlv2 --secure-proxy=false &" in text
    assert ("--pool-name=qwen3-0-6b-pd-infpool --pool-namespace=test-ns "
            '--config-file="$MANIFESTO_ROUTER_DIR/epp/plugins.yaml" --grpc-port=9002 --grpc-health-port=9003 '
            "--metrics-port=9090 --secure-serving=false --metrics-endpoint-auth=false") in text
    assert "--concurrency 4 --disable-hot-restart --drain-strategy immediate --drain-time-s 1 " \
           '-c "$MANIFESTO_ROUTER_DIR/envoy.yaml"' in text
    envoy = yaml.safe_load(heredoc(text, "MANIFESTO_ENVOY"))
    assert envoy["static_resources"]["listeners"][0]["address"]["socket_address"]["port_value"] == 8081
    # NIXL's side channel is the node's IPv4 (the NixlConnector roles need it).
    assert 'export VLLM_NIXL_SIDE_CHANNEL_HOST="$MANIFESTO_NODE_IP"' in heredoc(text, "MANIFESTO_LAUNCH", 1)


def test_load_aware_is_a_regular_allocation():
    text = render_pair(REPO_ROOT / "models" / "qwen" / "aggregated.yaml", BUNDLED_SLURM_CLUSTER)
    [opts] = components(text)
    assert opts["--nodes"] == "2" and opts["--ntasks"] == "2"  # lws.replicas 2 x size 1
    assert opts["--cpus-per-task"] == "16" and opts["--mem"] == f"{131072 + 16384}M"
    assert "hetjob" not in text and "--het-group" not in text
    assert 'hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST")' in text
    assert 'export MANIFESTO_POD_UID="${MANIFESTO_JOB}-decode-$((node / 1))"' in heredoc(text, "MANIFESTO_TASK")
    assert "pd-sidecar" not in text


def test_launch_script_is_the_shared_one():
    """The per-node launch script is launch_script(plan, role, SLURM) with the env in front."""
    from manifesto.render.launch import launch_script
    from manifesto.render.slurm.task import SLURM

    plan, spec, cl = plan_of(REPO_ROOT / "models" / "qwen" / "qwen3-0.6b-pd.yaml", BUNDLED_SLURM_CLUSTER)
    text = render_plan(plan, spec, cl)
    for i, role in enumerate(plan.roles):
        storage = msgspec.structs.replace(role.storage, cleanup_on_crash=False)
        shared = launch_script(plan, msgspec.structs.replace(role, storage=storage), SLURM)
        body = heredoc(text, "MANIFESTO_LAUNCH", i) + "\n"
        assert body.startswith("set -euo pipefail\n")
        assert body.endswith(shared.split("\n", 1)[1]), f"role {role.name}: launch script differs"


def test_hf_token_is_forwarded_not_embedded(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_do_not_embed_42")
    for model in ("qwen3-0.6b.yaml", "qwen3-0.6b-pd.yaml"):
        text = render_pair(REPO_ROOT / "models" / "qwen" / model, BUNDLED_SLURM_CLUSTER)
        assert "hf_do_not_embed_42" not in text
        assert "export HF_TOKEN" not in text and "HF_TOKEN=" not in text
        assert "CUDA_VISIBLE_DEVICES HF_TOKEN" in heredoc(text, "MANIFESTO_TASK")


def test_caches_are_private_to_job_and_node(tmp_path):
    text = render_pair(unit_model(tmp_path, DIRECT_3), unit_cluster(tmp_path))
    launch = heredoc(text, "MANIFESTO_LAUNCH")
    for var, sub in (("VLLM_CACHE_ROOT", "vllm"), ("TRITON_CACHE_DIR", "triton"), ("XDG_CACHE_HOME", "xdg")):
        assert f'export {var}=/shared/tester/jit/three/{sub}/"${{MANIFESTO_POD_UID}}-${{HOSTNAME}}"' in launch
    assert "export HF_HOME=/shared/hf\n" in launch  # weights are shared, not isolated
    assert "clear_compiled_caches" not in launch  # private caches are never reused after a crash
    assert 'exec > >(tee -a "$LOG_DIR"/"${MANIFESTO_POD_UID}-${HOSTNAME}.log") 2>&1' in launch
    # Single-node roles use the cluster's paths.cache_root too (there is no pod emptyDir on Slurm).
    one = render_pair(REPO_ROOT / "models" / "qwen" / "qwen3-0.6b.yaml", BUNDLED_SLURM_CLUSTER)
    assert ('export VLLM_CACHE_ROOT=/shared/tester/jit-cache/b200/v0.33.0/qwen3-0-6b/vllm/'
            '"${MANIFESTO_POD_UID}-${HOSTNAME}"') in one
    assert "/var/cache/manifesto-jit" not in one


def test_setup_runs_on_the_batch_host_before_srun(tmp_path):
    extra = "  setup:\n    - module load apptainer/1.3\n    - export ENROOT_DATA_PATH=\"/tmp/e-${SLURM_JOB_ID}\"\n"
    for model in (ONE_GPU, PD_MODEL):
        text = render_pair(unit_model(tmp_path, model.replace("accelerator: b200\n", "")),
                           unit_cluster(tmp_path, extra=extra))
        check_script(text)
        a = text.index("set -eo pipefail\n# slurm.setup from the cluster profile")
        b = text.index("module load apptainer/1.3\nexport ENROOT_DATA_PATH=\"/tmp/e-${SLURM_JOB_ID}\"\nset -u\n")
        assert a < b < text.index("\nsrun ") and text.split("\n").count("module load apptainer/1.3") == 1


def test_routing_profile_is_merged_with_file_discovery():
    text = render_pair(REPO_ROOT / "models" / "qwen" / "aggregated.yaml", BUNDLED_SLURM_CLUSTER,
                       routing_profile="kv-aware")
    epp = heredoc(text, "MANIFESTO_EPP")
    data = check_epp_config(epp)
    source = (REPO_ROOT / "routing" / "kv-aware.yaml").read_text()
    profile = yaml.safe_load(source)
    assert data["plugins"][0]["name"] == "manifesto-file-discovery"
    assert data["plugins"][1:] == profile["plugins"]
    assert data["schedulingProfiles"] == profile["schedulingProfiles"]
    assert data["dataLayer"] == {"discovery": {"pluginRef": "manifesto-file-discovery"}}
    # The profile's own text (comments included) is kept; only the discovery lines are added.
    added = [line for line in epp.split("\n") if line not in source.split("\n")]
    assert len(added) == 5 + 4, added


def test_routing_profile_with_a_data_layer_is_merged(tmp_path):
    """A profile that already configures dataLayer (or uses flow style) is merged as data."""
    from manifesto.render.slurm import SlurmUnsupported

    profile = write(tmp_path / "routing" / "sources.yaml", (
        "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\n"
        "plugins: [{type: queue-scorer}, {type: max-score-picker}, {type: metrics-data-source, name: m}]\n"
        "schedulingProfiles: [{name: default, plugins: [{pluginRef: queue-scorer}, {pluginRef: max-score-picker}]}]\n"
        "dataLayer: {injectDefaults: false, sources: [{pluginRef: m, extractors: []}]}\n"))
    text = render_pair(REPO_ROOT / "models" / "qwen" / "aggregated.yaml", BUNDLED_SLURM_CLUSTER,
                       routing_profile=str(profile))
    data = check_epp_config(heredoc(text, "MANIFESTO_EPP"))
    assert [p.get("name", p["type"]) for p in data["plugins"]] == [
        "queue-scorer", "max-score-picker", "m", "manifesto-file-discovery"]
    assert data["dataLayer"] == {"injectDefaults": False, "sources": [{"pluginRef": "m", "extractors": []}],
                                 "discovery": {"pluginRef": "manifesto-file-discovery"}}
    taken = write(tmp_path / "routing" / "taken.yaml", profile.read_text().replace(
        "dataLayer: {", "dataLayer: {discovery: {pluginRef: m}, "))
    with pytest.raises(SlurmUnsupported, match="already sets dataLayer.discovery"):
        render_pair(REPO_ROOT / "models" / "qwen" / "aggregated.yaml", BUNDLED_SLURM_CLUSTER,
                    routing_profile=str(taken))


BARE = {"pluginRef": "manifesto-file-discovery"}
NESTED = {"endpoints": {"pluginRef": "manifesto-file-discovery"}}


@pytest.mark.parametrize(("release", "api_version", "expected"), [
    ("v0.9.0", "llm-d.ai/v1alpha1", BARE),
    ("v0.10.1", "llm-d.ai/v1alpha1", BARE),
    ("v0.11.0", "llm-d.ai/v1alpha1", BARE),
    ("main", "llm-d.ai/v1alpha1", BARE),
    ("v0.11.0", "inference.networking.x-k8s.io/v1alpha1", BARE),
    ("main", "llm-d.ai/v1", NESTED),
    ("v0.8.0", "llm-d.ai/v1alpha1", None),
])
def test_discovery_reference_follows_the_config_type(tmp_path, release, api_version, expected):
    """Strict decoding: v1alpha1 config types of every router release with file discovery
    take ``discovery.pluginRef`` (router main's still has no other field); only llm-d.ai/v1
    takes ``discovery.endpoints.pluginRef``. Releases before v0.9 have no file discovery."""
    from manifesto.render.slurm import SlurmUnsupported

    cluster = unit_cluster(tmp_path).read_text() + f"llm_d:\n  release: {release}\n"
    path = write(tmp_path / "cluster-release.yaml", cluster)
    profile = write(tmp_path / "routing" / "p.yaml", (
        f"apiVersion: {api_version}\nkind: EndpointPickerConfig\nplugins:\n- type: queue-scorer\n"
        "- type: max-score-picker\nschedulingProfiles:\n- name: default\n  plugins:\n"
        "  - pluginRef: queue-scorer\n  - pluginRef: max-score-picker\n"))
    model = REPO_ROOT / "models" / "qwen" / "aggregated.yaml"
    if expected is None:
        with pytest.raises(SlurmUnsupported, match="predates file discovery"):
            render_pair(model, path, routing_profile=str(profile))
        return
    text = render_pair(model, path, routing_profile=str(profile))
    assert yaml.safe_load(heredoc(text, "MANIFESTO_EPP"))["dataLayer"]["discovery"] == expected


def test_render_is_deterministic():
    for model in ("qwen3-0.6b.yaml", "qwen3-0.6b-pd.yaml", "aggregated.yaml"):
        path = REPO_ROOT / "models" / "qwen" / model
        assert render_pair(path, BUNDLED_SLURM_CLUSTER) == render_pair(path, BUNDLED_SLURM_CLUSTER)


def test_header_and_ignored_kubernetes_requests(shared_dir, tmp_path):
    """The provenance header opens the script; Kubernetes-only placement (same_topology_key) is
    listed as not applied, and the cluster's pod_defaults (Kubernetes settings) are left out."""
    from manifesto.render import expanded_inputs
    from manifesto.render.header import provenance_header

    model = shared_dir / UPSTREAM / "models" / "qwen" / "slurm.yaml"
    plan, spec, cl = plan_of(model, BUNDLED_SLURM_CLUSTER)
    text = render_plan(plan, spec, cl)
    header = provenance_header("render manifest", *expanded_inputs(spec, cl))
    assert text.startswith("#!/bin/bash\n" + header + "#SBATCH --job-name=")
    pinned = unit_model(tmp_path, ONE_GPU.replace("accelerator: b200\n", "").replace(
        "    lws: {size: 1}\n", "    lws: {size: 1, same_topology_key: example.com/rack}\n", 1))
    cluster = unit_cluster(tmp_path)
    cluster.write_text(cluster.read_text() + "pod_defaults: {ephemeral_storage: 64Gi, shm_size: 8Gi}\n")
    text = render_pair(pinned, cluster)
    assert "# Not applied on Slurm (Kubernetes-only requests):\n" \
           "#   role decode: lws.same_topology_key example.com/rack (Kubernetes pod affinity)\n" in text
    assert "64Gi" not in text.split("MANIFESTO_CLUSTER")[-1] and "8Gi" not in text.split("MANIFESTO_CLUSTER")[-1]


# ---- (d) refusals ----------------------------------------------------------------------------



@pytest.mark.parametrize(("model", "cluster_extra", "top", "fields", "words"), [
    (ONE_GPU.replace("runtime: {sidecars: []}", "runtime: {sidecars: [dcgm-exporter]}"), "", "",
     ("runtime", "sidecars"), "dcgm-exporter"),
    (ONE_GPU.replace("runtime: {sidecars: []}", "runtime: {sidecars: [], idle_shutdown: {timeout_minutes: 90}}"),
     "", "", ("runtime", "idle_shutdown"), "slurm.time"),
    (PD_MODEL.replace("routing: {kind: pd, target_role: decode}",
                      "routing: {kind: pd, target_role: decode, frontend: gateway}"), "", "",
     ("routing", "frontend"), "Gateway API"),
    (PD_MODEL, "  exclusive: false\n", "", ("slurm", "exclusive"), "exclusive: true"),
    (PD_MODEL, "  port: 9002\n", "", ("slurm", "port"), "endpoint picker"),
    (PD_MODEL, "  port: 8000\n", "", ("slurm", "port"), "prefill"),
    (ONE_GPU, "", "kueue: {local_queue: q}\n", ("kueue",), "partition"),
    (ONE_GPU.replace('memory: 32Gi}', 'memory: 32Gi, ephemeral_storage: 64Gi}'), "", "",
     ("roles", 0, "resources", "ephemeral_storage"), "pod_defaults.ephemeral_storage"),
    (ONE_GPU.replace('memory: 32Gi}', 'memory: 32Gi, shm_size: 16Gi}'), "", "",
     ("roles", 0, "resources", "shm_size"), "pod_defaults.shm_size"),
])
def test_kubernetes_only_requests_are_refused(tmp_path, model, cluster_extra, top, fields, words):
    from manifesto.render.slurm import SlurmUnsupported

    cluster = unit_cluster(tmp_path, extra=cluster_extra)
    if top:
        cluster.write_text(cluster.read_text() + top)
    model_text = model.replace("accelerator: b200\n", "")
    with pytest.raises(SlurmUnsupported) as info:
        render_pair(unit_model(tmp_path, model_text), cluster)
    assert info.value.fields == fields
    from manifesto.errors import format_path

    assert words in info.value.message and str(info.value).startswith(format_path(fields) + ": ")


def test_implicit_kubernetes_defaults_are_omitted(tmp_path):
    """Idle shutdown left at its default, or explicitly disabled, renders (and adds nothing)."""
    disabled = ONE_GPU.replace("runtime: {sidecars: []}", "runtime: {sidecars: [], idle_shutdown: {enabled: false}}")
    for text in (ONE_GPU, disabled):
        out = render_pair(unit_model(tmp_path, text.replace("accelerator: b200\n", "")), unit_cluster(tmp_path))
        assert "idle" not in out.split("#SBATCH", 1)[1].lower()


def test_vllm_env_must_be_inside_a_bind(tmp_path):
    from manifesto.render.slurm import SlurmUnsupported

    for runtime, ok in (("apptainer", False), ("native", True)):
        plan, spec, cl = plan_of(unit_model(tmp_path, ONE_GPU.replace("accelerator: b200\n", "")),
                                 unit_cluster(tmp_path, runtime=runtime,
                                              extra="  binds:\n    - {source: /shared, target: /shared}\n"))
        for path, inside in (("/opt/vllm-envs/x", False), ("/shared/u/vllm-envs/x", True)):
            role = msgspec.structs.replace(plan.roles[0], vllm_env=path)
            p = msgspec.structs.replace(plan, roles=(role,))
            if ok or inside:
                assert f"VLLM_ENV={path}" in render_plan(p, spec, cl)
            else:
                with pytest.raises(SlurmUnsupported, match="slurm.binds"):
                    render_plan(p, spec, cl)


def test_direct_serving_runs_one_role(tmp_path):
    from manifesto.render.slurm import SlurmUnsupported

    plan, spec, cl = plan_of(REPO_ROOT / "models" / "qwen" / "qwen3-0.6b.yaml", BUNDLED_SLURM_CLUSTER)
    two = msgspec.structs.replace(plan, roles=(plan.roles[0], msgspec.structs.replace(plan.roles[0], name="b")))
    with pytest.raises(SlurmUnsupported, match="one role per job"):
        render_plan(two, spec, cl)


# ---- (e) the generated bash and Python, executed outside Slurm -------------------------------

ROUTED_MULTINODE = """\
release: wide
model: {id: org/wide}
routing: {kind: load_aware, target_role: decode}
roles:
  - name: decode
    lws: {size: 2, replicas: 2}
    parallelism: {tp: 16, dp: false}
    resources: {cpu: "4", memory: 8Gi}
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
"""

MULTIPORT = """\
release: ranks
model: {id: org/ranks}
routing: {kind: load_aware, target_role: decode}
roles:
  - name: decode
    lws: {size: 1, replicas: 2}
    parallelism: {tp: 1, dp: 4, ep: true}
    resources: {cpu: "4", memory: 8Gi}
"""


def _run_task(text: str, env: dict[str, str], tag_index: int = 0) -> dict[str, str]:
    """Run the (native) task prelude with ``env`` and return the environment it hands on."""
    task = heredoc(text, "MANIFESTO_TASK", tag_index)
    proc = subprocess.run(["bash", "-c", task, "task", "env -0"], env={"PATH": os.environ["PATH"], **env},
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    out = dict(item.split("=", 1) for item in proc.stdout.split("\0") if "=" in item)
    return out


def test_task_prelude_places_each_node(tmp_path):
    text = render_pair(unit_model(tmp_path, ROUTED_MULTINODE), unit_cluster(tmp_path))
    check_script(text)
    hosts = "n1,n2,n3,n4"
    ips = "10.0.0.1,10.0.0.2,10.0.0.3,10.0.0.4"
    seen = []
    for name in ("n1", "n2", "n3", "n4"):
        env = _run_task(text, {"SLURMD_NODENAME": name, "MANIFESTO_HOSTS": hosts, "MANIFESTO_IPS": ips,
                               "MANIFESTO_JOB": "77", "CUDA_VISIBLE_DEVICES": "3,5"})
        seen.append((env["HOSTNAME"], env["LWS_WORKER_INDEX"], env["LWS_LEADER_ADDRESS"],
                     env["MANIFESTO_POD_UID"], env["MANIFESTO_NODE_IP"], env["CUDA_VISIBLE_DEVICES"]))
    assert seen == [
        ("n1", "0", "n1", "77-decode-0", "10.0.0.1", "3,5"),
        ("n2", "1", "n1", "77-decode-0", "10.0.0.2", "3,5"),
        ("n3", "0", "n3", "77-decode-1", "10.0.0.3", "3,5"),
        ("n4", "1", "n3", "77-decode-1", "10.0.0.4", "3,5"),
    ]
    proc = subprocess.run(["bash", "-c", heredoc(text, "MANIFESTO_TASK"), "task", "true"],
                          env={"PATH": os.environ["PATH"], "SLURMD_NODENAME": "elsewhere", "MANIFESTO_HOSTS": hosts,
                               "MANIFESTO_IPS": ips, "MANIFESTO_JOB": "77"}, capture_output=True, text=True)
    assert proc.returncode == 1 and "is not one of the role hosts" in proc.stderr


def test_launch_script_on_a_worker_node(tmp_path):
    """The shared launch script, driven by the Slurm platform: node 1 of replica 1 finds its
    rank head through MANIFESTO_HOSTS and starts headless; vLLM gets no --device-ids."""
    text = render_pair(unit_model(tmp_path, ROUTED_MULTINODE), unit_cluster(tmp_path))
    fake = write(tmp_path / "bin" / "vllm", "#!/bin/sh\nprintf '%s\\n' \"$@\"\n")
    fake.chmod(0o755)
    env = {"PATH": f"{fake.parent}:{os.environ['PATH']}", "LWS_WORKER_INDEX": "1", "LWS_LEADER_ADDRESS": "n3",
           "MANIFESTO_HOSTS": "n1,n2,n3,n4", "MANIFESTO_POD_UID": "77-decode-1", "HOSTNAME": "n4",
           "MANIFESTO_NODE_IP": "10.0.0.4"}
    launch = heredoc(text, "MANIFESTO_LAUNCH").replace("/shared/", f"{tmp_path}/shared/")
    proc = subprocess.run(["bash", "-c", launch], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    args = proc.stdout.split("\n")
    assert args[:2] == ["serve", "org/wide"]
    assert "--nnodes\n2\n--node-rank\n1\n--master-addr\nn3\n--headless" in proc.stdout
    assert "--device-ids" not in proc.stdout and "--port" not in proc.stdout
    assert (tmp_path / "shared/tester/logs/wide/decode/77-decode-1-n4.log").read_text() == proc.stdout


DIRECT_NIXL = """\
release: nixl-direct
model: {id: org/x}
routing: {kind: disabled}
roles:
  - name: decode
    lws: {size: 2}
    parallelism: {tp: 1, dp: 16}
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
"""


def test_direct_nixl_gets_node_addresses(tmp_path):
    """Direct serving with NIXL: the batch host resolves the hosts once (MANIFESTO_IPS) and
    each node's side channel uses its own IPv4; internal DP keeps node 0 the only API server."""
    text = render_pair(unit_model(tmp_path, DIRECT_NIXL), unit_cluster(tmp_path))
    check_script(text)
    start = text.index("manifesto_ipv4() {")
    function = text[start:text.index("\n}\n", start) + 3]
    proc = subprocess.run(["bash", "-c", function + "printf 'localhost\\nlocalhost\\n' | manifesto_ipv4"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and proc.stdout == "127.0.0.1\n127.0.0.1\n", proc.stderr
    proc = subprocess.run(["bash", "-c", function + "echo no-such-host.invalid | manifesto_ipv4"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0 and "cannot resolve no-such-host.invalid" in proc.stderr
    assert "export MANIFESTO_IPS=${ips//$'\\n'/,}" in text
    env = _run_task(text, {"SLURMD_NODENAME": "b", "MANIFESTO_HOSTS": "a,b", "MANIFESTO_IPS": "10.1.0.1,10.1.0.2",
                           "MANIFESTO_POD_UID": "9-0"})
    assert (env["LWS_WORKER_INDEX"], env["LWS_LEADER_ADDRESS"], env["MANIFESTO_NODE_IP"]) == ("1", "a", "10.1.0.2")
    launch = heredoc(text, "MANIFESTO_LAUNCH")
    assert 'export VLLM_NIXL_SIDE_CHANNEL_HOST="$MANIFESTO_NODE_IP"' in launch
    assert "--data-parallel-size-local 8" in launch and "--headless --data-parallel-start-rank" in launch


@pytest.mark.parametrize(("model", "expected"), [
    # Two replicas of two nodes: only each replica's first node serves HTTP.
    (ROUTED_MULTINODE, [(0, "decode-0-0-8000", "8000"), (2, "decode-1-0-8000", "8000")]),
    # Four DP ranks per node behind vLLM's multi-port supervisor: one endpoint per rank port.
    (MULTIPORT, [(r, f"decode-{r}-0-{p}", str(p)) for r in (0, 1) for p in (8000, 8001, 8002, 8003)]),
])
def test_resolver_writes_the_endpoints_file(tmp_path, model, expected):
    text = render_pair(unit_model(tmp_path, model), unit_cluster(tmp_path))
    program = heredoc(text, "MANIFESTO_PY")
    router = tmp_path / "router"
    nodes = 4 if model is ROUTED_MULTINODE else 2
    write(router / "hosts-0", "localhost\n" * nodes)
    proc = subprocess.run(["python3", "-c", program, str(router)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert (router / "ips-0").read_text() == "127.0.0.1\n" * nodes
    endpoints = json.loads((router / "endpoints.json").read_text())["endpoints"]
    assert [(e["name"], e["port"]) for e in endpoints] == [(n, p) for _, n, p in expected]
    for e, (node, _, _) in zip(endpoints, expected):
        assert e["address"] == "127.0.0.1" and e["namespace"] == "test-ns"
        assert e["labels"]["llm-d.ai/role"] == "decode"
        assert e["labels"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
        assert e["labels"]["app.kubernetes.io/instance"] in ("wide", "ranks")
    write(router / "hosts-0", "no-such-host.invalid\n")
    proc = subprocess.run(["python3", "-c", program, str(router)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "cannot resolve no-such-host.invalid" in proc.stderr


# ---- (f) golden scripts ----------------------------------------------------------------------

GOLDEN_CASES = {
    "qwen3-0.6b-direct": ("models/qwen/qwen3-0.6b.yaml", "clusters/example-slurm.yaml"),
    "qwen3-0.6b-pd": ("models/qwen/qwen3-0.6b-pd.yaml", "clusters/example-slurm.yaml"),
}


@pytest.mark.parametrize("case", sorted(GOLDEN_CASES))
def test_golden(case, update_golden, monkeypatch):
    model, cluster = GOLDEN_CASES[case]
    monkeypatch.chdir(REPO_ROOT)  # relative paths keep the header free of machine prefixes
    text = artifact_text(Path(model), Path(cluster))
    path = GOLDEN / f"{case}.sbatch"
    if update_golden:
        write(path, text)
        return
    assert path.is_file(), f"missing {path}; run with --update-golden"
    assert text == path.read_text(), f"{case} differs from {path}; inspect and run with --update-golden"
