"""What a real deployment needs from the renders (issue 11): profiler trace directories,
default monitoring sidecars, Slurm refusals of pod storage, compile caches, HF cache
placement, routing sizing, TORCH_CUDA_ARCH_LIST scope, and routed ranks wider than a pod."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from kit import cli_in_process as cli
from kit import plan_of, validate_manifests


def accelerators(allocation: str) -> str:
    """One 8-GPU H100 profile with the given allocation block (YAML under ``allocation:``)."""
    return ("accelerators:\n  default: h100\n  profiles:\n    h100:\n      gpus_per_node: 8\n"
            f"      allocation:\n        {allocation}\n      gpu_arch: h100\n      torch_cuda_arch_list: \"9.0\"\n")


ACCEL = accelerators("extended_resource: {resource_name: nvidia.com/gpu}")
SLURM_ACCEL = "platform: slurm\nslurm: {partition: gpu}\n" + accelerators("slurm: {gres: gpu}")
SHARED = """\
storage:
  shared_volume:
    persistentVolumeClaim:
      claimName: shared
  shared_mount_path: /mnt/shared
paths:
  log_root: /mnt/shared/{user}/logs/{release}
"""
ROLE = """\
release: parity
model: {id: Qwen/Qwen3-0.6B, image: vllm/vllm-openai:v0.33.0}
roles:
  - name: decode
    resources: {cpu: "8", memory: 32Gi}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def pair(tmp_path: Path, model: str, cluster: str, name: str = "c") -> tuple[Path, Path]:
    return write(tmp_path / "m.yaml", model), write(tmp_path / f"{name}.yaml", f"name: {name}\n" + cluster)


def plan(tmp_path: Path, model: str, cluster: str, **options):
    return plan_of(*pair(tmp_path, model, cluster), **options)[0]


def render(tmp_path: Path, model: str, cluster: str) -> list[dict]:
    m, c = pair(tmp_path, model, cluster)
    rc, out, err = cli("render", "manifest", str(m), "--cluster", str(c), "--user", "u", "--namespace", "ns")
    assert rc == 0, err
    validate_manifests(out)
    return [d for d in yaml.safe_load_all(out) if d]


def error(tmp_path: Path, model: str, cluster: str) -> str:
    m, c = pair(tmp_path, model, cluster)
    rc, out, err = cli("config", "validate", str(m), "--cluster", str(c), "--user", "u", "--namespace", "ns")
    assert rc == 1 and out == "" and err.count("\n") == 1, (rc, out, err)
    return err


def env_of(role) -> dict[str, object]:
    return {v.name: v for v in role.env}


def arg(role, flag: str) -> str | None:
    return next((a.value for a in role.args if a.flag == flag), None)


# ---- 1. torch profiler trace directory ----------------------------------------------------

PROFILED = ROLE + """\
    profiling: {profiler: torch, max_iterations: 20}
"""


def test_profiled_role_gets_a_trace_dir_under_its_log_dir(tmp_path):
    import json

    role = plan(tmp_path, PROFILED, ACCEL + SHARED).roles[0]
    config = json.loads(arg(role, "--profiler-config"))
    assert config == {"profiler": "torch", "max_iterations": 20,
                      "torch_profiler_dir": "/mnt/shared/u/logs/parity/decode/traces"}


def test_profiled_role_keeps_its_own_trace_dir(tmp_path):
    import json

    model = ROLE + "    profiling: {profiler: torch, torch_profiler_dir: /scratch/traces}\n"
    role = plan(tmp_path, model, ACCEL).roles[0]
    assert json.loads(arg(role, "--profiler-config"))["torch_profiler_dir"] == "/scratch/traces"


def test_cuda_profiler_needs_no_trace_dir(tmp_path):
    role = plan(tmp_path, ROLE + "    profiling: {profiler: cuda}\n", ACCEL).roles[0]
    assert arg(role, "--profiler-config") == '{"profiler":"cuda"}'


