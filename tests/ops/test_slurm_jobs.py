"""Rendered batch scripts run as real jobs on the local Slurm kit, with stand-in programs.

All kit "nodes" are this machine: they share one network stack, so the stand-ins bind only
127.0.0.1 and only where they must (the API node of direct serving, on a free port chosen
here), headless nodes bind nothing, and every stand-in ends after a bounded time.

* direct serving, native runtime, one replica over two nodes: the API node answers /health
  and /v1/models while the job runs; the job COMPLETES; the log shows both nodes' flags.
* direct serving, Pyxis runtime (the kit's Pyxis stub accepts the options and runs the task
  on the host): two replicas as a job array; the container options reach srun.
* P/D, native runtime: one heterogeneous job with both roles, the decode proxy and the
  router; the endpoint-picker stand-in reads its config and the endpoints file written on
  the batch host, then ends, which ends the job (shared lifetime).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from kit import REPO_ROOT, shared_dir
from test_slurm_render import check_script, render_pair, write

# One xdist worker runs every real job: stand-in servers bind fixed ports (8000...) on loopback.
pytestmark = [pytest.mark.slurm, pytest.mark.integration, pytest.mark.xdist_group("slurm-jobs")]

STANDIN = """\
#!{python}
# Stand-in for vllm / epp / envoy / pd-sidecar: logs what it was started with, then behaves.
import http.server, json, os, sys, threading, time

prog = os.path.basename(sys.argv[0])
args = sys.argv[1:]
env = os.environ
info = {{"prog": prog, "args": args, "slurmd": env.get("SLURMD_NODENAME"), "host": env.get("HOSTNAME"),
        "worker": env.get("LWS_WORKER_INDEX"), "leader": env.get("LWS_LEADER_ADDRESS"),
        "uid": env.get("MANIFESTO_POD_UID"), "cvd": env.get("CUDA_VISIBLE_DEVICES"),
        "cache": env.get("VLLM_CACHE_ROOT"), "nixl": env.get("VLLM_NIXL_SIDE_CHANNEL_HOST"),
        "hf_token": env.get("HF_TOKEN"), "array": env.get("SLURM_ARRAY_TASK_ID"),
        "pyxis": {{k: v for k, v in env.items() if k.startswith("FAKE_PYXIS_")}}}}


def value(flag):
    for a in args:
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return args[args.index(flag) + 1]


if prog == "epp":
    config_path = value("--config-file")
    config = open(config_path).read()
    endpoints_path = os.path.join(os.path.dirname(os.path.dirname(config_path)), "endpoints.json")
    info["config_has_discovery"] = "file-discovery" in config and endpoints_path in config
    info["endpoints"] = json.load(open(endpoints_path))["endpoints"]
    info["router_dir"] = os.path.dirname(os.path.dirname(config_path))
elif prog == "envoy":
    info["config_exists"] = os.path.isfile(value("-c"))
print("STANDIN " + json.dumps(info, sort_keys=True), flush=True)
if env.get("STANDIN_RECORDS"):  # concurrent steps may interleave long lines in the job log
    with open(os.path.join(env["STANDIN_RECORDS"], f"{{prog}}-{{os.getpid()}}.json"), "w") as f:
        json.dump(info, f)

if prog == "epp":
    time.sleep(float(env.get("STANDIN_EPP_SECONDS", "5")))
    sys.exit(0)  # ends the routed job: every step shares one lifetime
if prog != "vllm" or "--headless" in args or env.get("STANDIN_NO_BIND"):
    time.sleep(float(env.get("STANDIN_IDLE_SECONDS", "3")))
    sys.exit(0)

port = int(env.get("STANDIN_PORT", value("--port"))) + int(env.get("SLURM_ARRAY_TASK_ID") or 0)
asked = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            body = b""
        elif self.path == "/v1/models":
            body = json.dumps({{"object": "list", "data": [{{"id": args[1], "object": "model"}}]}}).encode()
            asked.set()
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(f"STANDIN-SERVING 127.0.0.1:{{port}}", flush=True)
if env.get("STANDIN_NO_WAIT"):
    time.sleep(1)
    ok = True
