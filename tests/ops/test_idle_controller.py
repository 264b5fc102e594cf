"""The idle-shutdown controller script against fake vLLM metrics servers and a fake
Kubernetes API, both real HTTP servers on 127.0.0.1 in threads, with an injected clock.

The script is loaded from its file, the way it is shipped, not through the package.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from kit import REPO_ROOT

SCRIPT = REPO_ROOT / "manifesto" / "render" / "k8s" / "idle_controller.py"
NS = "ns"
SELECTOR = "app.kubernetes.io/instance=inst,app.kubernetes.io/component=model-server"
TIMEOUT = 600
SERVER_LIFETIME = 60.0  # every fake server stops itself after this long, whatever happens

PREFILL = "/apis/apps/v1/namespaces/ns/deployments/inst-prefill"
DECODE = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/ns/leaderworkersets/inst-decode"
EPP = "/apis/apps/v1/namespaces/ns/deployments/inst-infpool-epp"
GATEWAY = "/apis/gateway.networking.k8s.io/v1/namespaces/ns/gateways/inst-gateway"
SELF = "/apis/apps/v1/namespaces/ns/deployments/inst-idle-shutdown"
POOL = "/apis/inference.networking.k8s.io/v1/namespaces/ns/inferencepools/inst-infpool"


def _load_script():
    spec = importlib.util.spec_from_file_location("idle_controller_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


ic = _load_script()


# --------------------------------------------------------------------------- fake servers


class _Quiet(BaseHTTPRequestHandler):
    timeout = 5  # a stuck client cannot hold a handler thread forever

    def log_message(self, *args):
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 that runs in a thread and stops itself after a while."""

    def __init__(self, handler):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.watchdog = threading.Timer(SERVER_LIFETIME, self.httpd.shutdown)
        self.watchdog.daemon = True
        self.thread.start()
        self.watchdog.start()
        self.stopped = False

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.watchdog.cancel()
            self.httpd.shutdown()
            self.httpd.server_close()
            self.thread.join(5)


class _MetricsHandler(_Quiet):
    def do_GET(self):
        fake = self.server.owner
        fake.hits += 1
        if self.path != "/metrics":
            return self._send(404, b"not found", "text/plain")
        if fake.status != 200:
            return self._send(fake.status, b"boom", "text/plain")
        return self._send(200, fake.body().encode(), "text/plain; version=0.0.4")


class FakeMetrics(_Server):
    """One vLLM API server's /metrics, with the values the test sets."""

    def __init__(self):
        self.success, self.failure, self.running, self.waiting = 5.0, 1.0, 0.0, 0.0
        self.status = 200
        self.omit: set[str] = set()
        self.extra = ""
        self.hits = 0
        super().__init__(_MetricsHandler)

    def body(self) -> str:
        label = 'engine="0",model_name="Qwen/Qwen3 {x}",finished_reason="stop"'
        lines = [
            "# HELP vllm:request_success_total Count of successfully processed requests.",
            "# TYPE vllm:request_success_total counter",
            f"vllm:request_success_total{{{label}}} {self.success}",
            'vllm:request_success_total{engine="0",finished_reason="length"} 0.0',
            "vllm:request_success_created{engine=\"0\"} 1.7e9",
            f"vllm:request_failure_total{{engine=\"0\"}} {self.failure} 1700000000000",
            f"vllm:num_requests_running{{engine=\"0\"}} {self.running}",
            f"vllm:num_requests_waiting{{engine=\"0\"}} {self.waiting}",
            "vllm:num_requests_waiting_by_reason{engine=\"0\"} 7.0",
            "process_cpu_seconds_total 12.5",
        ]
        lines = [ln for ln in lines if not any(ln.startswith(o + "{") for o in self.omit)]
        return "\n".join(lines) + "\n" + self.extra


