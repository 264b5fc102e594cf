"""The LeaderWorkerSet controller (v0.8.0, the newest release the Go module proxy serves
here; built from tools/lws-go by `tools/testcluster build-lws`) on a control plane of its
own, with its webhooks (LeaderWorkerSet defaulting and validation, the pod webhook that
labels the workers) served on loopback and registered by URL.

For a bundled multi-node aggregated LWS artifact and an LWS P/D pair from out/: the artifact
is applied, the controller makes the StatefulSets and pods, the simulated nodes run them to
Ready, `manifesto ready` returns once every LeaderWorkerSet is Available; then, asked of the
API server: the Services and the InferencePool select exactly the serving pods, and the pods
carry the LWS labels the renderer relies on.

A cluster of its own: the controller's webhooks (failurePolicy Fail on every pod) would touch
every other test's objects, and the LeaderWorkerSet CRD is v0.8.0's own (its module's
config/crd/bases), so that the cluster is a real v0.8.0 installation. It differs from the
v0.10.0 CRD the schema kit pins only by `status.observedGeneration`, which v0.8.0 never writes.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

import kit
from realkube import (MARKS, SCRIPT, Cluster, Manifesto, cache_dir, certificates, documents, free_port, grant,
                      ok)

pytestmark = MARKS

_CACHE = cache_dir()
NS = "example-ns"  # BUILD.yaml: options.default.namespace of out/<cluster>/
CLUSTER_PROFILE = kit.REPO_ROOT / "clusters/example-gb200.yaml"
#: (artifact, its model spec): a multi-node aggregated LWS (a leader and three workers, only
#: the leader serves), and a P/D pair of two LeaderWorkerSets (every node serves).
ARTIFACTS = {
    "aggregated-multinode": ("out/example-gb200/kimi-k3/aggregated-tp16-ep16.yaml",
                             "models/kimi-k3/aggregated-tp16-ep16.yaml"),
    "pd-pair": ("out/example-gb200/deepseek-v4/1P-EP8-1D-EP8.yaml", "models/deepseek-v4/1P-EP8-1D-EP8.yaml"),
}
SERVING = "llm-d.ai/inferenceServing"


def _webhooks(source: Path, port: int, ca: bytes) -> tuple[str, list[str]]:
    """LWS's webhook configurations (config/webhook/manifests.yaml of its module), each
    reached at https://127.0.0.1:PORT/<its path> instead of its Service; and those paths."""
    out, paths = [], []
    for doc in yaml.safe_load_all((source / "config/webhook/manifests.yaml").read_text()):
        if not doc:
            continue
        doc["metadata"]["name"] = "lws-" + doc["metadata"]["name"]
        for hook in doc["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            paths.append(path)
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": base64.b64encode(ca).decode()}
        out.append(doc)
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": out}), paths


def _served(port: int, path: str, ca: Path) -> bool:
    """Whether the controller's webhook server has a handler at ``path`` (its handlers are
    added once the controllers are set up, after the server is up: a 404 until then)."""
    context = ssl.create_default_context(cafile=str(ca))
    request = urllib.request.Request(f"https://127.0.0.1:{port}{path}", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=2, context=context):
            return True
    except urllib.error.HTTPError as exc:
        return exc.code != 404
    except OSError:
        return False


@pytest.fixture(scope="module")
def lws_cluster(tmp_path_factory):
    if os.environ.get("CI") != "true":
        for tool in ("go", "openssl"):
            if shutil.which(tool) is None:
                kit.unavailable(f"{tool} is not installed: the LeaderWorkerSet controller test needs it")
    kit.require_shared("k8s-schemas/crds")
    state = tmp_path_factory.mktemp("lws")
    env = {**os.environ, "TESTCLUSTER_CACHE": str(_CACHE)}
    built = subprocess.run([str(SCRIPT), "build-lws"], env=env, capture_output=True, text=True, timeout=3600,
                           check=False)
    if built.returncode != 0:
        pytest.fail(f"tools/testcluster build-lws failed:\n{built.stderr[-4000:]}", pytrace=False)
    binary, source = built.stdout.split()
    # Nodes shaped like clusters/example-gb200.yaml: GB200 compute trays of 4 GPUs, in one
    # NVLink domain (the `nvidia.com/gpu.clique` label the LWS pod affinity keeps a group in).
    nodes = state / "nodes.json"
    nodes.write_text(json.dumps([
        {"name": f"gb200-tray-{i}", "labels": {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.clique": "rack-0.0"},
         "capacity": {"cpu": "144", "memory": "1Ti", "pods": "110", "ephemeral-storage": "2Ti", "nvidia.com/gpu": "4"}}
        for i in range(8)]))
    up = subprocess.run([str(SCRIPT), "up", str(state / "cluster"), "--nodes", str(nodes)], env=env, capture_output=True, text=True,
                        timeout=600, check=False)
    if up.returncode != 0:
        pytest.fail(f"tools/testcluster up failed:\n{up.stderr[-4000:]}", pytrace=False)
    manager = None
    try:
        cluster = Cluster.from_env(state / "cluster" / "env")
        # v0.8.0's own CRD over the kit's v0.10.0 one.
        cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f",
                        str(Path(source) / "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"))
        certs = state / "certs"
        certificates(certs, "lws-test-ca")
        webhook, health = free_port(), free_port()
        # Everything the manager would write or read from fixed paths is pointed at the test's
        # folder or turned off: certificates (no internal cert manager), metrics ("0": no
        # server, so no metrics certificate), leader election (its lease namespace).
        (state / "config.yaml").write_text(yaml.safe_dump({
            "apiVersion": "config.lws.x-k8s.io/v1alpha1", "kind": "Configuration",
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"}, "metrics": {"bindAddress": "0"},
            "webhook": {"host": "127.0.0.1", "port": webhook, "certDir": str(certs)},
            "leaderElection": {"leaderElect": False}, "internalCertManagement": {"enable": False}}))
        kubeconfig = state / "kubeconfig"
        kubeconfig.write_text(cluster.kubectl("config", "view", "--raw", "--minify").stdout)
        log = (state / "lws.log").open("w")
        manager = subprocess.Popen([binary, "--config", str(state / "config.yaml"), "--kubeconfig", str(kubeconfig)],
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=state,
                                   env={**os.environ, "HOME": str(state)})
        hooks, paths = _webhooks(Path(source), webhook, (certs / "ca.crt").read_bytes())
        deadline = time.monotonic() + 120
        while not all(_served(webhook, p, certs / "ca.crt") for p in paths):
            assert manager.poll() is None, f"the LWS controller exited {manager.returncode}:\n" \
                                           f"{(state / 'lws.log').read_text()[-3000:]}"
            assert time.monotonic() < deadline, "the LWS controller's webhooks not served after 120 s"
            time.sleep(0.5)
        cluster.kubectl("apply", "-f", "-", input=hooks)
        grant(cluster, NS, "alice")
        yield cluster, state / "lws.log"
    finally:
        if manager is not None and manager.poll() is None:
            os.killpg(manager.pid, signal.SIGTERM)
            manager.wait(timeout=60)
        subprocess.run([str(SCRIPT), "down", str(state / "cluster")], env=env, capture_output=True, timeout=120,
                       check=False)


def _selector(labels: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _lws_label_keys() -> dict[str, str]:
    """The LWS pod labels the renderer reads, by its own constants, and as the generator
    (tools/gen_lws_pod_labels.py) derived them from the LWS source."""
    from manifesto.render.k8s.model import GROUP_KEY
    from manifesto.render.k8s.workload import LWS_NAME_LABEL
    from manifesto.resolve.names import LWS_GROUP_INDEX_LABEL, LWS_WORKER_INDEX_LABEL

    table = json.loads((kit.REPO_ROOT / "tests/data/lws-v0.10.0-pod-labels.json").read_text())["lws_labels"]
    assert (table["SetNameLabelKey"], table["GroupIndexLabelKey"], table["WorkerIndexLabelKey"]) == \
        (LWS_NAME_LABEL, LWS_GROUP_INDEX_LABEL, LWS_WORKER_INDEX_LABEL)
    return {"name": LWS_NAME_LABEL, "group": LWS_GROUP_INDEX_LABEL, "worker": LWS_WORKER_INDEX_LABEL,
            "group_key": GROUP_KEY}


def _lws_health(live: dict) -> dict:
    """The Argo CD health check the project ships for LeaderWorkerSets, run on ``live``."""
    import importlib.util

    module = importlib.util.spec_from_file_location("lua_health", kit.REPO_ROOT / "tests" / "argocd" / "lua_health.py")
    lua = importlib.util.module_from_spec(module)
    module.loader.exec_module(lua)
    script = kit.REPO_ROOT / "manifesto/data/argocd/resource_customizations/leaderworkerset.x-k8s.io/LeaderWorkerSet/health.lua"
    return lua.run_health(script.read_text(encoding="utf-8"), live)


def _ready_pod(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", []))


@pytest.mark.parametrize("case", sorted(ARTIFACTS))
def test_lws_controller_runs_the_artifact(lws_cluster, case, tmp_path):
    cluster, log = lws_cluster
    artifact, spec = (kit.REPO_ROOT / p for p in ARTIFACTS[case])
    docs = documents(artifact)
    sets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "LeaderWorkerSet"}
    assert sets and {d["metadata"]["namespace"] for d in docs} == {NS}
    keys = _lws_label_keys()
    cluster.kubectl("apply", "--server-side", "-f", str(artifact))  # through the LWS webhooks
    try:
        started = time.monotonic()
        ready = Manifesto(cluster, tmp_path)("ready", str(spec), "--cluster", str(CLUSTER_PROFILE), "--namespace",
                                             NS, "--user", "example-user", "--context", "admin", "--timeout", "180",
                                             cwd=tmp_path, timeout=300)
        if ready.returncode != 0:
            seen = cluster.kubectl("get", "leaderworkersets,statefulsets,pods,events", "-n", NS, "-o", "wide",
                                   check=False).stdout
            pytest.fail(f"ready failed:\n{ready.stderr[-2000:]}\n--- the cluster:\n{seen[-6000:]}\n"
                        f"--- the LWS controller's log:\n{log.read_text()[-3000:]}", pytrace=False)
        waited = time.monotonic() - started

        # `ready` returned: every LeaderWorkerSet is Available and every pod it made is Ready.
        pods_of: dict[str, list[dict]] = {}
        for name, lws in sets.items():
            live = cluster.get("leaderworkersets.leaderworkerset.x-k8s.io", "-n", NS, name)
            available = [c for c in live["status"].get("conditions", []) if c["type"] == "Available"]
            assert [c["status"] for c in available] == ["True"], (name, live["status"], waited)
            # The Argo CD health check `status` runs, on the status v0.8.0 writes (no observedGeneration).
            assert _lws_health(live)["status"] == "Healthy", (_lws_health(live), live["status"])
            replicas = lws["spec"].get("replicas", 1)
            size = lws["spec"]["leaderWorkerTemplate"].get("size", 1)
            pods = cluster.get("pods", "-n", NS, "-l", f"{keys['name']}={name}")["items"]
            assert len(pods) == replicas * size, [p["metadata"]["name"] for p in pods]
            assert all(_ready_pod(p) and p["spec"].get("nodeName") for p in pods)
            # The StatefulSets: the leaders' (named after the set) and one of workers per group.
            owners = {p["metadata"]["name"]: p["metadata"]["ownerReferences"][0] for p in pods}
            assert {(o["kind"], o["name"]) for o in owners.values()} == \
                {("StatefulSet", name)} | {("StatefulSet", f"{name}-{g}") for g in range(replicas) if size > 1}
            for pod in pods:
                labels = pod["metadata"]["labels"]
                leader = owners[pod["metadata"]["name"]]["name"] == name
                group, _, worker = pod["metadata"]["name"].removeprefix(name + "-").partition("-")
                assert labels.get(keys["name"]) == name
                assert labels.get(keys["group"]) == group
                assert labels.get(keys["worker"]) == ("0" if leader else worker)
                assert labels.get(keys["group_key"]), pod["metadata"]["name"]
            pods_of[name] = pods

        # Which pods serve, from the template each pod was made from (the leaders' StatefulSet
        # uses the leader template when the set has one) and what the real controller made.
        def serving(name: str) -> set[str]:
            template = sets[name]["spec"]["leaderWorkerTemplate"]
            out = set()
            for pod in pods_of[name]:
                leader = pod["metadata"]["ownerReferences"][0]["name"] == name
                made_from = template.get("leaderTemplate") if leader and "leaderTemplate" in template \
                    else template["workerTemplate"]
                if made_from["metadata"]["labels"].get(SERVING) == "true":
                    out.add(pod["metadata"]["name"])
            return out

        def selected(labels: dict) -> set[str]:
            return {p["metadata"]["name"] for p in cluster.get("pods", "-n", NS, "-l", _selector(labels))["items"]}

        role_of = {n: d["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]["manifesto.llm-d.ai/role"]
                   for n, d in sets.items()}
        services = [d for d in docs if d["kind"] == "Service" and "manifesto.llm-d.ai/role" in d["spec"]["selector"]]
        assert {s["spec"]["selector"]["manifesto.llm-d.ai/role"] for s in services} == set(role_of.values())
        for service in services:
            (name,) = [n for n, r in role_of.items() if r == service["spec"]["selector"]["manifesto.llm-d.ai/role"]]
            assert serving(name), name
            assert selected(service["spec"]["selector"]) == serving(name), service["metadata"]["name"]
        (pool,) = [d for d in docs if d["kind"] == "InferencePool"]
        assert selected(pool["spec"]["selector"]["matchLabels"]) == set().union(*(serving(n) for n in sets))
    finally:
        cluster.kubectl("delete", "-f", str(artifact), "--ignore-not-found", "--wait=true", "--timeout=120s",
                        check=False)
        instances = {d["metadata"]["labels"]["app.kubernetes.io/instance"] for d in sets.values()}
        cluster.kubectl("wait", "--for=delete", "pods", "-n", NS, "-l",
                        f"app.kubernetes.io/instance in ({','.join(sorted(instances))})", "--timeout=120s", check=False)


def test_the_longest_lws_name_the_renderer_allows_gets_its_pods(lws_cluster):
    """The renderer's name budget for a LeaderWorkerSet (render/k8s/validity.py: its pods'
    names, and the controller-revision-hash label of its workers' StatefulSet
    ``<name>-<group>``) holds on the real controllers: at the longest name it allows, the LWS
    controller and the StatefulSet controller create every pod. One character more is refused
    at render time (whether the real controller would then fail depends on its hash's length)."""
    from manifesto.render.k8s.validity import check_objects
    from manifesto.errors import RenderCheckError

    cluster, _ = lws_cluster
    artifact = kit.REPO_ROOT / ARTIFACTS["pd-pair"][0]
    (lws,) = [d for d in documents(artifact) if d["kind"] == "LeaderWorkerSet"
              and d["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]["manifesto.llm-d.ai/role"] == "decode"]
    assert lws["spec"]["leaderWorkerTemplate"]["size"] > 1  # a workers' StatefulSet per group

    def named(length: int) -> dict:
        obj = json.loads(json.dumps(lws))
        obj["metadata"]["name"] = ("lws-limit-" + "x" * length)[:length]
        return obj

    longest = max(n for n in range(20, 64) if _renders(check_objects, RenderCheckError, named(n)))
    assert not _renders(check_objects, RenderCheckError, named(longest + 1))
    obj = named(longest)
    name = obj["metadata"]["name"]
    cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(obj))
    try:
        want = obj["spec"].get("replicas", 1) * obj["spec"]["leaderWorkerTemplate"]["size"]
        deadline = time.monotonic() + 120
        while True:
            pods = cluster.get("pods", "-n", NS, "-l", f"leaderworkerset.sigs.k8s.io/name={name}")["items"]
            if len(pods) == want:
                break
            failed = [e["message"] for e in cluster.get("events", "-n", NS, "--field-selector", "reason=FailedCreate")["items"]
                      if e["involvedObject"]["name"].startswith(name)]
            assert not failed, failed
            assert time.monotonic() < deadline, f"{len(pods)}/{want} pods of {name} after 120 s"
            time.sleep(0.5)
    finally:
        cluster.kubectl("delete", "leaderworkersets.leaderworkerset.x-k8s.io", "-n", NS, name, "--ignore-not-found",
                        "--wait=true", check=False)
        cluster.kubectl("wait", "--for=delete", "pods", "-n", NS, "-l", f"leaderworkerset.sigs.k8s.io/name={name}",
                        "--timeout=120s", check=False)


def _renders(check_objects, error, obj: dict) -> bool:
    try:
        check_objects([obj])
    except error:
        return False
    return True


def test_ready_waits_for_a_template_change_to_roll_out(lws_cluster, tmp_path):
    """After a template change, `ready` returns only once every pod of the LeaderWorkerSet
    comes from the new template (the real controller's rolling update, its status)."""
    cluster, _ = lws_cluster
    artifact, spec = (kit.REPO_ROOT / p for p in ARTIFACTS["aggregated-multinode"])
    docs = documents(artifact)
    (lws,) = [d for d in docs if d["kind"] == "LeaderWorkerSet"]
    name = lws["metadata"]["name"]
    run = Manifesto(cluster, tmp_path)
    args = ("ready", str(spec), "--cluster", str(CLUSTER_PROFILE), "--namespace", NS, "--user", "example-user",
            "--context", "admin", "--timeout", "180")
    cluster.kubectl("apply", "--server-side", "-f", str(artifact))
    try:
        ok(run(*args, cwd=tmp_path, timeout=300))
        before = {p["metadata"]["uid"] for p in cluster.get("pods", "-n", NS, "-l", f"leaderworkerset.sigs.k8s.io/name={name}")["items"]}
        changed = json.loads(json.dumps(lws))
        for template in ("leaderTemplate", "workerTemplate"):
            meta = changed["spec"]["leaderWorkerTemplate"][template]["metadata"]
            meta.setdefault("annotations", {})["manifesto-test/revision"] = "2"
        cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(changed))
        ready = run(*args, cwd=tmp_path, timeout=300)
        pods = cluster.get("pods", "-n", NS, "-l", f"leaderworkerset.sigs.k8s.io/name={name}")["items"]
        assert ready.returncode == 0, ready.stderr
        assert len(pods) == lws["spec"]["leaderWorkerTemplate"]["size"]
        stale = [p["metadata"]["name"] for p in pods
                 if p["metadata"]["uid"] in before
                 or (p["metadata"].get("annotations") or {}).get("manifesto-test/revision") != "2"
                 or not _ready_pod(p)]
        assert not stale, f"ready returned with pods of the old template: {stale}\n{ready.stderr}"
    finally:
        cluster.kubectl("delete", "-f", str(artifact), "--ignore-not-found", "--wait=true", "--timeout=120s",
                        check=False)
        cluster.kubectl("wait", "--for=delete", "pods", "-n", NS, "-l", f"leaderworkerset.sigs.k8s.io/name={name}",
                        "--timeout=120s", check=False)