def test_torch_profiler_without_a_log_filesystem_is_refused(tmp_path):
    err = error(tmp_path, PROFILED, ACCEL)
    assert err == (
        f"error: {tmp_path / 'm.yaml'}:6:5: roles[0].profiling: the torch profiler needs a trace directory, "
        "and cluster 'c' declares no log filesystem to put one in (logging.root or paths.log_root); set "
        "profiling.torch_profiler_dir to a path on a persistent volume, or profile on a cluster with a log root\n")


def test_upstream_kimi_decode_profiler_has_a_trace_dir(shared_dir):
    """The upstream Kimi K3 1P-1D decode role is profiled; its config now names the trace dir."""
    import json

    root = shared_dir / "reference" / "upstream-examples"
    p = plan_of(root / "models" / "kimi-k3" / "1P-1D-DP4-TP4.yaml", root / "clusters" / "example-gb200.yaml")[0]
    config = json.loads(arg(p.role("decode"), "--profiler-config"))
    assert config["torch_profiler_dir"] == "/mnt/shared/u/logs/decode/traces"
    assert arg(p.role("prefill"), "--profiler-config") is None


# ---- 2. default monitoring sidecars -------------------------------------------------------


@pytest.mark.parametrize(("platform", "sidecars", "expected"), [
    ("kubernetes", None, ("dcgm-exporter", "node-exporter")),
    ("openshift", None, ("dcgm-exporter",)),
    ("openshift", "[dcgm-exporter, node-exporter]", ("dcgm-exporter",)),
    ("kubernetes", "[]", ()),
    ("kubernetes", "[node-exporter]", ("node-exporter",)),
])
def test_sidecar_defaults_per_platform(tmp_path, platform, sidecars, expected):
    model = ROLE + (f"runtime: {{sidecars: {sidecars}}}\n" if sidecars is not None else "")
    assert plan(tmp_path, model, f"platform: {platform}\n" + ACCEL).sidecars == expected


@pytest.mark.integration
def test_default_sidecars_render_with_their_configmap(tmp_path):
    docs = render(tmp_path, ROLE, ACCEL)
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert ("ConfigMap", "parity-dcgm-metrics") in names
    pod = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "parity-decode")
    containers = [c["name"] for c in pod["spec"]["template"]["spec"]["containers"]]
    assert containers == ["vllm", "dcgm-exporter", "node-exporter"]


def test_slurm_has_no_default_sidecars_but_refuses_explicit_ones(tmp_path):
    assert plan(tmp_path, ROLE, SLURM_ACCEL).sidecars == ()
    err = error(tmp_path, ROLE + "runtime: {sidecars: [dcgm-exporter]}\n", SLURM_ACCEL)
    assert "runtime.sidecars: dcgm-exporter: Kubernetes pod sidecars, which Slurm cannot run" in err


# ---- 9. Slurm refuses the spec's pod storage requests ---------------------------------------


@pytest.mark.parametrize(("field", "what", "default"), [
    ("ephemeral_storage", "ephemeral-storage request", "pod_defaults.ephemeral_storage"),
    ("shm_size", "/dev/shm size", "pod_defaults.shm_size"),
])
def test_slurm_refuses_pod_storage_requests(tmp_path, field, what, default):
    model = ROLE.replace('memory: 32Gi}', f'memory: 32Gi, {field}: 64Gi}}')
    err = error(tmp_path, model, SLURM_ACCEL)
    assert err == (
        f"error: {tmp_path / 'm.yaml'}:5:41: "
        f"roles[0].resources.{field}: 64Gi is a Kubernetes pod {what}, which Slurm cluster 'c' cannot apply; "
        f"remove it from the spec and set {default} in your Kubernetes cluster profiles instead, so one spec "
        "serves both platforms\n")


def test_kubernetes_keeps_pod_storage_requests(tmp_path):
    model = ROLE.replace('memory: 32Gi}', 'memory: 32Gi, ephemeral_storage: 64Gi}')
    role = plan(tmp_path, model, ACCEL).roles[0]
    assert role.resources.ephemeral_storage == "64Gi"