else:
    ok = asked.wait(float(env.get("STANDIN_SERVE_SECONDS", "40")))
time.sleep(0.3)
server.shutdown()
sys.exit(0 if ok else 3)
"""

KIT_CLUSTER = """\
name: kit-{runtime}
platform: slurm
slurm:
  partition: gpu
  time: "00:05:00"
  runtime: {runtime}
  binds:
    - {{source: {root}, target: {root}}}
accelerators:
  default: fake
  profiles:
    fake:
      gpus_per_node: 8
      allocation:
        slurm: {{gres: gpu}}
cache:
  hf_home: {root}/hf
paths:
  cache_root: {root}/jit/{{release}}
  log_root: {root}/logs/{{release}}
"""

TWO_NODES = """\
release: standin-2node
model: {id: test/standin-model}
routing: {kind: disabled}
runtime: {sidecars: []}
roles:
  - name: decode
    lws: {size: 2}
    parallelism: {tp: 2, dp: false}
    resources: {cpu: "1", memory: 1Gi}
"""

TWO_REPLICAS = TWO_NODES.replace("standin-2node", "standin-array").replace(
    "lws: {size: 2}", "lws: {size: 1, replicas: 2}").replace("tp: 2", "tp: 1")


@pytest.fixture
def standins(tmp_path, monkeypatch):
    """Stand-in programs first on PATH (sbatch --export=ALL carries it to every task)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("vllm", "epp", "envoy", "pd-sidecar"):
        path = write(bin_dir / name, STANDIN.format(python=sys.executable))
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(sys.executable).parent}:{os.environ['PATH']}")
    for name in ("STANDIN_PORT", "STANDIN_NO_BIND", "STANDIN_NO_WAIT", "STANDIN_RECORDS", "HF_TOKEN", "PYTHONPATH"):
        monkeypatch.delenv(name, raising=False)
    return bin_dir


def _job_script(tmp_path: Path, text: str) -> Path:
    """The batch script in tmp_path, with its log directory made (as `slurm submit` does)."""
    from manifesto.ops.slurm import script_log_dir

    os.makedirs(script_log_dir(text), exist_ok=True)
    return write(tmp_path / "job.sbatch", text)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _records(log: Path) -> list[dict]:
    return [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines()
            if line.startswith("STANDIN {")]


def _kit_cluster(tmp_path: Path, runtime: str) -> Path:
    return write(tmp_path / f"cluster-{runtime}.yaml", KIT_CLUSTER.format(runtime=runtime, root=tmp_path))


def _job_log(tmp_path: Path, pattern: str) -> Path:
    logs = sorted((tmp_path / "logs").rglob(pattern))
    assert logs, f"no {pattern} in {tmp_path}: {sorted(p.name for p in tmp_path.iterdir())}"
    return logs[0]


def _poll(port: int, deadline: float, found: dict) -> None:
    """Ask the API node for /health, then /v1/models (which lets the stand-in finish)."""
    base = f"http://127.0.0.1:{port}"
    while time.monotonic() < deadline and "models" not in found:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as r:
                found["health"] = r.status
            with urllib.request.urlopen(base + "/v1/models", timeout=2) as r:
                found["models"] = json.loads(r.read())
        except OSError:
            time.sleep(0.2)


