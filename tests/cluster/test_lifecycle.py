"""The lifecycle of a deployment target on the real API, with the real kubectl:
``deploy`` -> ``ready`` -> ``status`` -> ``diff`` (no drift right after deploy: the
server's defaults are not drift) -> a live edit is drift -> ``servers`` -> ``stop``
(deletes everything it created and nothing else), and the owner guard between two users.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from realkube import MARKS, Cluster

pytestmark = MARKS

NS = "lifecycle"
HF_TOKEN = "hf_real_cluster_token_1"
TARGET = "//:qwen3-0-6b-example-gb200"
INSTANCE = "qwen3-0-6b"
CACHE_CLAIM = "demo-model-cache"  # clusters/example-gb200.yaml: storage.shared_volume
CRD_GROUPS = ["leaderworkerset.x-k8s.io", "disaggregatedset.x-k8s.io", "inference.networking.k8s.io",
              "inference.networking.x-k8s.io", "gateway.networking.k8s.io", "networking.istio.io",
              "monitoring.coreos.com", "kueue.x-k8s.io", "llm-d.ai"]


def grant(cluster: Cluster, namespace: str, *users: str) -> None:
    """What a cluster administrator gives a team: the built-in ``admin`` role in its
    namespace (which aggregates the rights on the CRDs the artifacts use), and the shared
    model cache the cluster profile names, bound to a volume (its claim is "managed
    elsewhere", so the pods can be scheduled)."""
    cluster.ensure_namespace(namespace)
    crds = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "testcluster-crds-admin",
                         "labels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
            "rules": [{"apiGroups": CRD_GROUPS, "resources": ["*"], "verbs": ["*"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "team-admin", "namespace": namespace},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u} for u in users]}
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"{namespace}-model-cache"},
              "spec": {"capacity": {"storage": "1Ti"}, "accessModes": ["ReadWriteMany"], "storageClassName": "",
                       "hostPath": {"path": "/nonexistent"},
                       "claimRef": {"namespace": namespace, "name": CACHE_CLAIM}}}
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": CACHE_CLAIM, "namespace": namespace},
             "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": f"{namespace}-model-cache",
                      "resources": {"requests": {"storage": "1Ti"}}}}
    # A volume left Released by an earlier session's claim would never bind again.
    cluster.kubectl("delete", "pv", volume["metadata"]["name"], "--ignore-not-found", "--wait=true")
    cluster.kubectl("apply", "--server-side", "-f", "-",
                    input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [crds, binding, volume, claim]}))


class Manifesto:
    """``manifesto`` in a subprocess whose PATH has the real kubectl and whose kubeconfig
    reaches the test cluster."""

    def __init__(self, cluster: Cluster, tmp: Path) -> None:
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "kubectl").symlink_to(cluster.kubectl_path)
        self.env = {
            "PATH": f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": str(tmp), "KUBECONFIG": cluster.kubeconfig, "HF_TOKEN": HF_TOKEN,
            "MANIFESTO_CONFIG_HOME": str(tmp / "config"), "XDG_CACHE_HOME": str(tmp / "cache"),
            "XDG_CONFIG_HOME": str(tmp / "xdg"), "MANIFESTO_SOURCE_COMMIT": "off",
            "MANIFESTO_KUBECTL_RETRIES": "0",
        }

    def __call__(self, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "manifesto", *args], cwd=cwd, env=self.env,
                              capture_output=True, text=True, timeout=timeout, check=False)


def _ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc


def _objects(cluster: Cluster, namespace: str) -> set[tuple[str, str]]:
    """(kind, name) of every object of the kinds an instance creates in namespace."""
    kinds = "deployments.apps,services,configmaps,serviceaccounts,roles.rbac.authorization.k8s.io," \
            "rolebindings.rbac.authorization.k8s.io,secrets,inferencepools.inference.networking.k8s.io," \
            "leaderworkersets.leaderworkerset.x-k8s.io"
    items = cluster.get(kinds, "-n", namespace)["items"]
    return {(o["kind"], o["metadata"]["name"]) for o in items}