# ---- 3. persistent compile caches; 7. TORCH_CUDA_ARCH_LIST only for builds -----------------

CACHE_DIRS = {
    "FLASH_ATTENTION_CUTE_DSL_CACHE_DIR": "flash-attn-cute", "CUTE_DSL_CACHE_DIR": "cute-dsl",
    "TILELANG_CACHE_DIR": "tilelang", "FLASHINFER_WORKSPACE_BASE": "flashinfer", "HOME": "home",
}
JIT = "paths:\n  cache_root: /mnt/shared/{user}/jit/{release}\n"
NVME = SHARED.replace("  shared_mount_path: /mnt/shared\n", "  shared_mount_path: /mnt/shared\n  local_nvme_path: /mnt/nvme\n")


@pytest.mark.parametrize(("lws", "root", "source"), [
    ("{size: 2}", "/mnt/shared/u/jit/parity", "cluster paths.cache_root"),  # LeaderWorkerSet: the cluster path
    ("{size: 1}", "/var/cache/manifesto-jit", "pod JIT cache"),  # Deployment: the pod's emptyDir
])
def test_compile_caches_live_under_the_jit_cache(tmp_path, lws, root, source):
    model = ROLE.replace("resources:", f"lws: {lws}\n    parallelism: {{tp: 16}}\n    resources:") \
        if lws == "{size: 2}" else ROLE
    role = plan(tmp_path, model, ACCEL + SHARED.replace("paths:\n", JIT)).roles[0]
    env = env_of(role)
    for name, sub in CACHE_DIRS.items():
        assert (env[name].value, env[name].source) == (f"{root}/{sub}", source), name
        assert f"{root}/{sub}" in role.storage.cache_dirs
    assert (env["FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED"].value, env["FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED"].source) \
        == ("1", source)


def test_stateless_cluster_sets_no_cache_env(tmp_path):
    env = env_of(plan(tmp_path, ROLE, ACCEL).roles[0])
    assert not {"HOME", "TILELANG_CACHE_DIR", "FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED", "HF_HOME"} & set(env)


def test_explain_names_the_layer_of_each_new_env_var(tmp_path):
    m, c = pair(tmp_path, ROLE + "runtime: {vllm_env: /mnt/shared/u/vllm-envs/x}\n", ACCEL + NVME)
    rc, out, err = cli("explain", str(m), "--cluster", str(c), "--user", "u", "--namespace", "ns")
    assert rc == 0, err
    lines = {line.split("=", 1)[0].strip(): line for line in out.splitlines() if " = " in line}
    assert lines["HOME"].endswith("= /var/cache/manifesto-jit/home    [pod JIT cache]")
    assert lines["TILELANG_CACHE_DIR"].endswith("    [pod JIT cache]")
    assert lines["FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED"].endswith("= 1    [pod JIT cache]")
    assert lines["HF_HOME"].endswith("= /mnt/nvme/huggingface    [cluster storage.local_nvme_path]")
    assert lines["TORCH_CUDA_ARCH_LIST"].endswith("= 9.0    [accelerator h100 (vllm-envs build)]")


def test_torch_cuda_arch_list_only_with_a_vllm_envs_build(tmp_path):
    assert "TORCH_CUDA_ARCH_LIST" not in env_of(plan(tmp_path, ROLE, ACCEL + SHARED).roles[0])
    built = plan(tmp_path, ROLE, ACCEL + SHARED, vllm_env="/mnt/shared/u/vllm-envs/x").roles[0]
    assert env_of(built)["TORCH_CUDA_ARCH_LIST"].value == "9.0"


# ---- 4. Hugging Face cache placement ------------------------------------------------------