def test_two_node_direct_job(standins, tmp_path, monkeypatch, sbatch_wait):
    port = _free_port()
    monkeypatch.setenv("STANDIN_PORT", str(port))
    text = render_pair(write(tmp_path / "model.yaml", TWO_NODES), _kit_cluster(tmp_path, "native"))
    check_script(text)
    script = _job_script(tmp_path, text)

    found: dict = {}
    poller = threading.Thread(target=_poll, args=(port, time.monotonic() + 90, found), daemon=True)
    poller.start()
    job_id, state = sbatch_wait(script, cwd=tmp_path, timeout=100)
    poller.join(timeout=5)
    log = _job_log(tmp_path, f"manifesto-standin-2node-{job_id}_0.out")
    assert state == "COMPLETED", log.read_text()
    assert found.get("health") == 200, found
    assert found["models"]["data"][0]["id"] == "test/standin-model"

    nodes = sorted(_records(log), key=lambda r: int(r["worker"]))
    assert [r["worker"] for r in nodes] == ["0", "1"], log.read_text()
    leader = nodes[0]["slurmd"]
    assert nodes[1]["slurmd"] != leader
    for i, r in enumerate(nodes):
        assert r["prog"] == "vllm" and r["host"] == r["slurmd"] and r["leader"] == leader
        assert r["uid"] == f"{job_id}-0"
        assert r["cvd"] == "0"  # Slurm's CUDA_VISIBLE_DEVICES, passed through unchanged
        assert r["cache"] == f"{tmp_path}/jit/standin-2node/vllm/{job_id}-0-{r['slurmd']}"
        assert r["args"][:4] == ["serve", "test/standin-model", "--tensor-parallel-size", "2"]
        assert r["args"][-7:-1] == ["--nnodes", "2", "--node-rank", str(i), "--master-addr", leader] or \
            r["args"][-8:-2] == ["--nnodes", "2", "--node-rank", str(i), "--master-addr", leader]
        assert "--device-ids" not in r["args"]
    assert nodes[0]["args"][-2:] == ["--port", "8000"]
    assert nodes[1]["args"][-1] == "--headless" and "--port" not in nodes[1]["args"]
    assert f"serves http://{leader}:8000" in log.read_text()
    # The launch script tees each node's output to its own log file.
    for r in nodes:
        node_log = tmp_path / "logs" / "standin-2node" / "decode" / f"{job_id}-0-{r['slurmd']}.log"
        assert "STANDIN {" in node_log.read_text()


def test_pyxis_job_array(standins, tmp_path, monkeypatch, sbatch_wait):
    monkeypatch.setenv("STANDIN_PORT", str(_free_port()))
    monkeypatch.setenv("STANDIN_NO_WAIT", "1")
    monkeypatch.setenv("HF_TOKEN", "hf_from_the_submitter")
    text = render_pair(write(tmp_path / "model.yaml", TWO_REPLICAS), _kit_cluster(tmp_path, "pyxis"))
    check_script(text)
    assert "hf_from_the_submitter" not in text and "#SBATCH --array=0-1" in text
    job_id, state = sbatch_wait(_job_script(tmp_path, text), cwd=tmp_path, timeout=100)
    assert state == "COMPLETED"
    for index in (0, 1):
        log = _job_log(tmp_path, f"manifesto-standin-array-{job_id}_{index}.out")
        [r] = _records(log)
        assert r["array"] == str(index) and r["worker"] == "0" and r["leader"] == r["slurmd"]
        assert r["uid"] == f"{job_id}-{index}"
        assert r["hf_token"] == "hf_from_the_submitter"
        assert r["args"][-2:] == ["--port", "8000"]
        pyxis = r["pyxis"]
        assert pyxis["FAKE_PYXIS_CONTAINER_IMAGE"].startswith("vllm/vllm-openai:"), pyxis
        assert pyxis["FAKE_PYXIS_CONTAINER_MOUNTS"] == f"{tmp_path}:{tmp_path}:rw"
        assert pyxis["FAKE_PYXIS_CONTAINER_ENV"] == \
            "CUDA_VISIBLE_DEVICES,MANIFESTO_HOSTS,MANIFESTO_POD_UID,HF_TOKEN"
        assert pyxis["FAKE_PYXIS_NO_CONTAINER_ENTRYPOINT"] == "1", pyxis