@pytest.fixture(scope="module")
def workspace(real_cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lifecycle")
    grant(real_cluster, NS, "alice", "bob")
    run = Manifesto(real_cluster, tmp)
    _ok(run("init", "ws", "--model", "qwen/qwen3-0.6b", "--cluster", "example-gb200", "--user", "alice",
            "--namespace", NS, "--context", "alice", cwd=tmp))
    ws = tmp / "ws"
    _ok(run("build", cwd=ws))
    return run, ws


def _fail(proc: subprocess.CompletedProcess, code: int = 1) -> subprocess.CompletedProcess:
    assert proc.returncode == code, f"{proc.args}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc


def test_lifecycle_of_a_deployment_target(real_cluster, workspace):
    run, ws = workspace
    # A bystander in the namespace: stop must leave it alone.
    real_cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bystander", "namespace": NS},
         "data": {"k": "v"}}))
    before = _objects(real_cluster, NS)

    _ok(run("deploy", TARGET, "--context", "alice", cwd=ws))
    _ok(run("ready", TARGET, "--context", "alice", "--timeout", "120", cwd=ws))
    pods = real_cluster.get("pods", "-n", NS, "-l", f"app.kubernetes.io/instance={INSTANCE}")["items"]
    assert pods and all(p["status"]["phase"] == "Running" and p["spec"]["nodeName"] for p in pods)

    # Right after deploy the live objects carry the server's defaults: not drift.
    status = _ok(run("status", TARGET, "--context", "alice", "-o", "json", cwd=ws))
    report = json.loads(status.stdout)
    assert report["status"] == "in-sync", status.stdout
    _ok(run("diff", TARGET, "--context", "alice", cwd=ws))

    # A live edit by someone else is drift, for status (naming the field) and for diff.
    real_cluster.kubectl("-n", NS, "set", "image", f"deployment/{INSTANCE}-decode", "vllm=evil/image:1")
    report = json.loads(_fail(run("status", TARGET, "--context", "alice", "-o", "json", cwd=ws)).stdout)
    assert report["status"] == "drifted"
    drifted = {o["name"]: [d["path"] for d in o["differences"]] for o in report["objects"] if o["status"] != "in-sync"}
    assert drifted == {f"{INSTANCE}-decode": ["spec.template.spec.containers[0].image"]}, drifted
    diff = _fail(run("diff", TARGET, "--context", "alice", cwd=ws))
    assert "evil/image:1" in diff.stdout
    _ok(run("deploy", TARGET, "--context", "alice", cwd=ws))  # puts it back
    _ok(run("diff", TARGET, "--context", "alice", cwd=ws))

    servers = json.loads(_ok(run("servers", "-n", NS, "--context", "alice", "-o", "json", cwd=ws)).stdout)
    assert [(s["instance"], s["owner"]) for s in servers] == [(INSTANCE, "alice")], servers

    _ok(run("stop", TARGET, "--context", "alice", cwd=ws))
    gone = real_cluster.get("pods", "-n", NS, "-l", f"app.kubernetes.io/instance={INSTANCE}")["items"]
    after = _objects(real_cluster, NS)
    # hf-secret stays: it is the namespace's, shared by every instance in it.
    assert after - {("Secret", "hf-secret")} == before, (before, after)
    assert not [p for p in gone if not p["metadata"].get("deletionTimestamp")]


def test_owner_guard_between_two_users(real_cluster, workspace, tmp_path):
    run, ws = workspace
    _ok(run("deploy", TARGET, "--context", "alice", cwd=ws))
    # bob renders the same release for himself into the same namespace: refused, naming alice.
    spec = "qwen/qwen3-0.6b"
    args = ("--cluster", "example-gb200", "--namespace", NS, "--user", "bob", "--context", "bob")
    refused = _fail(run("deploy", spec, *args, cwd=tmp_path))
    assert "alice" in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
    live = real_cluster.get("deployment", f"{INSTANCE}-decode", "-n", NS)
    assert live["metadata"]["labels"]["llm-d.ai/owner"] == "alice"
    _ok(run("deploy", spec, *args, "--take-over", cwd=tmp_path))
    live = real_cluster.get("deployment", f"{INSTANCE}-decode", "-n", NS)
    assert live["metadata"]["labels"]["llm-d.ai/owner"] == "bob"
    _ok(run("stop", "--instance", INSTANCE, "-n", NS, "--context", "bob", cwd=tmp_path))


def test_file_workflow(real_cluster, workspace, tmp_path):
    run, _ = workspace
    target = tmp_path / "render.yaml"
    _ok(run("render", "file", "qwen/qwen3-0.6b", "--cluster", "example-gb200", "--namespace", NS,
            "--user", "alice", "-o", str(target), cwd=tmp_path))
    _ok(run("file", "apply", str(target), "--context", "alice", cwd=tmp_path))
    _ok(run("file", "diff", str(target), "--context", "alice", cwd=tmp_path))
    real_cluster.kubectl("-n", NS, "scale", f"deployment/{INSTANCE}-decode", "--replicas=3")
    _fail(run("file", "diff", str(target), "--context", "alice", cwd=tmp_path))
    _ok(run("file", "delete", str(target), "--context", "alice", "--now", cwd=tmp_path))
    assert not real_cluster.get("deployments", "-n", NS, "-l", f"app.kubernetes.io/instance={INSTANCE}")["items"]


def test_a_user_without_rights_gets_one_clear_error(real_cluster, workspace, tmp_path):
    run, _ = workspace
    real_cluster.ensure_namespace("no-rights")
    proc = _fail(run("servers", "-n", "no-rights", "--context", "bob", cwd=tmp_path))
    assert "forbidden" in proc.stderr.lower() and "bob" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
