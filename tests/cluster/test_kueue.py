"""Kueue's own controller manager (v0.17.0, the release the Go module proxy serves; built
from tools/kueue-go by `tools/testcluster build-kueue`) on a control plane of its own, with
its webhooks served on loopback: the Kueue-labelled artifact is applied, and Kueue admits
what it queues (a Workload per LeaderWorkerSet group and per pod of the Deployment, each
Admitted by the ClusterQueue behind the artifact's LocalQueue), and the gated pod runs.

A cluster of its own, since Kueue v0.17.0's CRDs (localqueues, clusterqueues,
resourceflavors and the rest) would replace the v0.19.2 ones the schema kit pins and the
server-side dry run of every artifact checks against (tests/cluster/test_server_dry_run.py).

Two paths Kueue reads are fixed in its source: with internal certificate management off it
loads its metrics certificate from /etc/kueue/metrics/certs (cmd/kueue/main.go), so the
manager runs in a private mount namespace (`unshare`) where that path holds the test's
certificate; and the on-demand visibility server (/visibility/tls.crt) is turned off with
its feature gate.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

import kit
from realkube import MARKS, SCRIPT, Cluster, Manifesto, cache_dir, certificates, free_port, ok

pytestmark = MARKS

_CACHE = cache_dir()
NS = "kueue-golden"
QUEUE = "golden-gpu-queue"  # tests/golden/kueue-lws/cluster.yaml: kueue.local_queue
#: The webhooks of the integrations this test enables, and of Kueue's own kinds.
HOOKS = ("batch-v1-job", "v1-pod", "apps-v1-deployment", "apps-v1-statefulset", "leaderworkerset",
         "kueue-x-k8s-io")


def _webhooks(source: Path, port: int, ca: bytes) -> str:
    """Kueue's webhook configurations (config/components/webhook/manifests.yaml of its
    module), each reached at https://127.0.0.1:PORT/<its path> instead of its Service."""
    out = []
    for doc in yaml.safe_load_all((source / "config/components/webhook/manifests.yaml").read_text()):
        if not doc:
            continue
        doc["metadata"]["name"] = "kueue-" + doc["metadata"]["name"]
        hooks = []
        for hook in doc["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            if any(h in path for h in HOOKS):
                hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}",
                                        "caBundle": base64.b64encode(ca).decode()}
                hooks.append(hook)
        doc["webhooks"] = hooks
        out.append(doc)
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": out})


@pytest.fixture(scope="module")
def kueue_cluster(tmp_path_factory):
    if os.environ.get("CI") != "true":
        for tool in ("go", "openssl", "unshare"):
            if shutil.which(tool) is None:
                kit.unavailable(f"{tool} is not installed: the Kueue test needs it")
    kit.require_shared("k8s-schemas/crds")
    state = tmp_path_factory.mktemp("kueue")
    env = {**os.environ, "TESTCLUSTER_CACHE": str(_CACHE)}
    built = subprocess.run([str(SCRIPT), "build-kueue"], env=env, capture_output=True, text=True, timeout=3600,
                           check=False)
    if built.returncode != 0:
        pytest.fail(f"tools/testcluster build-kueue failed:\n{built.stderr[-4000:]}", pytrace=False)
    binary, source = built.stdout.split()
    up = subprocess.run([str(SCRIPT), "up", str(state / "cluster")], env=env, capture_output=True, text=True,
                        timeout=600, check=False)
    if up.returncode != 0:
        pytest.fail(f"tools/testcluster up failed:\n{up.stderr[-4000:]}", pytrace=False)
    manager = None
    try:
        cluster = Cluster.from_env(state / "cluster" / "env")
        cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f",
                        str(Path(source) / "config/components/crd/bases"))
        # Kueue sets up its indexes at start-up and exits if a kind it indexes (Workload) is
        # not served yet: wait until the API server serves every CRD just applied.
        cluster.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=120s")
        cluster.ensure_namespace("kueue-system")
        certs = state / "certs"
        certificates(certs, "kueue-test-ca")
        webhook, health = free_port(), free_port()
        (state / "config.yaml").write_text(yaml.safe_dump({
            "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "namespace": "kueue-system",
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"}, "metrics": {"bindAddress": "0"},
            "webhook": {"host": "127.0.0.1", "port": webhook, "certDir": str(certs)},
            "leaderElection": {"leaderElect": False}, "internalCertManagement": {"enable": False},
            "integrations": {"frameworks": ["batch/job", "pod", "deployment", "statefulset",
                                            "leaderworkerset.x-k8s.io/leaderworkerset"]}}))
        kubeconfig = state / "kubeconfig"
        kubeconfig.write_text(cluster.kubectl("config", "view", "--raw", "--minify").stdout)
        script = ("mount -t tmpfs tmpfs /etc && mkdir -p /etc/kueue/metrics/certs && "
                  f"cp {certs}/tls.crt {certs}/tls.key /etc/kueue/metrics/certs/ && "
                  f"exec {binary} --config {state}/config.yaml --kubeconfig {kubeconfig} "
                  "--feature-gates=VisibilityOnDemand=false")
        log = (state / "kueue.log").open("w")
        manager = subprocess.Popen(["unshare", "--map-root-user", "--mount", "--propagation", "private",
                                    "sh", "-c", script], stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{health}/readyz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert manager.poll() is None, f"Kueue exited {manager.returncode}:\n{(state / 'kueue.log').read_text()[-3000:]}"
            assert time.monotonic() < deadline, "Kueue not ready after 120 s"
            time.sleep(0.5)
        cluster.kubectl("apply", "-f", "-", input=_webhooks(Path(source), webhook, (certs / "ca.crt").read_bytes()))
        yield cluster
    finally:
        if manager is not None and manager.poll() is None:
            os.killpg(manager.pid, signal.SIGTERM)
            manager.wait(timeout=60)
        subprocess.run([str(SCRIPT), "down", str(state / "cluster")], env=env, capture_output=True, timeout=120,
                       check=False)


def _queues(namespace: str) -> str:
    flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}}
    quota = [{"name": r, "nominalQuota": q} for r, q in
             (("cpu", 512), ("memory", "4Ti"), ("nvidia.com/gpu", 32), ("ephemeral-storage", "8Ti"))]
    cluster_queue = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                     "metadata": {"name": "gpu-cluster-queue"},
                     "spec": {"namespaceSelector": {}, "resourceGroups": [{
                         "coveredResources": [q["name"] for q in quota],
                         "flavors": [{"name": "default-flavor", "resources": quota}]}]}}
    local = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
             "metadata": {"name": QUEUE, "namespace": namespace}, "spec": {"clusterQueue": "gpu-cluster-queue"}}
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [flavor, cluster_queue, local]})


