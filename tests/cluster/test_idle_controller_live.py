"""The idle-shutdown controller as it will run (issue 36 item 5): the script the artifact
ships in its ConfigMap, started as a process against the real API with a token of the
ServiceAccount the artifact renders (a TokenRequest, not admin), and the environment the
artifact's controller Deployment gives it. It must scale a Deployment, a LeaderWorkerSet
and a DisaggregatedSet to zero, delete the Gateway, stamp the InferencePool and scale
itself to zero; `status` then reads idle; the fields it changed, read from managedFields,
are exactly the ones the Argo CD Application's ignoreDifferences names; applying the
artifact again brings everything back.

What stands in for what the test cluster lacks, and nothing else:
- pods of a LeaderWorkerSet or DisaggregatedSet: there is no LeaderWorkerSet controller
  here (the module proxy refuses sigs.k8s.io/lws), so the test creates the pods it would
  (the role's template, its labels plus the worker index) bound to a simulated node;
- pod IPs and /metrics: the simulated pods run nothing, so the test gives each model pod a
  loopback address (status.podIP, as a kubelet reports it) and serves, on that address and
  each port the artifact's TARGETS names, the vLLM counters the script reads, unchanging
  (an idle instance);
- timing: TIMEOUT_SECONDS and POLL_SECONDS are shortened; every other variable is the
  artifact's.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

import kit
from realkube import MARKS, Cluster, Manifesto, ok

pytestmark = MARKS

OURS = "kubectl-client-side-apply"
CASES = {
    # a Deployment, with a Gateway to delete and a pool to stamp
    "deployment": ("tests/golden/load-aware-gateway/model.yaml", "tests/golden/load-aware-gateway/cluster.yaml"),
    # a multi-node LeaderWorkerSet whose leader alone serves (worker index 0)
    "leaderworkerset": ("models/kimi-k3/aggregated-tp16-ep16.yaml", "example-gb200-lws"),
    # a DisaggregatedSet of a prefill and a decode role
    "disaggregatedset": ("models/kimi-k3/pruned75-1P-1D-DP2-TP4.yaml", "example-gb200-lws"),
}
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
METRICS = ('vllm:request_success_total{model_name="m"} 7\n'
           'vllm:request_failure_total{model_name="m"} 1\n'
           'vllm:num_requests_running{model_name="m"} 0\n'
           'vllm:num_requests_waiting{model_name="m"} 0\n').encode()


class _Metrics(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the name http.server calls
        body = METRICS if self.path == "/metrics" else b""
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _render(cluster: Cluster, tmp: Path, case: str, namespace: str) -> tuple[Path, list[dict]]:
    spec, profile = CASES[case]
    run = Manifesto(cluster, tmp)
    target = tmp / f"{case}.yaml"
    ok(run("render", "file", str(kit.REPO_ROOT / spec), "--cluster",
           str(kit.REPO_ROOT / profile) if profile.endswith(".yaml") else profile,
           "--namespace", namespace, "--user", "idle-test", "-o", str(target), cwd=kit.REPO_ROOT))
    docs = [d for d in yaml.safe_load_all(target.read_text()) if isinstance(d, dict) and "kind" in d]
    return target, docs


def _controller(docs: list[dict]) -> tuple[dict, dict, dict]:
    """(controller Deployment, its container, its ConfigMap) of the artifact."""
    from manifesto.render.k8s.idle_owned import _controller_env

    deployment, _ = _controller_env(docs)
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    (volume,) = [v for v in spec["volumes"] if "configMap" in v]
    (config_map,) = [d for d in docs if d["kind"] == "ConfigMap"
                     and d["metadata"]["name"] == volume["configMap"]["name"]]
    return deployment, container, config_map


def _lws_pods(name: str, spec: dict, role_labels: dict) -> list[tuple[str, dict, dict]]:
    """(pod name, labels, pod spec) of the pods the LeaderWorkerSet controller creates for an
    LWS spec: per group a leader (worker index 0) and size - 1 workers."""
    lwt = spec["leaderWorkerTemplate"]
    worker = lwt["workerTemplate"]
    leader = lwt.get("leaderTemplate") or worker
    out = []
    for group in range(spec.get("replicas", 1)):
        for index in range(lwt.get("size", 1)):
            template = leader if index == 0 else worker
            labels = {**(template.get("metadata") or {}).get("labels", {}), **role_labels,
                      WORKER_INDEX: str(index)}
            out.append((f"{name}-{group}" + (f"-{index}" if index else ""), labels, template["spec"]))
    return out


def _create_set_pods(cluster: Cluster, namespace: str, docs: list[dict]) -> None:
    pods = []
    for d in docs:
        if d["kind"] == "LeaderWorkerSet":
            pods += _lws_pods(d["metadata"]["name"], d["spec"], {})
        elif d["kind"] == "DisaggregatedSet":
            for role in d["spec"]["roles"]:
                pods += _lws_pods(f"{d['metadata']['name']}-{role['name']}", role["spec"],
                                  {"disaggregatedset.x-k8s.io/role": role["name"]})
    items = [{"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": name, "namespace": namespace, "labels": labels},
              "spec": {**spec, "nodeName": f"gpu-node-{n % 4}"}} for n, (name, labels, spec) in enumerate(pods)]
    if items:
        cluster.kubectl("apply", "--server-side", "-f", "-",
                        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def _ready_model_pods(cluster: Cluster, namespace: str, selector: str, want: int, timeout: float = 120) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        pods = cluster.get("pods", "-n", namespace, "-l", selector)["items"]
        ready = [p for p in pods if p["status"].get("phase") == "Running" and p["status"].get("podIP")
                 and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))]
        if len(ready) >= want:
            return ready
        assert time.monotonic() < deadline, f"{len(ready)}/{want} model pods ready: {[p['metadata']['name'] for p in pods]}"
        time.sleep(1)


def _serve_metrics(cluster: Cluster, namespace: str, pods: list[dict], config, block: int) -> list[ThreadingHTTPServer]:
    """A loopback address per model pod (as its status.podIP) and a /metrics server on it at
    each port the artifact's TARGETS names for the pod's role."""
    from manifesto.render.k8s.idle_controller import ROLE_LABEL

    servers = []
    for n, pod in enumerate(sorted(pods, key=lambda p: p["metadata"]["name"]), start=1):
        ip = f"127.{block}.{n // 250}.{1 + n % 250}"
        cluster.kubectl("-n", namespace, "patch", "pod", pod["metadata"]["name"], "--subresource=status",
                        "--type=merge", "-p", json.dumps({"status": {"podIP": ip, "podIPs": [{"ip": ip}]}}))
        role = config.targets.get(pod["metadata"]["labels"].get(ROLE_LABEL))
        if role is None:
            continue
        for port in role.ports:
            server = ThreadingHTTPServer((ip, port), _Metrics)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            servers.append(server)
    return servers


def _fields(fields: dict, live, path: tuple = ()) -> set[tuple]:
    """The leaf field paths of a managedFields fieldsV1 tree, list items keyed by name shown
    at their position in the live object (as ignoreDifferences' JSON pointers name them)."""
    out = set()
    for key, sub in fields.items():
        if key == ".":
            continue
        kind, _, rest = key.partition(":")
        if kind == "f":
            step, child = rest, (live or {}).get(rest)
        elif kind == "k":
            want = json.loads(rest)
            step, child = next(((i, item) for i, item in enumerate(live or [])
                                if all(item.get(k) == v for k, v in want.items())), (key, None))
        else:
            step, child = key, None
        inner = {k: v for k, v in sub.items() if k != "."}
        out |= _fields(inner, child, (*path, step)) if inner else {(*path, step)}
    return out


def _pointer(path: tuple) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


@pytest.mark.parametrize("case", list(CASES))
def test_the_shipped_idle_controller_shuts_an_instance_down_with_its_own_rights(real_cluster, case, tmp_path,
                                                                               monkeypatch):
    namespace = f"idle-{case}"
    cluster = real_cluster
    cluster.kubectl("delete", "namespace", namespace, "--ignore-not-found", "--wait=true")
    cluster.ensure_namespace(namespace)
    try:
        _shut_down_and_back(cluster, case, namespace, tmp_path, monkeypatch)
    finally:  # the pods hold simulated GPUs the next tests need
        cluster.kubectl("delete", "namespace", namespace, "--wait=false")


def _run_controller(cluster: Cluster, case: str, namespace: str, tmp_path: Path, until: str,
                    edit_role=None) -> tuple[Path, list[dict], object, str]:
    """Render and apply the case's artifact, stand in for the pods, run the shipped script
    until its log says ``until``; (artifact, its objects, the controller's config, its log).
    ``edit_role``: changes the artifact's Role (as a dict) before it is applied."""
    from manifesto.render.k8s.idle_controller import load_config

    artifact, docs = _render(cluster, tmp_path, case, namespace)
    deployment, container, config_map = _controller(docs)
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    env["NAMESPACE"] = namespace  # the fieldRef metadata.namespace
    config = load_config(env)
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    if edit_role is not None:
        for d in docs:
            if d["kind"] == "Role" and d["metadata"]["name"] == account:
                edit_role(d)
        artifact.write_text(yaml.safe_dump_all(docs))

    # Applied as `manifesto deploy` applies (client-side kubectl apply: manager kubectl-client-side-apply).
    cluster.kubectl("apply", "-f", str(artifact))
    _create_set_pods(cluster, namespace, docs)
    pods = _ready_model_pods(cluster, namespace, config.pod_selector, 1)
    block = 60 + list(CASES).index(case)
    servers = _serve_metrics(cluster, namespace, pods, config, block)
    try:
        # The script and its sibling files as the ConfigMap ships them, at the path the
        # container mounts them under (/opt/manifesto -> a folder of the test's).
        scripts = tmp_path / "opt-manifesto"
        scripts.mkdir()
        for name, text in config_map["data"].items():
            (scripts / name).write_text(text)
        command = [sys.executable if c == "python" else str(scripts / Path(c).name) if c.startswith("/opt/manifesto/")
                   else c for c in container["command"]]
        token = cluster.kubectl("-n", namespace, "create", "token", account, "--duration=10m").stdout.strip()
        (tmp_path / "token").write_text(token)
        kubeconfig = yaml.safe_load(Path(cluster.kubeconfig).read_text())
        ca = base64.b64decode(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"])
        (tmp_path / "ca.crt").write_bytes(ca)
        run_env = {**env, "TIMEOUT_SECONDS": "2", "POLL_SECONDS": "1", "PATH": "/usr/bin:/bin",
                   "KUBERNETES_API": cluster.env["TESTCLUSTER_SERVER"],
                   "KUBERNETES_TOKEN_FILE": str(tmp_path / "token"), "KUBERNETES_CA_FILE": str(tmp_path / "ca.crt")}
        log = tmp_path / "controller.log"
        with log.open("w") as out:
            proc = subprocess.Popen(command, env=run_env, stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
            try:
                deadline = time.monotonic() + 90
                while until not in log.read_text():
                    assert proc.poll() is None, f"the controller exited {proc.returncode}:\n{log.read_text()}"
                    assert time.monotonic() < deadline, f"no '{until}' within 90 s:\n{log.read_text()}"
                    time.sleep(0.5)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    return artifact, docs, config, log.read_text()


def _shut_down_and_back(cluster: Cluster, case: str, namespace: str, tmp_path: Path, monkeypatch) -> None:
    from manifesto.ops.discovery import resource_of
    from manifesto.ops.kubectl import Kube
    from manifesto.ops.targets import instance_of, live_objects, object_report, summarize
    from manifesto.render.gitops import ignore_differences

    artifact, docs, config, text = _run_controller(cluster, case, namespace, tmp_path, "stopped: scaled")
    assert "shutdown-failed" not in text and "HTTP 403" not in text and "error" not in text, text

    # Everything it scales is at zero, the Gateway is gone, the pool is stamped.
    for workload in (*config.workloads, config.controller):
        live = cluster.kubectl("get", "--raw", workload.path).stdout
        obj = json.loads(live)
        counts = [r["spec"].get("replicas") for r in obj["spec"]["roles"]] if obj["kind"] == "DisaggregatedSet" \
            else [obj["spec"].get("replicas")]
        assert counts and all(c == 0 for c in counts), (workload.name, counts)
    if config.gateway is not None:
        gone = cluster.kubectl("get", "--raw", config.gateway.path, check=False)
        assert gone.returncode != 0 and "NotFound" in gone.stderr, gone.stderr
    if config.pool is not None:
        pool = json.loads(cluster.kubectl("get", "--raw", config.pool.path).stdout)
        assert pool["metadata"]["annotations"][config.pool_annotation].endswith("Z"), pool["metadata"]

    # `status` reads the instance as idle (the gateway it deleted aside: no field of a live object).
    objs = [d for d in docs if not (config.gateway is not None and d["kind"] == "Gateway")]
    kube = Kube(namespace=namespace, context="admin", extra_env=(("KUBECONFIG", cluster.kubeconfig),),
                timeout=60, retries=0)
    monkeypatch.setenv("PATH", f"{Path(cluster.kubectl_path).parent}:/usr/bin:/bin")  # the real kubectl
    rows = object_report(objs, live_objects(kube, objs, instance_of(objs)))
    assert summarize(rows) == "idle", [r[:4] for r in rows if r[2] not in ("in-sync", "idle")]

    # What it changed, by managedFields, is exactly what the Argo CD Application ignores.
    ignored = {(e["kind"], e["name"]): set(e["jsonPointers"]) for e in ignore_differences(docs)}
    changed: dict[tuple[str, str], set[str]] = {}
    for d in objs:
        live = cluster.get(resource_of(d["kind"]), d["metadata"]["name"], "-n", namespace, "--show-managed-fields")
        for entry in live["metadata"].get("managedFields", []):
            if entry["manager"] == OURS or entry.get("subresource") or entry["manager"] == "kube-controller-manager":
                continue
            changed.setdefault((d["kind"], d["metadata"]["name"]), set()).update(
                _pointer(p) for p in _fields(entry["fieldsV1"], live))
    assert changed == ignored, (changed, ignored)

    # Applying the artifact again (what deploy does) brings it all back.
    cluster.kubectl("apply", "-f", str(artifact))
    want = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    for workload in (*config.workloads, config.controller):
        obj = json.loads(cluster.kubectl("get", "--raw", workload.path).stdout)
        desired = want[(obj["kind"], obj["metadata"]["name"])]
        if obj["kind"] == "DisaggregatedSet":
            assert [r["spec"]["replicas"] for r in obj["spec"]["roles"]] == \
                [r["spec"].get("replicas", 1) for r in desired["spec"]["roles"]]
        else:
            assert obj["spec"]["replicas"] == desired["spec"].get("replicas", 1)
    if config.gateway is not None:
        cluster.kubectl("get", "--raw", config.gateway.path)
    if config.pool is not None:
        pool = json.loads(cluster.kubectl("get", "--raw", config.pool.path).stdout)
        assert pool["metadata"]["annotations"][config.pool_annotation] == ""


def test_a_permission_the_role_lacks_fails_the_shutdown(real_cluster, tmp_path):
    """The check above fails when the Role lacks what the script does: here the Role without
    its rule on InferencePools. The script is refused (HTTP 403) when it stamps the pool, puts
    back what it scaled, and keeps watching; nothing stays at zero."""
    namespace = "idle-no-pool-rights"
    cluster = real_cluster
    cluster.kubectl("delete", "namespace", namespace, "--ignore-not-found", "--wait=true")
    cluster.ensure_namespace(namespace)

    def without_pool(role: dict) -> None:
        role["rules"] = [r for r in role["rules"] if "inferencepools" not in r.get("resources", [])]

    try:
        _, docs, config, text = _run_controller(cluster, "deployment", namespace, tmp_path, "restored: shutdown aborted",
                                                edit_role=without_pool)
        assert "HTTP 403" in text and "shutdown-failed" in text, text
        want = {(d["kind"], d["metadata"]["name"]): d for d in docs}
        for workload in config.workloads:
            obj = json.loads(cluster.kubectl("get", "--raw", workload.path).stdout)
            assert obj["spec"]["replicas"] == want[(obj["kind"], obj["metadata"]["name"])]["spec"].get("replicas", 1)
    finally:
        cluster.kubectl("delete", "namespace", namespace, "--wait=false")
