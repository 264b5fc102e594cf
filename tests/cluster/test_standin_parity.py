"""The stand-in kubectl stays honest (issue 36 item 7): each behaviour the fast tests rely on
the stand-in for (manifesto/testing/fake_kubectl.py) runs in one scenario against the stand-in
and against the real API with the real kubectl, with the same assertions:

- apply's lines (created, then unchanged: `manifesto` reads that word for hf-secret);
- get: by name and by label, NotFound's words, --ignore-not-found, managedFields only with
  --show-managed-fields;
- diff: exit 0 right after apply; a field only another writer added (`kubectl label`) is no
  difference to kubectl diff (its three-way merge keeps it), yet `manifesto file diff` reports
  it from managedFields; a changed field of the file is a difference;
- the controllers' part: a Deployment's pods carry its template's labels, `wait` sees it
  Available;
- create's AlreadyExists, delete's lines, api-versions.

Where they disagreed, the stand-in was fixed (its lines carry the API group and the
namespace, apply says unchanged, diff merges as kubectl does, label is recorded in
managedFields, get leaves managedFields out unless asked).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from realkube import MARKS, Cluster

pytestmark = MARKS

NS = "parity"
MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: a, namespace: {ns}, labels: {{app: a}}}}
data: {{k: v}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: d, namespace: {ns}, labels: {{app: d}}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: d}}}}
  template:
    metadata: {{labels: {{app: d, tier: web}}}}
    spec:
      containers: [{{name: c, image: "example.invalid/app:{tag}", env: [{{name: A, value: "1"}}]}}]
"""


JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: j, namespace: {ns}}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: "example.invalid/probe:1"}}]
"""


class Backend:
    """kubectl and manifesto against one backend: the stand-in or the real API."""

    def __init__(self, name: str, tmp: Path, cluster: Cluster | None) -> None:
        self.name = name
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        self.env = {"PATH": f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp),
                    "XDG_CACHE_HOME": str(tmp / "cache"), "XDG_CONFIG_HOME": str(tmp / "xdg"),
                    "MANIFESTO_CONFIG_HOME": str(tmp / "config"), "MANIFESTO_KUBECTL_RETRIES": "0"}
        if cluster is None:
            fake = Path(sys.executable).parent / "manifesto-fake-kubectl"
            subprocess.run([str(fake), "--install", str(bin_dir)], check=True, capture_output=True)
            self.env["FAKE_KUBE_DIR"] = str(tmp / "fake-kube")
        else:
            (bin_dir / "kubectl").symlink_to(cluster.kubectl_path)
            self.env["KUBECONFIG"] = cluster.kubeconfig
            cluster.kubectl("delete", "namespace", NS, "--ignore-not-found", "--wait=true")
            cluster.ensure_namespace(NS)

    def kubectl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["kubectl", "--context", "admin", *args], env=self.env, capture_output=True,
                              text=True, timeout=120, check=False)

    def manifesto(self, *args: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "manifesto", *args, "--context", "admin"], env=self.env,
                              cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(params=["stand-in", "real"])
def backend(request, tmp_path) -> Backend:
    cluster = request.getfixturevalue("real_cluster") if request.param == "real" else None
    return Backend(request.param, tmp_path, cluster)


def _ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args}\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_the_stand_in_and_the_real_api_agree(backend, tmp_path):
    k = backend.kubectl
    manifest = tmp_path / "m.yaml"
    manifest.write_text(MANIFEST.format(ns=NS, tag="1"))

    # apply: created, then unchanged
    assert _ok(k("apply", "-f", str(manifest))).stdout == "configmap/a created\ndeployment.apps/d created\n"
    assert _ok(k("apply", "-f", str(manifest))).stdout == "configmap/a unchanged\ndeployment.apps/d unchanged\n"

    # get: managedFields only when asked, and then ours is kubectl-client-side-apply
    live = json.loads(_ok(k("-n", NS, "get", "deployments.apps", "d", "-o", "json")).stdout)
    assert "managedFields" not in live["metadata"] and live["spec"]["replicas"] == 2
    live = json.loads(_ok(k("-n", NS, "get", "deployments.apps", "d", "--show-managed-fields", "-o", "json")).stdout)
    assert "kubectl-client-side-apply" in {m["manager"] for m in live["metadata"]["managedFields"]}
    listed = json.loads(_ok(k("-n", NS, "get", "configmaps", "-l", "app=a", "-o", "json")).stdout)
    assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
    missing = k("-n", NS, "get", "deployments.apps", "nope", "-o", "json")
    assert (missing.returncode, missing.stderr) == (1, 'Error from server (NotFound): deployments.apps "nope" not found\n')
    assert _ok(k("-n", NS, "get", "deployments.apps", "nope", "--ignore-not-found", "-o", "json")).stdout == ""

    # the controllers' part
    waited = _ok(k("-n", NS, "wait", "--for=condition=Available", "deployments.apps/d", "--timeout=120s"))
    assert waited.stdout == "deployment.apps/d condition met\n"
    pods = json.loads(_ok(k("-n", NS, "get", "pods", "-l", "app=d", "-o", "json")).stdout)["items"]
    assert len(pods) == 2 and all(p["metadata"]["labels"].items() >= {"app": "d", "tier": "web"}.items() for p in pods)

    # diff: none after apply; a label only another writer added is none to kubectl diff, but
    # manifesto's diff names it from managedFields; a changed field of the file is one.
    assert _ok(k("-n", NS, "diff", "-f", str(manifest))).stdout == ""
    assert _ok(k("-n", NS, "label", "deployments.apps/d", "added=live")).stdout == "deployment.apps/d labeled\n"
    assert k("-n", NS, "diff", "-f", str(manifest)).returncode == 0
    found = backend.manifesto("file", "diff", str(manifest), cwd=tmp_path)
    assert found.returncode == 1, found.stderr
    assert found.stdout.strip().splitlines() == [
        '# Deployment d: metadata.labels.added = "live", set live by kubectl-label, is not in the file'], found.stdout
    changed = tmp_path / "changed.yaml"
    changed.write_text(MANIFEST.format(ns=NS, tag="2"))
    diff = k("-n", NS, "diff", "-f", str(changed))
    changes = [line for line in diff.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert diff.returncode == 1 and any("example.invalid/app:2" in line for line in changes), diff.stdout
    assert not any("added" in line for line in changes), diff.stdout  # the live label is kept

    # a Job created runs to completion (what `test e2e` waits for)
    job = tmp_path / "job.yaml"
    job.write_text(JOB.format(ns=NS))
    assert _ok(k("create", "-f", str(job))).stdout == "job.batch/j created\n"
    done = _ok(k("-n", NS, "wait", "--for=condition=Complete", "jobs.batch/j", "--timeout=120s"))
    assert done.stdout == "job.batch/j condition met\n"

    # create of what exists; delete's lines (by name, by label); api-versions
    again = k("create", "-f", str(manifest))
    assert again.returncode == 1
    assert again.stderr.splitlines()[0] == (f'Error from server (AlreadyExists): error when creating "{manifest}": '
                                            'configmaps "a" already exists')
    # by label, forced (stop --now): kubectl says "force deleted"
    pods = json.loads(_ok(k("-n", NS, "get", "pods", "-l", "app=d", "-o", "json")).stdout)["items"]
    gone = _ok(k("-n", NS, "delete", "pods", "-l", "app=d", "--ignore-not-found", "--grace-period=0", "--force"))
    assert pods and sorted(gone.stdout.splitlines()) == sorted(
        f'pod "{p["metadata"]["name"]}" force deleted from {NS} namespace' for p in pods), gone.stdout
    deleted = _ok(k("-n", NS, "delete", "--ignore-not-found", "deployments.apps/d", "configmaps/a"))
    assert deleted.stdout.splitlines() == [f'deployment.apps "d" deleted from {NS} namespace',
                                           f'configmap "a" deleted from {NS} namespace']
    assert _ok(k("-n", NS, "delete", "--ignore-not-found", "deployments.apps/d")).stdout == ""
    versions = _ok(k("api-versions")).stdout.split()
    assert {"v1", "apps/v1", "leaderworkerset.x-k8s.io/v1", "inference.networking.k8s.io/v1"} <= set(versions)