@pytest.mark.parametrize(("storage", "expected", "source"), [
    ("cache: {hf_home: /models/hf}\n" + SHARED, "/models/hf", "cluster cache.hf_home"),
    ("cache: {hf_host_path: /var/hf}\n" + SHARED, "/var/hf", "cluster cache.hf_host_path"),
    (NVME, "/mnt/nvme/huggingface", "cluster storage.local_nvme_path"),
    (SHARED, "/mnt/shared/huggingface", "cluster storage.shared_volume"),
])
def test_hf_cache_prefers_explicit_then_local_nvme_then_shared(tmp_path, storage, expected, source):
    hf = env_of(plan(tmp_path, ROLE, ACCEL + storage).roles[0])["HF_HOME"]
    assert (hf.value, hf.source) == (expected, source)


def test_local_nvme_volume_must_exist_on_the_node(tmp_path):
    """A node without the NVMe mount fails the pod instead of filling its root disk."""
    volumes = {v.name: v.source for v in plan(tmp_path, ROLE, ACCEL + NVME).roles[0].storage.volumes}
    assert volumes["local-nvme"] == {"hostPath": {"path": "/mnt/nvme", "type": "Directory"}}


# ---- 5. gateway proxy sizing; 6. routing component sizing ---------------------------------

ROUTED = ROLE + "routing: {kind: load_aware, target_role: decode}\nruntime: {sidecars: []}\n"
PD = """\
release: parity
topology: pd
model: {id: Qwen/Qwen3-0.6B, image: vllm/vllm-openai:v0.33.0}
runtime: {sidecars: []}
roles:
  - name: prefill
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
  - name: decode
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
"""


def _container(docs, kind: str, name: str, container: str, init: bool = False) -> dict:
    obj = next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)
    pod = obj["spec"]["template"]["spec"]
    return next(c for c in pod["initContainers" if init else "containers"] if c["name"] == container)


@pytest.mark.integration
def test_routing_components_default_to_production_sizes(tmp_path):
    docs = render(tmp_path, PD, ACCEL)
    epp = _container(docs, "Deployment", "parity-infpool-epp", "epp")
    envoy = _container(docs, "Deployment", "parity-infpool-epp", "envoy")
    proxy = _container(docs, "Deployment", "parity-decode", "routing-proxy", init=True)
    assert epp["resources"] == {"requests": {"cpu": "8", "memory": "16Gi"}, "limits": {"memory": "16Gi"}}
    assert envoy["resources"] == {"requests": {"cpu": "4", "memory": "8Gi"}, "limits": {"memory": "8Gi"}}
    assert envoy["args"][envoy["args"].index("--concurrency") + 1] == "8"
    assert proxy["resources"] == {"requests": {"cpu": "8", "memory": "16Gi"}, "limits": {"memory": "16Gi"}}
    config = yaml.safe_load(next(d for d in docs if d["metadata"]["name"] == "parity-envoy-config")["data"]["envoy.yaml"])
    client = config["static_resources"]["listeners"][0]
    picked = next(c for c in config["static_resources"]["clusters"] if c["name"] == "picked-endpoint")
    assert client["per_connection_buffer_limit_bytes"] == picked["per_connection_buffer_limit_bytes"] == 32 * 2**20