class _KubeHandler(_Quiet):
    def _handle(self, method: str):
        kube = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        url = urllib.parse.urlsplit(self.path)
        call = {"method": method, "path": url.path, "query": urllib.parse.parse_qs(url.query), "body": body,
                "auth": self.headers.get("Authorization"), "ctype": self.headers.get("Content-Type")}
        with kube.lock:
            kube.calls.append(call)
            status = next((s for rule in kube.fail if (s := rule(method, url.path, body))), None)
        if status:
            return self._send(status, json.dumps({"kind": "Status", "message": "injected failure"}).encode())
        if method == "GET" and url.path == f"/api/v1/namespaces/{NS}/pods":
            return self._pods(call)
        with kube.lock:
            if method == "GET" and url.path in kube.replicas:
                return self._send(200, json.dumps({"spec": {"replicas": kube.replicas[url.path]}}).encode())
            if method == "PATCH" and url.path in kube.replicas:
                kube.replicas[url.path] = body["spec"]["replicas"]
                return self._send(200, json.dumps({"spec": {"replicas": kube.replicas[url.path]}}).encode())
            if method == "PATCH" and url.path == kube.pool_path:
                kube.pool_annotations.update(body["metadata"]["annotations"])
                return self._send(200, json.dumps({"metadata": {"annotations": kube.pool_annotations}}).encode())
            if method == "DELETE" and url.path in kube.gateways:
                kube.gateways.discard(url.path)
                return self._send(200, json.dumps({"kind": "Status", "status": "Success"}).encode())
        return self._send(404, json.dumps({"kind": "Status", "message": "not found"}).encode())

    def _pods(self, call):
        kube = self.server.owner
        with kube.lock:
            pods = [dict(p) for p in kube.pods]
        page = int((call["query"].get("limit") or ["500"])[0])
        page = min(page, kube.page_size)
        start = int((call["query"].get("continue") or ["0"])[0])
        body = {"kind": "PodList", "metadata": {}, "items": pods[start:start + page]}
        if start + page < len(pods):
            body["metadata"]["continue"] = str(start + page)
        return self._send(200, json.dumps(body).encode())

    def do_GET(self):
        self._handle("GET")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_DELETE(self):
        self._handle("DELETE")