def test_pd_heterogeneous_job(kit_hosts, standins, tmp_path, monkeypatch, sbatch_wait):
    """The batch script resolves the node names itself (through /etc/hosts, as on a site)."""
    monkeypatch.setenv("STANDIN_NO_BIND", "1")
    monkeypatch.setenv("STANDIN_IDLE_SECONDS", "60")
    records_dir = tmp_path / "records"
    records_dir.mkdir()
    monkeypatch.setenv("STANDIN_RECORDS", str(records_dir))
    text = render_pair(REPO_ROOT / "models" / "qwen" / "qwen3-0.6b-pd.yaml", _kit_cluster(tmp_path, "native"))
    check_script(text)
    job_id, state = sbatch_wait(_job_script(tmp_path, text), cwd=tmp_path, timeout=100)
    log = _job_log(tmp_path, f"manifesto-qwen3-0-6b-pd-{job_id}.out")
    assert state == "COMPLETED", log.read_text()
    found = [json.loads(p.read_text()) for p in sorted(records_dir.glob("*.json"))]
    records = {r["prog"] + ("/" + r["uid"].rsplit("-", 2)[1] if r["prog"] == "vllm" else ""): r for r in found}
    assert len(found) == len(records), found
    assert set(records) == {"vllm/prefill", "vllm/decode", "pd-sidecar", "epp", "envoy"}, log.read_text()
    prefill, decode = records["vllm/prefill"], records["vllm/decode"]
    router_host = prefill["slurmd"]
    assert decode["slurmd"] != router_host  # one component per role, whole nodes
    assert prefill["uid"] == f"{job_id}-prefill-0" and decode["uid"] == f"{job_id}-decode-0"
    assert prefill["args"][-2:] == ["--port", "8000"] and decode["args"][-2:] == ["--port", "8200"]
    assert prefill["nixl"] == decode["nixl"] == "127.0.0.1"
    assert "--kv-transfer-config" in decode["args"]
    sidecar, epp, envoy = records["pd-sidecar"], records["epp"], records["envoy"]
    assert sidecar["slurmd"] == decode["slurmd"]
    assert sidecar["args"] == ["--port=8000", "--model-server-port=8200", "--data-parallel-size=1",
                               "--kv-connector=nixlv2", "--secure-proxy=false"]
    assert epp["slurmd"] == envoy["slurmd"] == router_host
    assert epp["config_has_discovery"] and envoy["config_exists"]
    assert "--pool-name=qwen3-0-6b-pd-infpool" in epp["args"] and "--secure-serving=false" in epp["args"]
    assert [(e["name"], e["address"], e["port"], e["labels"]["llm-d.ai/role"]) for e in epp["endpoints"]] == [
        ("prefill-0-0-8000", "127.0.0.1", "8000", "prefill"),
        ("decode-0-0-8000", "127.0.0.1", "8000", "decode"),
    ]
    text_log = log.read_text()
    assert "router (Envoy + endpoint picker) at http://127.0.0.1:8081" in text_log
    assert "a job step ended with status 0; stopping the others" in text_log
    assert not Path(epp["router_dir"]).exists(), "the batch host's router directory is removed at exit"


HOSTILE = """\
release: standin-hostile
model: {{id: test/standin-model}}
routing: {{kind: disabled}}
runtime: {{sidecars: []}}
roles:
  - name: decode
    parallelism: {{tp: 1}}
    resources: {{cpu: "1", memory: 1Gi}}
    env: {{HOSTILE: "$(touch {m}) `touch {m}`; touch {m}"}}
    vllm: {{served_model_name: "x'; touch {m}; '"}}
    vllm_raw_args: ["--chat-template='$(touch {m})'"]
"""


def test_hostile_values_never_run(standins, tmp_path, monkeypatch, sbatch_wait):
    """Payloads in env values, vLLM values and a quoted raw argument reach the model server as
    literal text: the job completes and the marker file they would create never appears."""
    marker = tmp_path / "pwned"
    monkeypatch.setenv("STANDIN_PORT", str(_free_port()))
    monkeypatch.setenv("STANDIN_NO_WAIT", "1")
    text = render_pair(write(tmp_path / "model.yaml", HOSTILE.format(m=marker)), _kit_cluster(tmp_path, "native"))
    check_script(text)
    job_id, state = sbatch_wait(_job_script(tmp_path, text), cwd=tmp_path, timeout=100)
    log = _job_log(tmp_path, f"manifesto-standin-hostile-{job_id}_0.out")
    assert state == "COMPLETED", log.read_text()
    [record] = _records(log)
    assert "--served-model-name" in record["args"], record
    assert record["args"][record["args"].index("--served-model-name") + 1] == f"x'; touch {marker}; '"
    assert f"--chat-template=$(touch {marker})" in record["args"]
    assert not marker.exists()