@pytest.mark.integration
def test_routing_sizing_is_cluster_configurable(tmp_path):
    sizing = """\
llm_d:
  sizing:
    endpoint_picker: {cpu: "12"}
    envoy: {memory: 2Gi, concurrency: 16, buffer_limit: 64Mi}
    routing_sidecar: {cpu: "2", memory: 4Gi}
    gateway_proxy: {cpu: "6", memory: 12Gi}
"""
    docs = render(tmp_path, PD, ACCEL + sizing)
    epp = _container(docs, "Deployment", "parity-infpool-epp", "epp")
    envoy = _container(docs, "Deployment", "parity-infpool-epp", "envoy")
    proxy = _container(docs, "Deployment", "parity-decode", "routing-proxy", init=True)
    assert epp["resources"]["requests"] == {"cpu": "12", "memory": "16Gi"}
    assert envoy["resources"]["requests"] == {"cpu": "4", "memory": "2Gi"}
    assert envoy["args"][envoy["args"].index("--concurrency") + 1] == "16"
    assert proxy["resources"]["requests"] == {"cpu": "2", "memory": "4Gi"}
    config = yaml.safe_load(next(d for d in docs if d["metadata"]["name"] == "parity-envoy-config")["data"]["envoy.yaml"])
    assert config["static_resources"]["listeners"][0]["per_connection_buffer_limit_bytes"] == 64 * 2**20
    gateway = render(tmp_path, PD.replace("topology: pd\n", "topology: pd\nrouting: {kind: pd, frontend: gateway}\n"),
                     ACCEL + sizing)
    options = next(d for d in gateway if d["metadata"]["name"] == "parity-gateway-options")
    patch = yaml.safe_load(options["data"]["deployment"])
    proxy = patch["spec"]["template"]["spec"]["containers"][0]
    assert proxy == {"name": "istio-proxy", "resources": {"requests": {"cpu": "6", "memory": "12Gi"},
                                                         "limits": {"cpu": "6", "memory": "12Gi"}}}
    assert yaml.safe_load(options["data"]["service"]) == {"spec": {"type": "ClusterIP"}}


def test_envoy_buffer_limit_must_fit_envoy(tmp_path):
    err = error(tmp_path, ROUTED, ACCEL + "llm_d:\n  sizing:\n    envoy: {buffer_limit: 4Gi}\n")
    assert err.endswith("llm_d.sizing.envoy.buffer_limit: 4Gi is outside Envoy's buffer limit range "
                        "(1 byte to just under 4Gi)\n"), err


# ---- 5b. the Gateway frontend's connection-pool DestinationRules -------------------------

GATEWAY = ROUTED.replace("target_role: decode}", "target_role: decode, frontend: gateway}")
DEFAULT_POOL = {"tcp": {"maxConnections": 256000},
                "http": {"http1MaxPendingRequests": 256000, "http2MaxRequests": 256000,
                         "maxRequestsPerConnection": 256000, "idleTimeout": "900s"}}


def _rules(docs) -> list[dict]:
    return [d for d in docs if d["kind"] == "DestinationRule"]


@pytest.mark.integration
def test_gateway_frontend_renders_connection_pools_for_the_picker_and_the_pool(tmp_path):
    import hashlib

    docs = render(tmp_path, GATEWAY, ACCEL)
    kinds = [d["kind"] for d in docs]
    # In the routing layer's order: after the picker, before the Gateway they serve.
    assert kinds.index("Deployment", kinds.index("InferencePool")) < kinds.index("DestinationRule")
    assert kinds[kinds.index("DestinationRule"):kinds.index("DestinationRule") + 4] == [
        "DestinationRule", "DestinationRule", "Gateway", "HTTPRoute"]
    epp, pool = _rules(docs)
    digest = hashlib.sha256(b"parity-infpool").hexdigest()[:8]
    assert (epp["metadata"]["name"], epp["spec"]["host"]) == (
        "parity-infpool-epp", "parity-infpool-epp.ns.svc.cluster.local")
    # Istio's generated Service for the InferencePool: <pool>-ip-<8 hex of sha256(pool)>.
    assert (pool["metadata"]["name"], pool["spec"]["host"]) == (
        "parity-infpool-ip", f"parity-infpool-ip-{digest}.ns.svc.cluster.local")
    gateway = next(d for d in docs if d["kind"] == "Gateway")
    for rule in (epp, pool):
        assert rule["apiVersion"] == "networking.istio.io/v1"
        assert rule["metadata"]["labels"] == {k: v for k, v in gateway["metadata"]["labels"].items()
                                              if k != "istio.io/enable-inference-extproc"}
        # The picker serves plaintext gRPC: no TLS origination, only the connection pool.
        assert rule["spec"]["trafficPolicy"] == {"connectionPool": DEFAULT_POOL}


