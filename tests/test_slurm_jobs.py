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
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from kit import REPO_ROOT
from test_slurm_render import check_script, render_pair, write

pytestmark = [pytest.mark.slurm, pytest.mark.integration]

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

# Resolve the kit's node names (node1, gnode2, ...) to loopback inside the batch script's
# resolver, as a site's DNS would resolve its hosts.
SITECUSTOMIZE = """\
import re, socket
_getaddrinfo = socket.getaddrinfo
def getaddrinfo(host, *args, **kwargs):
    if isinstance(host, str) and re.fullmatch(r"g?node[0-9]+", host):
        host = "127.0.0.1"
    return _getaddrinfo(host, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
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
    logs = sorted(tmp_path.glob(pattern))
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
    script = write(tmp_path / "job.sbatch", text)

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
    job_id, state = sbatch_wait(write(tmp_path / "job.sbatch", text), cwd=tmp_path, timeout=100)
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


def test_pd_heterogeneous_job(standins, tmp_path, monkeypatch, sbatch_wait):
    site = write(tmp_path / "site" / "sitecustomize.py", SITECUSTOMIZE)
    monkeypatch.setenv("PYTHONPATH", str(site.parent))
    monkeypatch.setenv("STANDIN_NO_BIND", "1")
    monkeypatch.setenv("STANDIN_IDLE_SECONDS", "60")
    records_dir = tmp_path / "records"
    records_dir.mkdir()
    monkeypatch.setenv("STANDIN_RECORDS", str(records_dir))
    text = render_pair(REPO_ROOT / "models" / "qwen" / "qwen3-0.6b-pd.yaml", _kit_cluster(tmp_path, "native"))
    check_script(text)
    job_id, state = sbatch_wait(write(tmp_path / "job.sbatch", text), cwd=tmp_path, timeout=100)
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
    job_id, state = sbatch_wait(write(tmp_path / "job.sbatch", text), cwd=tmp_path, timeout=100)
    log = _job_log(tmp_path, f"manifesto-standin-hostile-{job_id}_0.out")
    assert state == "COMPLETED", log.read_text()
    [record] = _records(log)
    assert "--served-model-name" in record["args"], record
    assert record["args"][record["args"].index("--served-model-name") + 1] == f"x'; touch {marker}; '"
    assert f"--chat-template=$(touch {marker})" in record["args"]
    assert not marker.exists()