class FakeKube(_Server):
    """Pods, workload replica counts and a Gateway; every request is recorded."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls: list[dict] = []
        self.pods: list[dict] = []
        self.replicas = {PREFILL: 1, DECODE: 1, EPP: 1, SELF: 1}
        self.gateways = {GATEWAY}
        self.pool_annotations = {"manifesto.llm-d.ai/idle-shutdown-at": ""}  # of the InferencePool POOL
        self.pool_path = POOL
        self.fail: list = []  # callables (method, path, body) -> HTTP status or None
        self.page_size = 500
        super().__init__(_KubeHandler)

    def mutations(self) -> list[tuple]:
        with self.lock:
            return [(c["method"], c["path"], c["body"]) for c in self.calls if c["method"] in ("PATCH", "DELETE")]

    def clear(self) -> None:
        with self.lock:
            self.calls.clear()


def pod(name: str, role: str, *, ready: bool = True, worker: str | None = None, ip: str = "127.0.0.1",
        phase: str = "Running", deleting: bool = False) -> dict:
    labels = {"app.kubernetes.io/instance": "inst", "app.kubernetes.io/component": "model-server",
              "manifesto.llm-d.ai/role": role}
    if worker is not None:
        labels["leaderworkerset.sigs.k8s.io/worker-index"] = worker
    meta = {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta,
            "status": {"phase": phase, "podIP": ip,
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


class World:
    """A P/D instance: prefill Deployment (one API server), decode LWS of two pods where only
    worker 0 serves (two ports), an endpoint picker and a Gateway frontend."""

    def __init__(self, tmp_path: Path):
        self.kube = FakeKube()
        self.prefill = FakeMetrics()
        self.decode = [FakeMetrics(), FakeMetrics()]
        self.servers = [self.kube, self.prefill, *self.decode]
        self.kube.pods = [pod("inst-prefill-abc", "prefill"), pod("inst-decode-0", "decode", worker="0"),
                          pod("inst-decode-0-1", "decode", worker="1")]
        self.logs: list[str] = []
        token = tmp_path / "token"
        token.write_text("s3cret\n")
        self.env = {
            "NAMESPACE": NS,
            "POD_SELECTOR": SELECTOR,
            "TIMEOUT_SECONDS": str(TIMEOUT),
            "POLL_SECONDS": "60",
            "TARGETS": json.dumps({
                "prefill": {"ports": [self.prefill.port], "serving_worker_indices": None},
                "decode": {"ports": [m.port for m in self.decode], "serving_worker_indices": ["0"]},
            }),
            "EXPECTED_TARGETS": "3",
            "WORKLOADS": json.dumps([
                {"name": "inst-prefill", "path": PREFILL, "replicas": 1},
                {"name": "inst-decode", "path": DECODE, "replicas": 1},
                {"name": "inst-infpool-epp", "path": EPP, "replicas": 1},
            ]),
            "GATEWAY": json.dumps({"name": "inst-gateway", "path": GATEWAY}),
            "CONTROLLER": json.dumps({"name": "inst-idle-shutdown", "path": SELF}),
            "KUBERNETES_API": f"http://127.0.0.1:{self.kube.port}",
            "KUBERNETES_TOKEN_FILE": str(token),
            "KUBERNETES_CA_FILE": str(tmp_path / "no-ca.crt"),
            "HTTP_TIMEOUT_SECONDS": "3",
        }

    def metrics(self) -> list[FakeMetrics]:
        return [self.prefill, *self.decode]

    def controller(self, **env):
        config = ic.load_config({**self.env, **env})
        return ic.Controller(config, log=self.logs.append)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)
    try:
        yield w
    finally:
        w.stop()


def ready(world, **env):
    """A controller that has seen every API server at t=0 (the idle timer starts there)."""
    ctl, state = world.controller(**env), ic.State()
    assert ctl.run_once(state, 0.0) == "ready"
    return ctl, state


SHUTDOWN = [
    ("PATCH", PREFILL, {"spec": {"replicas": 0}}),
    ("PATCH", DECODE, {"spec": {"replicas": 0}}),
    ("PATCH", EPP, {"spec": {"replicas": 0}}),
    ("DELETE", GATEWAY, None),
    ("PATCH", SELF, {"spec": {"replicas": 0}}),
]


# --------------------------------------------------------------------------- the script itself


def test_script_is_standalone_stdlib_and_import_is_side_effect_free(capsys):
    tree = ast.parse(SCRIPT.read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
    assert imported - {"__future__"} <= set(sys.stdlib_module_names), imported
    threads = threading.active_count()
    _load_script()
    assert threading.active_count() == threads
    assert capsys.readouterr() == ("", "")
    assert "if __name__ == \"__main__\":\n    main()" in SCRIPT.read_text()


@pytest.mark.integration
def test_bad_configuration_exits_with_a_message():
    env = {"PATH": os.environ.get("PATH", ""), "NAMESPACE": NS}
    proc = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30,
                          check=False)
    assert proc.returncode == 2
    assert "configuration error: WORKLOADS is not set" in proc.stderr


@pytest.mark.parametrize(("change", "message"), [
    ({"EXPECTED_TARGETS": "0"}, "EXPECTED_TARGETS must be at least 1"),
    ({"EXPECTED_TARGETS": "two"}, "EXPECTED_TARGETS must be a whole number"),
    ({"TARGETS": "{}"}, "TARGETS must be a non-empty object"),
    ({"TARGETS": '{"decode": {"ports": []}}'}, "TARGETS['decode'].ports must be a non-empty list"),
    ({"WORKLOADS": "{"}, "WORKLOADS is not valid JSON"),
    ({"WORKLOADS": '[{"name": "x", "path": "relative"}]'}, "WORKLOADS[0] needs a name and an absolute API path"),
    ({"CONTROLLER": "null"}, "CONTROLLER must be an object"),
    ({"TIMEOUT_SECONDS": "-1"}, "TIMEOUT_SECONDS must be at least 0"),
    ({"POD_SELECTOR": ""}, "POD_SELECTOR is not set"),
])
def test_config_errors(world, change, message):
    with pytest.raises(ic.ConfigError) as err:
        ic.load_config({**world.env, **change})
    assert message in str(err.value)


def test_config_defaults(world):
    env = {k: v for k, v in world.env.items()
           if k not in ("POLL_SECONDS", "GATEWAY", "KUBERNETES_API", "KUBERNETES_TOKEN_FILE", "KUBERNETES_CA_FILE")}
    cfg = ic.load_config(env)
    assert cfg.poll_seconds == 60
    assert cfg.gateway is None
    assert cfg.api == "https://kubernetes.default.svc"
    assert cfg.token_file == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    assert cfg.ca_file == "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
    assert ic.load_config({**env, "GATEWAY": "null"}).gateway is None
    assert cfg.targets["decode"].serving_worker_indices == frozenset({"0"})


def test_parse_metrics_sums_samples_and_ignores_the_rest():
    text = (
        "# TYPE vllm:request_success_total counter\n"
        'vllm:request_success_total{model_name="a b}",reason="x\\"y"} 3\n'
        "vllm:request_success_total 2.5 1700000000000\n"
        "vllm:request_success_created 1.7e9\n"
        "vllm:num_requests_running{engine=\"1\"} 1\n"
        "vllm:num_requests_running{engine=\"2\"} 2\n"
        "vllm:num_requests_waiting_by_reason 9\n"
        "other_metric 4\n"
    )
    assert ic.parse_metrics(text.encode().splitlines(keepends=True)) == {
        "vllm:request_success_total": 5.5, "vllm:num_requests_running": 3.0}
    with pytest.raises(ic.MetricsError) as info:
        ic.parse_metrics(["vllm:num_requests_waiting NaN"])
    assert str(info.value) == 'vllm:num_requests_waiting is NaN'
    with pytest.raises(ic.MetricsError) as info:
        ic.parse_metrics(["vllm:num_requests_waiting{a=\"b\"} abc"])
    assert str(info.value) == "vllm:num_requests_waiting has a non-numeric value 'abc'"


def test_select_targets_keeps_ready_serving_pods_of_known_roles():
    targets = {"prefill": ic.RoleTargets((8000,), None), "decode": ic.RoleTargets((8200, 8201), frozenset({"0", "2"}))}
    pods = [
        pod("p-ready", "prefill", ip="10.0.0.1"),
        pod("p-unready", "prefill", ready=False),
        pod("p-pending", "prefill", phase="Pending"),
        pod("p-terminating", "prefill", deleting=True),
        pod("d-0", "decode", worker="0", ip="fd00::5"),
        pod("d-1", "decode", worker="1"),
        pod("d-2", "decode", worker="2", ip="10.0.0.3"),
        pod("d-nolabel", "decode"),
        pod("other", "router"),
    ]
    found = ic.select_targets(pods, targets)
    assert [(t.pod, t.port) for t in found] == [("d-0", 8200), ("d-0", 8201), ("d-2", 8200), ("d-2", 8201),
                                                ("p-ready", 8000)]
    assert found[0].url == "http://[fd00::5]:8200/metrics"
    assert found[-1].url == "http://10.0.0.1:8000/metrics"


# --------------------------------------------------------------------------- readiness


def test_waits_until_every_api_server_is_ready(world):
    world.kube.pods[1] = pod("inst-decode-0", "decode", worker="0", ready=False)
    ctl, state = world.controller(), ic.State()
    for now in (0.0, TIMEOUT * 2.0, TIMEOUT * 10.0):
        assert ctl.run_once(state, now) == "waiting"
    assert world.logs[-1] == "waiting: 1 of 3 vLLM API servers ready; idle timer reset"
    assert sum(m.hits for m in world.metrics()) == 0  # nothing is scraped before all are up
    assert world.kube.mutations() == []

    world.kube.pods[1] = pod("inst-decode-0", "decode", worker="0")
    assert ctl.run_once(state, TIMEOUT * 11.0) == "ready"
    assert ctl.run_once(state, TIMEOUT * 11.5) == "idle"  # the timer starts at readiness, not at start-up
    assert world.kube.mutations() == []
    assert all(m.hits >= 2 for m in world.metrics())


def test_non_serving_worker_is_neither_scraped_nor_counted(world):
    ctl, state = ready(world)
    assert len(world.kube.calls) == 1
    call = world.kube.calls[0]
    assert call["path"] == f"/api/v1/namespaces/{NS}/pods"
    assert call["query"]["labelSelector"] == [SELECTOR]
    assert call["auth"] == "Bearer s3cret"
    # A non-serving decode worker on the serving ports would make 5 targets instead of 3.
    world.kube.pods[2] = pod("inst-decode-0-1", "decode", worker="0")
    assert ctl.run_once(state, 1.0) == "not-ready"


def test_pod_list_follows_continue_tokens(world):
    world.kube.page_size = 1
    ready(world)
    assert [c["query"].get("continue") for c in world.kube.calls] == [None, ["1"], ["2"]]


# --------------------------------------------------------------------------- idle timer


def test_idle_timer_fires_after_the_timeout(world):
    ctl, state = ready(world)
    assert ctl.run_once(state, 60.0) == "idle"
    assert world.logs[-1] == f"idle: no requests for 60s of {TIMEOUT}s"
    assert ctl.run_once(state, TIMEOUT - 1.0) == "idle"
    assert world.kube.mutations() == []
    assert ctl.run_once(state, float(TIMEOUT)) == "stopped"
    assert world.kube.mutations() == SHUTDOWN
    assert state.done


def test_scale_down_set_order_and_requests(world):
    world.kube.replicas[PREFILL] = 3  # scaled by hand since the apply: the live count is what matters
    ctl, state = ready(world)
    world.kube.clear()
    assert ctl.run_once(state, TIMEOUT + 1.0) == "stopped"
    assert world.kube.mutations() == SHUTDOWN
    calls = [c for c in world.kube.calls if c["method"] != "GET" or c["path"] != f"/api/v1/namespaces/{NS}/pods"]
    assert [(c["method"], c["path"]) for c in calls] == [
        ("GET", PREFILL), ("PATCH", PREFILL), ("GET", DECODE), ("PATCH", DECODE), ("GET", EPP), ("PATCH", EPP),
        ("DELETE", GATEWAY), ("PATCH", SELF)]
    assert all(c["ctype"] == "application/merge-patch+json" for c in calls if c["method"] == "PATCH")
    assert all(c["auth"] == "Bearer s3cret" for c in calls)
    assert world.kube.replicas == {PREFILL: 0, DECODE: 0, EPP: 0, SELF: 0}
    assert world.kube.gateways == set()
    assert "scaled: inst-prefill from 3 to 0 replicas" in world.logs
    assert "deleted: Gateway inst-gateway" in world.logs
    # Shut down: later checks do nothing at all.
    world.kube.clear()
    assert ctl.run_once(state, TIMEOUT * 5.0) == "done"
    assert world.kube.calls == []


def test_without_gateway_nothing_is_deleted(world):
    ctl, state = ready(world, GATEWAY="null")
    assert ctl.run_once(state, float(TIMEOUT)) == "stopped"
    assert world.kube.mutations() == [m for m in SHUTDOWN if m[0] != "DELETE"]
    assert world.kube.gateways == {GATEWAY}


def test_gateway_already_gone_still_completes(world):
    world.kube.gateways.clear()
    ctl, state = ready(world)
    assert ctl.run_once(state, float(TIMEOUT)) == "stopped"
    assert "absent: Gateway inst-gateway was already gone" in world.logs
    assert world.kube.replicas[SELF] == 0


# --------------------------------------------------------------------------- activity


@pytest.mark.parametrize(("attr", "value", "log"), [
    ("success", 6.0, "active: request counters changed (19 completed)"),
    ("failure", 2.0, "active: request counters changed (19 completed)"),
    ("running", 1.0, "active: 1 requests running or waiting"),
    ("waiting", 2.0, "active: 2 requests running or waiting"),
])
def test_activity_resets_the_timer(world, attr, value, log):
    ctl, state = ready(world)
    assert ctl.run_once(state, TIMEOUT - 10.0) == "idle"
    setattr(world.decode[1], attr, value)
    assert ctl.run_once(state, TIMEOUT - 5.0) == "active"
    assert world.logs[-1] == f"{log}; idle timer reset"
    assert ctl.run_once(state, TIMEOUT + 5.0) != "stopped"
    if attr in ("running", "waiting"):  # requests in flight keep it busy until they finish
        assert ctl.run_once(state, 2 * TIMEOUT) == "active"
        setattr(world.decode[1], attr, 0.0)
        assert ctl.run_once(state, 2 * TIMEOUT + 1) == "idle"
        assert ctl.run_once(state, 3 * TIMEOUT) == "stopped"
    else:
        assert ctl.run_once(state, 2 * TIMEOUT - 6.0) == "idle"
        assert ctl.run_once(state, 2 * TIMEOUT - 5.0) == "stopped"
    assert world.kube.mutations() == SHUTDOWN


def test_a_restarted_server_counts_as_activity(world):
    ctl, state = ready(world)
    world.kube.pods[0] = {**world.kube.pods[0], "metadata": {**world.kube.pods[0]["metadata"], "uid": "new"}}
    assert ctl.run_once(state, float(TIMEOUT)) == "active"


# --------------------------------------------------------------------------- failures fail open


def _break_metrics(world, how: str) -> None:
    target = world.decode[0]
    if how == "http-500":
        target.status = 500
    elif how == "missing-gauge":
        target.omit = {"vllm:num_requests_waiting"}
    elif how == "missing-counter":
        target.omit = {"vllm:request_success_total"}
    elif how == "nan":
        target.extra = "vllm:num_requests_running{engine=\"1\"} NaN\n"
    elif how == "refused":
        target.stop()


@pytest.mark.parametrize("how", ["http-500", "missing-gauge", "missing-counter", "nan", "refused"])
def test_metric_failure_resets_the_timer(world, how):
    ctl, state = ready(world)
    assert ctl.run_once(state, TIMEOUT - 1.0) == "idle"
    _break_metrics(world, how)
    assert ctl.run_once(state, float(TIMEOUT)) == "metrics-error"
    assert world.logs[-1].startswith("metrics-error: inst-decode-0:")
    assert world.logs[-1].endswith("; idle timer reset")
    assert ctl.run_once(state, TIMEOUT * 3.0) == "metrics-error"  # never shuts down while blind
    assert world.kube.mutations() == []
    if how == "refused":
        return
    vars(world.decode[0]).update(status=200, omit=set(), extra="")
    assert ctl.run_once(state, TIMEOUT * 3.0 + 1) == "baseline"  # a fresh baseline, then a full timeout
    assert ctl.run_once(state, TIMEOUT * 4.0) == "idle"
    assert ctl.run_once(state, TIMEOUT * 4.0 + 1) == "stopped"


def test_api_failure_resets_the_timer(world):
    ctl, state = ready(world)
    world.kube.fail.append(lambda method, path, body: 500 if path.endswith("/pods") else None)
    assert ctl.run_once(state, float(TIMEOUT)) == "api-error"
    assert world.logs[-1] == (f"api-error: cannot list model pods: GET /api/v1/namespaces/{NS}/pods?labelSelector="
                              f"{urllib.parse.quote(SELECTOR, safe='')}&limit=500: HTTP 500: injected failure; "
                              "idle timer reset")
    world.kube.fail.clear()
    assert ctl.run_once(state, TIMEOUT + 1.0) == "baseline"
    assert ctl.run_once(state, 2 * TIMEOUT) == "idle"
    assert ctl.run_once(state, 2 * TIMEOUT + 1.0) == "stopped"


def test_unreachable_api_resets_the_timer(world):
    ctl, state = ready(world)
    world.kube.stop()
    assert ctl.run_once(state, float(TIMEOUT)) == "api-error"
    assert world.kube.mutations() == []


def test_losing_an_api_server_after_readiness_resets_the_timer(world):
    ctl, state = ready(world)
    world.kube.pods[0] = pod("inst-prefill-abc", "prefill", ready=False)
    assert ctl.run_once(state, float(TIMEOUT)) == "not-ready"
    assert world.logs[-1] == "not-ready: 2 of 3 vLLM API servers ready; idle timer reset"
    world.kube.pods[0] = pod("inst-prefill-abc", "prefill")
    assert ctl.run_once(state, TIMEOUT + 1.0) == "baseline"
    assert ctl.run_once(state, 2 * TIMEOUT) == "idle"


def test_failing_patch_restores_what_was_scaled(world):
    world.kube.replicas[PREFILL] = 2
    world.kube.fail.append(lambda m, p, b: 500 if m == "PATCH" and p == DECODE and b["spec"]["replicas"] == 0 else None)
    ctl, state = ready(world)
    assert ctl.run_once(state, float(TIMEOUT)) == "restored"
    assert world.kube.mutations() == [
        ("PATCH", PREFILL, {"spec": {"replicas": 0}}),
        ("PATCH", DECODE, {"spec": {"replicas": 0}}),  # failed (it may have applied): restored too
        ("PATCH", PREFILL, {"spec": {"replicas": 2}}),
        ("PATCH", DECODE, {"spec": {"replicas": 1}}),
    ]
    assert world.kube.replicas == {PREFILL: 2, DECODE: 1, EPP: 1, SELF: 1}
    assert world.kube.gateways == {GATEWAY}
    assert any(line.startswith("shutdown-failed: PATCH " + DECODE) for line in world.logs)
    assert not state.done
    # It keeps running, and the idle timer starts over.
    world.kube.fail.clear()
    assert ctl.run_once(state, TIMEOUT + 1.0) == "baseline"
    assert ctl.run_once(state, 2 * TIMEOUT) == "idle"
    world.kube.clear()
    assert ctl.run_once(state, 2 * TIMEOUT + 1.0) == "stopped"
    assert world.kube.mutations()[0] == ("PATCH", PREFILL, {"spec": {"replicas": 0}})


def test_failing_gateway_delete_restores_every_workload(world):
    world.kube.fail.append(lambda m, p, b: 403 if m == "DELETE" else None)
    ctl, state = ready(world)
    assert ctl.run_once(state, float(TIMEOUT)) == "restored"
    assert world.kube.replicas == {PREFILL: 1, DECODE: 1, EPP: 1, SELF: 1}
    assert [m[:2] for m in world.kube.mutations()] == [
        ("PATCH", PREFILL), ("PATCH", DECODE), ("PATCH", EPP), ("DELETE", GATEWAY),
        ("PATCH", PREFILL), ("PATCH", DECODE), ("PATCH", EPP)]


def test_failing_self_scale_restores_and_warns_about_the_gateway(world):
    world.kube.fail.append(lambda m, p, b: 500 if m == "PATCH" and p == SELF else None)
    ctl, state = ready(world)
    assert ctl.run_once(state, float(TIMEOUT)) == "restored"
    assert world.kube.replicas == {PREFILL: 1, DECODE: 1, EPP: 1, SELF: 1}
    assert any(line.startswith("warning: Gateway inst-gateway was deleted") for line in world.logs)


def test_unreadable_workload_aborts_before_scaling_anything(world):
    world.kube.fail.append(lambda m, p, b: 500 if m == "GET" and p == PREFILL else None)
    ctl, state = ready(world)
    assert ctl.run_once(state, float(TIMEOUT)) == "restored"
    assert world.kube.mutations() == []


# --------------------------------------------------------------------------- loop, opener, process


def test_run_loop_with_injected_clock_and_sleep(world):
    clock = [0.0]
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        clock[0] += seconds

    ctl = world.controller(POLL_SECONDS="60")
    state = ic.run(ctl, ic.State(), clock=lambda: clock[0], sleep=sleep, ticks=TIMEOUT // 60 + 3)
    assert state.done
    assert set(sleeps) == {60.0}
    decisions = [line.split(":")[0] for line in world.logs]
    assert decisions[0] == "ready"
    assert decisions.count("idle") == TIMEOUT // 60 - 1
    assert decisions[-1] == "stopped"
    assert world.kube.mutations() == SHUTDOWN


def test_an_injected_opener_carries_every_request(world):
    seen = []
    real = ic.default_opener()

    class Recording:
        def open(self, req, timeout):
            seen.append((req.get_method(), req.full_url))
            return real.open(req, timeout=timeout)

    ctl = ic.Controller(ic.load_config(world.env), opener=Recording(), log=world.logs.append)
    assert ctl.run_once(ic.State(), 0.0) == "ready"
    assert seen[0][1].startswith(f"http://127.0.0.1:{world.kube.port}/api/v1/namespaces/ns/pods?")
    assert sorted(url for _, url in seen[1:]) == sorted(
        f"http://127.0.0.1:{m.port}/metrics" for m in world.metrics())


def test_unexpected_errors_in_the_loop_reset_and_continue(world):
    ctl = world.controller()

    def boom(state, now):
        raise RuntimeError("surprise")

    ctl.run_once = boom
    state = ic.run(ctl, ic.State(idle_since=-1e9, counters={"x": 1.0}), clock=lambda: 5.0, sleep=lambda s: None,
                   ticks=2)
    assert state.idle_since == 5.0 and state.counters is None
    assert world.logs == ["error: RuntimeError: surprise; idle timer reset"] * 2


@pytest.mark.integration
def test_the_script_runs_as_a_process_and_stops_on_sigterm(world):
    env = {**world.env, "TIMEOUT_SECONDS": "0", "POLL_SECONDS": "0.05", "PATH": os.environ.get("PATH", "")}
    proc = subprocess.Popen([sys.executable, str(SCRIPT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 20
        while world.kube.replicas[SELF] != 0 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert world.kube.replicas[SELF] == 0, proc.poll()
        time.sleep(0.2)
        assert proc.poll() is None  # shut down, but waits for Kubernetes to stop the pod
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert world.kube.mutations() == SHUTDOWN
    lines = out.splitlines()
    assert "start: watching 3 vLLM API servers" in lines[0]
    assert any(" stopped: scaled inst-idle-shutdown to 0" in line for line in lines)


# --------------------------------------------------------------------------- the InferencePool's idle marker

MARK = "manifesto.llm-d.ai/idle-shutdown-at"
WITH_POOL = {"POOL": json.dumps({"name": "inst-infpool", "path": POOL, "annotation": MARK})}


def test_shutdown_stamps_the_pool_after_the_gateway_and_before_itself(world):
    ctl, state = ready(world, **WITH_POOL)
    before = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    assert ctl.run_once(state, float(TIMEOUT)) == "stopped"
    (stamp,) = [b["metadata"]["annotations"][MARK] for m, p, b in world.kube.mutations() if p == POOL]
    assert world.kube.mutations() == [*SHUTDOWN[:4], ("PATCH", POOL, {"metadata": {"annotations": {MARK: stamp}}}),
                                      SHUTDOWN[4]]
    assert before <= stamp <= time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) and stamp.endswith("Z")
    assert world.kube.pool_annotations == {MARK: stamp}
    assert f"marked: InferencePool inst-infpool: {MARK}={stamp}" in world.logs


def test_a_failed_shutdown_empties_the_pool_marker_again(world):
    world.kube.fail.append(lambda m, p, b: 500 if m == "PATCH" and p == SELF else None)
    ctl, state = ready(world, **WITH_POOL)
    assert ctl.run_once(state, float(TIMEOUT)) == "restored"
    assert world.kube.pool_annotations == {MARK: ""}
    assert world.kube.replicas == {PREFILL: 1, DECODE: 1, EPP: 1, SELF: 1}
    assert f"restored: InferencePool inst-infpool: {MARK} emptied" in world.logs


def test_a_failed_pool_stamp_restores_every_workload(world):
    world.kube.fail.append(lambda m, p, b: 403 if p == POOL else None)
    ctl, state = ready(world, **WITH_POOL)
    assert ctl.run_once(state, float(TIMEOUT)) == "restored"
    assert world.kube.replicas == {PREFILL: 1, DECODE: 1, EPP: 1, SELF: 1}
    assert any(line.startswith(f"restore-failed: InferencePool inst-infpool: PATCH {POOL}: HTTP 403")
               for line in world.logs)


@pytest.mark.parametrize(("pool", "message"), [
    ({"name": "p", "path": POOL}, "POOL needs the annotation"),
    ({"name": "p", "path": "relative", "annotation": MARK}, "POOL needs a name and an absolute API path"),
    ([], "POOL needs the annotation"),
])
def test_pool_config_errors(world, pool, message):
    with pytest.raises(ic.ConfigError, match=message):
        ic.load_config({**world.env, "POOL": json.dumps(pool)})
    assert ic.load_config({**world.env, "POOL": "null"}).pool is None