@pytest.mark.integration
def test_standalone_frontend_renders_no_destination_rules(tmp_path):
    assert _rules(render(tmp_path, ROUTED, ACCEL)) == []


@pytest.mark.integration
def test_gateway_connection_pool_is_cluster_configurable(tmp_path):
    pool = """\
llm_d:
  sizing:
    gateway_connection_pool: {max_connections: 4096, http2_max_requests: 100000, idle_timeout: 1h30m}
"""
    docs = render(tmp_path, GATEWAY, ACCEL + pool)
    expected = {"tcp": {"maxConnections": 4096},
                "http": {**DEFAULT_POOL["http"], "http2MaxRequests": 100000, "idleTimeout": "1h30m"}}
    assert [r["spec"]["trafficPolicy"]["connectionPool"] for r in _rules(docs)] == [expected, expected]


@pytest.mark.parametrize(("setting", "message"), [
    ("max_connections: 0", "0 must be a whole number from 1 to 2147483647 (Istio's 32-bit connection-pool limits)"),
    ("http2_max_requests: 2147483648", "2147483648 must be a whole number from 1 to 2147483647"),
    ("http1_max_pending_requests: '100'", "'100' must be a whole number from 1 to 2147483647"),
    ("idle_timeout: 900", "900 is not a duration of at least 1ms"),
    ("idle_timeout: 0s", "'0s' is not a duration of at least 1ms"),
    ("idle_timeout: 1.5m", "'1.5m' is not a duration of at least 1ms; write whole numbers with units h, m, s, ms"),
    ("max_requests_per_conection: 1", "unknown key 'max_requests_per_conection'"),
])
def test_gateway_connection_pool_rejects_bad_values_in_one_line(tmp_path, setting, message):
    key = setting.split(":")[0]
    err = error(tmp_path, GATEWAY, ACCEL + f"llm_d:\n  sizing:\n    gateway_connection_pool: {{{setting}}}\n")
    assert f"llm_d.sizing.gateway_connection_pool.{key}: " in err and message in err, err
    assert "Traceback" not in err


def test_pool_service_name_follows_istio_truncation():
    import hashlib

    from manifesto.resolve import names

    long = "x" * 60
    digest = hashlib.sha256(f"{long}-infpool".encode()).hexdigest()[:8]
    assert names.pool_service(long) == f"{(long + '-infpool')[:51]}-ip-{digest}"
    assert len(names.pool_service(long)) == 63
    assert names.pool_service("a") == f"a-infpool-ip-{hashlib.sha256(b'a-infpool').hexdigest()[:8]}"


# ---- 8. routed DP ranks wider than one pod ------------------------------------------------

# A MoE model: vLLM runs a dense model's routed DP ranks as independent servers (tests/render/test_dp_mode.py).
WIDE = """\
release: wide
model: {id: Qwen/Qwen3-30B-A3B, image: vllm/vllm-openai:v0.33.0}
routing: {kind: load_aware}
runtime: {sidecars: []}
roles:
  - name: decode
    lws: {size: 4, replicas: 2}
    parallelism: {tp: 8, dp: 2}
"""
GB200 = ACCEL.replace("h100", "gb200").replace("gpus_per_node: 8", "gpus_per_node: 4")


