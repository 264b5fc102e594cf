"""The idle-shutdown controller on a DisaggregatedSet: ``idle_dset.py`` beside the controller
scales both roles to zero in one JSON patch, and back together when the shutdown fails.

The fake Kubernetes API serves one DisaggregatedSet (spec.roles with their replicas), applies
JSON patches atomically (a failed ``test`` op changes nothing, as the API server does) and
records every request; the vLLM metrics servers come from test_idle_controller.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import test_idle_controller as tic
from kit import REPO_ROOT, plan_of
from manifesto.render.k8s.idle import DSET_KEY, SCRIPT_KEY, idle_objects

HERE = REPO_ROOT / "manifesto" / "render" / "k8s"
NS = tic.NS
DSET = "/apis/disaggregatedset.x-k8s.io/v1/namespaces/ns/disaggregatedsets/inst"
EPP = tic.EPP
SELF = tic.SELF
TIMEOUT = tic.TIMEOUT


def _load_extension():
    # The extension imports the controller by its shipped name; give it the copy the other
    # controller tests loaded from the same file.
    sys.modules.setdefault("idle_controller", tic.ic)
    spec = importlib.util.spec_from_file_location("idle_dset_under_test", HERE / DSET_KEY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ext = _load_extension()


class _Handler(tic._Quiet):
    def _handle(self, method: str):
        kube = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        path = self.path.split("?", 1)[0]
        with kube.lock:
            kube.calls.append({"method": method, "path": path, "body": body, "ctype": self.headers.get("Content-Type")})
            status = next((s for rule in kube.fail if (s := rule(method, path, body))), None)
        if status:
            return self._send(status, json.dumps({"kind": "Status", "message": "injected failure"}).encode())
        if method == "GET" and path == f"/api/v1/namespaces/{NS}/pods":
            with kube.lock:
                return self._send(200, json.dumps({"kind": "PodList", "metadata": {}, "items": kube.pods}).encode())
        with kube.lock:
            if path == DSET and method == "GET":
                return self._send(200, json.dumps(kube.dset).encode())
            if path == DSET and method == "PATCH":
                return self._json_patch(kube, body)
            if path in kube.replicas and method == "GET":
                return self._send(200, json.dumps({"spec": {"replicas": kube.replicas[path]}}).encode())
            if path in kube.replicas and method == "PATCH":
                kube.replicas[path] = body["spec"]["replicas"]
                return self._send(200, b"{}")
        return self._send(404, json.dumps({"kind": "Status", "message": "not found"}).encode())

    def _json_patch(self, kube, ops):
        if self.headers.get("Content-Type") != "application/json-patch+json":
            return self._send(415, b"{}")
        doc = copy.deepcopy(kube.dset)
        for op in ops:
            parts = op["path"].strip("/").split("/")
            node = doc
            for part in parts[:-1]:
                node = node[int(part)] if isinstance(node, list) else node[part]
            key = int(parts[-1]) if isinstance(node, list) else parts[-1]
            if op["op"] == "test" and node[key] != op["value"]:
                return self._send(422, json.dumps({"kind": "Status", "message": "test failed"}).encode())
            if op["op"] == "add":
                node[key] = op["value"]
        kube.dset = doc
        return self._send(200, json.dumps(doc).encode())

    def do_GET(self):
        self._handle("GET")

    def do_PATCH(self):
        self._handle("PATCH")


class FakeKube(tic._Server):
    def __init__(self):
        self.lock = threading.Lock()
        self.calls: list[dict] = []
        self.fail: list = []
        self.pods = [tic.pod("inst-0-r-prefill-0", "prefill"), tic.pod("inst-0-r-prefill-1", "prefill"),
                     tic.pod("inst-0-r-decode-0", "decode")]
        self.dset = {"kind": "DisaggregatedSet", "spec": {"roles": [
            {"name": "prefill", "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 1}}},
            {"name": "decode", "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 1}}}]}}
        self.replicas = {EPP: 1, SELF: 1}
        super().__init__(_Handler)

    def role_replicas(self) -> list[tuple[str, int]]:
        with self.lock:
            return [(r["name"], r["spec"].get("replicas")) for r in self.dset["spec"]["roles"]]

    def patches(self) -> list[tuple]:
        with self.lock:
            return [(c["path"], c["ctype"], c["body"]) for c in self.calls if c["method"] == "PATCH"]


@pytest.fixture
def world(tmp_path):
    kube = FakeKube()
    metrics = [tic.FakeMetrics(), tic.FakeMetrics()]
    token = tmp_path / "token"
    token.write_text("tok\n")
    env = {
        "NAMESPACE": NS, "POD_SELECTOR": tic.SELECTOR, "TIMEOUT_SECONDS": str(TIMEOUT), "POLL_SECONDS": "60",
        "TARGETS": json.dumps({"prefill": {"ports": [metrics[0].port], "serving_worker_indices": None},
                               "decode": {"ports": [metrics[1].port], "serving_worker_indices": None}}),
        "EXPECTED_TARGETS": "3",
        "WORKLOADS": json.dumps([{"name": "inst", "path": DSET, "replicas": 3},
                                 {"name": "inst-infpool-epp", "path": EPP, "replicas": 1}]),
        "GATEWAY": "null",
        "CONTROLLER": json.dumps({"name": "inst-idle-shutdown", "path": SELF}),
        "KUBERNETES_API": f"http://127.0.0.1:{kube.port}", "KUBERNETES_TOKEN_FILE": str(token),
        "KUBERNETES_CA_FILE": str(tmp_path / "none"), "HTTP_TIMEOUT_SECONDS": "3",
    }
    logs: list[str] = []
    # Each pod scrapes the same port set as its role: two prefill pods share one fake server.
    ctl = tic.ic.Controller(tic.ic.load_config(env), log=logs.append)
    ctl.kube = ext.Kube(ctl.config, ctl.opener)  # what idle_dset.main() arranges through the module name
    try:
        yield kube, ctl, logs
    finally:
        for server in (kube, *metrics):
            server.stop()


def _ready(ctl):
    state = tic.ic.State()
    assert ctl.run_once(state, 0.0) == "ready"
    return state


def _ops(counts: list[tuple[str, int]]) -> list[dict]:
    out = []
    for i, (role, n) in enumerate(counts):
        out += [{"op": "test", "path": f"/spec/roles/{i}/name", "value": role},
                {"op": "add", "path": f"/spec/roles/{i}/spec/replicas", "value": n}]
    return out


JSON_PATCH = "application/json-patch+json"
MERGE = "application/merge-patch+json"


def test_both_roles_go_to_zero_in_one_patch(world):
    kube, ctl, logs = world
    state = _ready(ctl)
    assert ctl.run_once(state, float(TIMEOUT)) == "stopped"
    assert kube.patches() == [(DSET, JSON_PATCH, _ops([("prefill", 0), ("decode", 0)])),
                              (EPP, MERGE, {"spec": {"replicas": 0}}), (SELF, MERGE, {"spec": {"replicas": 0}})]
    assert kube.role_replicas() == [("prefill", 0), ("decode", 0)]
    assert "scaled: inst from (prefill 2, decode 1) to 0 replicas" in logs


def test_a_failed_shutdown_brings_both_roles_back_together(world):
    kube, ctl, logs = world
    kube.fail.append(lambda m, p, b: 500 if m == "PATCH" and p == EPP and b["spec"]["replicas"] == 0 else None)
    state = _ready(ctl)
    assert ctl.run_once(state, float(TIMEOUT)) == "restored"
    assert [p[2] for p in kube.patches() if p[0] == DSET] == [_ops([("prefill", 0), ("decode", 0)]),
                                                             _ops([("prefill", 2), ("decode", 1)])]
    assert kube.role_replicas() == [("prefill", 2), ("decode", 1)]
    assert "restored: inst to (prefill 2, decode 1) replicas" in logs


def test_roles_that_moved_since_the_read_fail_the_whole_patch(world):
    kube, ctl, logs = world
    state = _ready(ctl)

    def reorder(method, path, body):
        if method == "PATCH" and path == DSET and body[1]["value"] == 0:
            kube.dset["spec"]["roles"].reverse()  # someone reordered the roles after the read
        return None
    kube.fail.append(reorder)
    assert ctl.run_once(state, float(TIMEOUT)) == "restored"
    # The first patch failed its test op and changed nothing; the restore re-reads the roles.
    assert kube.role_replicas() == [("decode", 1), ("prefill", 2)]
    assert any(line.startswith(f"shutdown-failed: PATCH {DSET}: HTTP 422") for line in logs), logs


def test_main_gives_the_controller_the_set_aware_client(monkeypatch):
    seen = []
    monkeypatch.setattr(tic.ic, "Kube", tic.ic.Kube)  # restored after the test
    monkeypatch.setattr(tic.ic, "main", lambda: seen.append(tic.ic.Kube))
    ext.main()
    assert seen == [ext.Kube]


def test_other_workloads_keep_the_controllers_merge_patch(world):
    kube, ctl, _ = world
    workload = tic.ic.Workload("inst-infpool-epp", EPP, 1)
    assert ctl.kube.replicas(workload) == 1
    ctl.kube.scale(workload, 0)
    assert kube.patches() == [(EPP, MERGE, {"spec": {"replicas": 0}})]


def test_a_set_without_roles_is_an_api_error(world):
    kube, ctl, _ = world
    kube.dset = {"spec": {"roles": [{"name": "prefill", "spec": {"replicas": "two"}}]}}
    with pytest.raises(tic.ic.KubeError, match=r"spec.roles\[0\] has no name or replica count"):
        ctl.kube.replicas(tic.ic.Workload("inst", DSET, 3))


# -- what the renderer ships -----------------------------------------------------------------

def test_a_set_ships_the_extension_and_the_pair_does_not():
    k3 = REPO_ROOT / "models" / "kimi-k3" / "1P-1D-DP4-TP4.yaml"
    dset_plan = plan_of(k3, REPO_ROOT / "clusters" / "example-gb200-lws.yaml")[0]
    pair_plan = plan_of(k3, REPO_ROOT / "clusters" / "example-gb200.yaml")[0]
    for plan, keys in ((dset_plan, [SCRIPT_KEY, DSET_KEY]), (pair_plan, [SCRIPT_KEY])):
        objs = {o["kind"]: o for o in idle_objects(plan)}
        assert list(objs["ConfigMap"]["data"]) == keys
        assert objs["ConfigMap"]["data"][SCRIPT_KEY] == (HERE / SCRIPT_KEY).read_text()
        pod = objs["Deployment"]["spec"]["template"]["spec"]
        container = pod["containers"][0]
        assert container["command"] == ["python", f"/opt/manifesto/{keys[-1]}"]
        assert [m["subPath"] for m in container["volumeMounts"]] == keys
        env = {e["name"]: e.get("value") for e in container["env"]}
        rules = objs["Role"]["rules"]
        if plan is dset_plan:
            assert json.loads(env["WORKLOADS"])[0] == {
                "name": plan.pd_set, "path": f"/apis/disaggregatedset.x-k8s.io/v1/namespaces/ns/disaggregatedsets/"
                                             f"{plan.pd_set}", "replicas": 2}
            assert {"apiGroups": ["disaggregatedset.x-k8s.io"], "resources": ["disaggregatedsets"],
                    "resourceNames": [plan.pd_set], "verbs": ["get", "patch"]} in rules
            assert not any("leaderworkerset.x-k8s.io" in r["apiGroups"] for r in rules)
        else:
            assert [w["name"] for w in json.loads(env["WORKLOADS"])][:2] == [r.workload_name for r in plan.roles]


@pytest.mark.integration
def test_the_extension_runs_from_the_configmap_layout(tmp_path):
    """As mounted: both files in one directory, ``python idle_dset.py``; it imports the
    controller beside it and runs its main() (a bad configuration exits 2 with its message)."""
    for key in (SCRIPT_KEY, DSET_KEY):
        (tmp_path / key).write_text((HERE / key).read_text())
    proc = subprocess.run([sys.executable, str(tmp_path / DSET_KEY)], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("idle-shutdown: configuration error:"), proc.stderr


def test_the_sets_shutdown_writes_only_what_argo_cd_is_told_to_ignore(world):
    """The fields a gitops Application ignores on a DisaggregatedSet (render/k8s/idle_owned,
    read from idle_dset.py's own per-role patch) are exactly the ones its shutdown writes."""
    from manifesto.ops.targets import parse_objects
    from manifesto.render.gitops import ignore_differences

    artifact = REPO_ROOT / "out" / "example-gb200-lws" / "deepseek-v4" / "1P-EP8-1D-EP8.yaml"
    objs = parse_objects(artifact.read_text())
    (dset,) = [o for o in objs if o["kind"] == "DisaggregatedSet"]
    (entry,) = [i for i in ignore_differences(objs) if i["kind"] == "DisaggregatedSet"]
    assert entry["name"] == dset["metadata"]["name"]
    kube, ctl, _logs = world
    # The fake set takes the artifact's roles, in its order.
    kube.dset = {"kind": "DisaggregatedSet", "spec": {"roles": [
        {"name": r["name"], "spec": {"replicas": r["spec"].get("replicas", 1), "leaderWorkerTemplate": {"size": 1}}}
        for r in dset["spec"]["roles"]]}}
    state = _ready(ctl)
    assert ctl.run_once(state, float(TIMEOUT)) == "stopped"
    written = [op["path"] for path, _ctype, ops in kube.patches() if path == DSET for op in ops if op["op"] != "test"]
    assert sorted(written) == sorted(entry["jsonPointers"])