def test_kueue_admits_the_kueue_labelled_artifact(kueue_cluster, tmp_path):
    cluster = kueue_cluster
    cluster.ensure_namespace(NS)
    cluster.kubectl("apply", "-f", "-", input=_queues(NS))
    golden = kit.REPO_ROOT / "tests/golden/kueue-lws"
    target = tmp_path / "kueue-lws.yaml"
    ok(Manifesto(cluster, tmp_path)("render", "file", str(golden / "model.yaml"), "--cluster",
                                    str(golden / "cluster.yaml"), "--namespace", NS, "--user", "kueue-test",
                                    "-o", str(target), cwd=tmp_path))
    docs = [d for d in yaml.safe_load_all(target.read_text()) if isinstance(d, dict)]
    queued = {(d["kind"], d["metadata"]["name"]) for d in docs
              if (d["metadata"].get("labels") or {}).get("kueue.x-k8s.io/queue-name") == QUEUE}
    assert {k for k, _ in queued} == {"LeaderWorkerSet", "Deployment"}, queued
    cluster.kubectl("apply", "-f", str(target))  # through Kueue's webhooks

    (lws,) = [n for k, n in queued if k == "LeaderWorkerSet"]
    (deployment,) = [n for k, n in queued if k == "Deployment"]
    deadline = time.monotonic() + 120
    while True:
        workloads = cluster.get("workloads.kueue.x-k8s.io", "-n", NS)["items"]
        admitted = {w["metadata"]["name"] for w in workloads
                    if any(c["type"] == "Admitted" and c["status"] == "True"
                           for c in (w.get("status") or {}).get("conditions", []))}
        pods = cluster.get("pods", "-n", NS, "-l", "kueue.x-k8s.io/queue-name=" + QUEUE)["items"]
        running = [p for p in pods if p["status"].get("phase") == "Running"]
        if any(n.startswith(f"leaderworkerset-{lws}-") for n in admitted) and \
                any(n.startswith(f"pod-{deployment}-") for n in admitted) and running:
            break
        states = [(w["metadata"]["name"], (w.get("status") or {}).get("conditions")) for w in workloads]
        assert time.monotonic() < deadline, f"not admitted within 120 s: {states}, pods {[p['metadata']['name'] for p in pods]}"
        time.sleep(1)
    # Every pod of the queued Deployment passed Kueue's gate: none keeps its scheduling gate.
    assert all(not p["spec"].get("schedulingGates") for p in running), running