# ---- llm-d routing, served end to end ----------------------------------------------------------
#
# The stand-ins of tests/standins/llmd_fake.py serve the real ports and health paths of vLLM,
# the endpoint picker, Envoy and the P/D sidecar; the job is submitted and cancelled with the
# CLI. The batch script resolves the kit's node names through /etc/hosts (the kit's
# LOCAL_SLURM_ETC_HOSTS option), which maps them all to 127.0.0.1. P/D serves port 8000 on two
# nodes (prefill, and the decode proxy), which one network stack cannot do, so that test also
# gives each node its own loopback address, as a site's DNS gives each host its own.

FAKE = REPO_ROOT / "tests" / "standins" / "llmd_fake.py"

OWN_ADDRESSES = """\
import re, socket
_getaddrinfo = socket.getaddrinfo
def getaddrinfo(host, *args, **kwargs):
    m = isinstance(host, str) and re.fullmatch(r"(g?)node([0-9]+)", host)
    if m:
        host = f"127.0.{2 if m.group(1) else 1}.{m.group(2)}"
    return _getaddrinfo(host, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
"""

ROUTED_CLUSTER = """\
name: kit-routed
platform: slurm
slurm:
  partition: gpu
  time: "00:05:00"
  runtime: native
  exclusive: true
accelerators:
  default: fake
  profiles:
    fake:
      gpus_per_node: 8
      allocation:
        slurm: {{gres: gpu}}
cache:
  hf_home: {root}/hf
paths:
  cache_root: {root}/jit/{{release}}
  log_root: {root}/logs/{{release}}
"""

LOAD_AWARE = """\
release: fake-load-aware
model: {id: test/fake-model}
routing: {kind: load_aware, target_role: decode}
runtime: {sidecars: []}
roles:
  - name: decode
    lws: {size: 1}
    parallelism: {tp: 1, dp: false}
    resources: {cpu: "1", memory: 1Gi}
"""