def run_launch(tmp_path: Path, script: str, env: dict[str, str]) -> list[str]:
    """Run a launch script with a stand-in ``vllm`` that prints its arguments."""
    import os
    import subprocess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "vllm"
    stub.write_text('#!/bin/bash\nprintf "%s\\n" "$@"\n')
    stub.chmod(0o755)
    proc = subprocess.run(["bash", "-c", script], env={"PATH": f"{bin_dir}:{os.environ['PATH']}", **env},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split("\n")


def flags(argv: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for i, item in enumerate(argv):
        if item.startswith("--"):
            nxt = argv[i + 1] if i + 1 < len(argv) else ""
            out[item] = None if nxt.startswith("--") or not nxt else nxt
    return out


@pytest.mark.integration
def test_kubernetes_gives_each_wide_rank_its_own_group(tmp_path):
    p = plan(tmp_path, WIDE, GB200)
    lay = p.roles[0].layout
    assert (lay.nodes, lay.replicas, lay.rank_groups, lay.serving_nodes) == (2, 4, 2, (0,))
    group = env_of(p.roles[0])["LWS_GROUP_INDEX"]
    assert group.field_ref == "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']"
    docs = render(tmp_path, WIDE, GB200)
    lws = next(d for d in docs if d["kind"] == "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    scripts = {k: lws[k]["spec"]["containers"][0]["command"][2] for k in ("leaderTemplate", "workerTemplate")}
    # LWS group 3 = DP world 1 (groups 2, 3), rank 1; its DP head is group 2's leader.
    leader = "wide-decode-3.wide-decode.ns"
    for template, index in (("leaderTemplate", "0"), ("workerTemplate", "1")):
        f = flags(run_launch(tmp_path, scripts[template], {
            "LWS_WORKER_INDEX": index, "LWS_LEADER_ADDRESS": leader, "LWS_GROUP_INDEX": "3"}))
        assert (f["--data-parallel-rank"], f["--data-parallel-size"], f["--data-parallel-size-local"]) == ("1", "2", "1")
        assert f["--data-parallel-address"] == "wide-decode-2.wide-decode.ns"
        # vLLM 0.33 counts nodes across the whole DP world: 2 ranks x 2 pods, this is rank 1.
        assert (f["--nnodes"], f["--node-rank"], f["--master-addr"]) == ("4", str(2 + int(index)), leader)
        assert "--data-parallel-external-lb" in f
        if index == "0":
            assert f["--port"] == "8000" and "--headless" not in f
        else:
            assert "--headless" in f and "--port" not in f
    services = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "wide-decode-http"]
    assert services[0]["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"


@pytest.mark.integration
def test_slurm_lists_only_each_wide_rank_api_node(tmp_path):
    """On Slurm a replica is one allocation of all its ranks; the discovery file names only
    each rank's first node, and that node's launch serves HTTP while the next runs headless."""
    import re

    slurm = SLURM_ACCEL.replace("gpus_per_node: 8", "gpus_per_node: 4")
    p = plan(tmp_path, WIDE, slurm)
    lay = p.roles[0].layout
    assert (lay.nodes, lay.replicas, lay.rank_groups, lay.serving_nodes) == (4, 2, 1, (0, 2))
    m, c = pair(tmp_path, WIDE, slurm)
    rc, out, err = cli("render", "manifest", str(m), "--cluster", str(c), "--user", "u", "--namespace", "ns")
    assert rc == 0, err
    table = re.search(r"ENDPOINTS = \[\n(.*?)\n\]", out, re.S).group(1)
    assert [row.split(",")[1].strip() for row in table.split("\n")] == ["0", "2", "4", "6"]
    launch = re.search(r"<<'MANIFESTO_LAUNCH'[^\n]*\n(.*?)\nMANIFESTO_LAUNCH\n", out, re.S).group(1)
    hosts = "n0,n1,n2,n3"
    for index, rank, head in (("0", "0", "n0"), ("1", "0", "n0"), ("2", "1", "n2"), ("3", "1", "n2")):
        f = flags(run_launch(tmp_path, launch, {
            "LWS_WORKER_INDEX": index, "LWS_LEADER_ADDRESS": "n0", "MANIFESTO_HOSTS": hosts,
            "MANIFESTO_POD_UID": "1-decode-0", "HOSTNAME": f"n{index}", "SLURMD_NODENAME": f"n{index}"}))
        assert (f["--data-parallel-rank"], f["--master-addr"], f["--data-parallel-address"]) == (rank, head, "n0")
        assert ("--port" in f) == (index in ("0", "2")) and ("--headless" in f) == (index in ("1", "3"))