@pytest.fixture
def kit_hosts(slurm_cluster):
    """The kit's node names in /etc/hosts (LOCAL_SLURM_ETC_HOSTS=1: no restart, only that line)."""
    proc = subprocess.run([str(shared_dir() / "slurm" / "start-local-slurm")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "LOCAL_SLURM_ETC_HOSTS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert socket.gethostbyname("node1") == "127.0.0.1"


@pytest.fixture
def llmd_fakes(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("vllm", "epp", "envoy", "pd-sidecar"):
        write(bin_dir / name, f"#!{sys.executable}\n" + FAKE.read_text()).chmod(0o755)
    records = tmp_path / "records"
    records.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_RECORDS", str(records))
    monkeypatch.setenv("STANDIN_LIFETIME", "150")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return records


def _manifesto(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "manifesto", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "MANIFESTO_NO_CACHE": "1"})


def _wait_for(what: str, check, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except OSError:
        return 0


def _serve_routed(tmp_path: Path, records: Path, spec: Path, want: set[str]):
    """Submit ``spec`` with the CLI, wait until every stand-in serves, send one completion
    through Envoy; (job, records by name, the answer, the job log). The job is cancelled after."""
    cluster = write(tmp_path / "cluster.yaml", ROUTED_CLUSTER.format(root=tmp_path))
    common = ("--cluster", str(cluster), "--user", "u", "-n", "ns")
    submitted = _manifesto("slurm", "submit", str(spec), *common, cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip()
    try:
        def all_started():
            found = {}
            for path in records.glob("*.json"):
                r = json.loads(path.read_text())
                found[r["prog"] + ("/" + r["uid"].rsplit("-", 2)[1] if r["prog"] == "vllm" else "")] = r
            return found if set(found) == want else None

        found = _wait_for(f"stand-ins {sorted(want)}", all_started)
        log = _wait_for("the job log", lambda: next((tmp_path / "logs").rglob(f"manifesto-*-{job}.out"), None))
        router = _wait_for("the router line", lambda: next(
            (line.split(" at ", 1)[1].split()[0] for line in log.read_text().splitlines() if "router (Envoy" in line),
            None))
        host = router.split("//", 1)[1].rsplit(":", 1)[0]
        assert _wait_for("Envoy /ready", lambda: _get(f"http://{host}:19001/ready") == 200)
        assert _get(f"http://{host}:9003/health") == 200
        request = urllib.request.Request(f"{router}/v1/completions", method="POST",
                                         data=json.dumps({"model": "m", "prompt": "hi", "max_tokens": 5}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=20) as r:
            answer = json.loads(r.read())
    finally:
        stopped = _manifesto("slurm", "stop", job, "--cluster", str(cluster), cwd=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    return job, found, answer, log


def test_pd_job_serves_a_request_through_the_proxy(kit_hosts, llmd_fakes, tmp_path, monkeypatch):
    site = write(tmp_path / "site" / "sitecustomize.py", OWN_ADDRESSES)
    monkeypatch.setenv("PYTHONPATH", str(site.parent))
    spec = REPO_ROOT / "models" / "qwen" / "qwen3-0.6b-pd.yaml"
    job, found, answer, log = _serve_routed(tmp_path, llmd_fakes, spec,
                                            {"vllm/prefill", "vllm/decode", "pd-sidecar", "epp", "envoy"})
    prefill, decode, sidecar = found["vllm/prefill"], found["vllm/decode"], found["pd-sidecar"]
    epp, envoy = found["epp"], found["envoy"]
    # Every process started with its flags, on its node, serving its ports.
    assert prefill["args"][:2] == ["serve", "Qwen/Qwen3-0.6B"] and prefill["args"][-2:] == ["--port", "8000"]
    assert decode["args"][-2:] == ["--port", "8200"] and "--kv-transfer-config" in decode["args"]
    assert (prefill["ports"], decode["ports"]) == ([8000], [8200])
    assert sidecar["args"] == ["--port=8000", "--model-server-port=8200", "--data-parallel-size=1",
                               "--kv-connector=nixlv2", "--secure-proxy=false"]
    assert sidecar["node"] == decode["node"] != prefill["node"] and sidecar["ports"] == [8000]
    assert epp["node"] == envoy["node"] == prefill["node"]
    assert epp["args"][:2] == ["--pool-name=qwen3-0-6b-pd-infpool", "--pool-namespace=ns"]
    assert epp["args"][3:] == ["--grpc-port=9002", "--grpc-health-port=9003", "--metrics-port=9090",
                               "--secure-serving=false", "--metrics-endpoint-auth=false"]
    assert epp["ports"] == [9002, 9003, 9090] and epp["pd"] is True
    assert [(e["labels"]["llm-d.ai/role"], e["address"], e["port"]) for e in epp["endpoints"]] == [
        ("prefill", prefill["address"], "8000"), ("decode", decode["address"], "8000")]
    assert envoy["args"][-2] == "-c" and envoy["ports"] == [8081, 19001, 19000]
    assert envoy["epp"] == f"{epp['address']}:9002"
    # The request went Envoy -> picker -> the decode node's proxy -> prefill, then decode.
    assert answer["served_by"] == {"prog": "vllm", "uid": f"{job}-decode-0", "node": decode["node"],
                                   "address": decode["address"], "port": 8200}, answer
    assert json.loads(answer["prefilled_by"])["uid"] == f"{job}-prefill-0"
    assert answer["max_tokens"] == 5
    assert f"router (Envoy + endpoint picker) at http://{prefill['address']}:8081" in log.read_text()


def test_load_aware_job_serves_a_request_through_the_router(kit_hosts, llmd_fakes, tmp_path):
    spec = write(tmp_path / "load-aware.yaml", LOAD_AWARE)
    job, found, answer, _ = _serve_routed(tmp_path, llmd_fakes, spec, {"vllm/decode", "epp", "envoy"})
    decode, epp, envoy = found["vllm/decode"], found["epp"], found["envoy"]
    assert decode["args"][:2] == ["serve", "test/fake-model"] and decode["args"][-2:] == ["--port", "8000"]
    assert decode["address"] == "127.0.0.1"  # node1 through /etc/hosts
    assert epp["pd"] is False and "--pool-name=fake-load-aware-infpool" in epp["args"]
    assert [(e["address"], e["port"]) for e in epp["endpoints"]] == [("127.0.0.1", "8000")]
    assert envoy["ports"] == [8081, 19001, 19000]
    assert answer["served_by"]["uid"] == f"{job}-decode-0" and answer["prefilled_by"] is None
