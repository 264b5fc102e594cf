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
TARGET = "qwen3-0-6b-example-gb200"
CRD_GROUPS = ["leaderworkerset.x-k8s.io", "disaggregatedset.x-k8s.io", "inference.networking.k8s.io",
              "inference.networking.x-k8s.io", "gateway.networking.k8s.io", "networking.istio.io",
              "monitoring.coreos.com", "kueue.x-k8s.io", "llm-d.ai"]


def grant(cluster: Cluster, namespace: str, *users: str) -> None:
    """What a cluster administrator gives a team: the built-in ``admin`` role in its
    namespace, which aggregates the rights on the CRDs the artifacts use."""
    cluster.ensure_namespace(namespace)
    crds = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "testcluster-crds-admin",
                         "labels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
            "rules": [{"apiGroups": CRD_GROUPS, "resources": ["*"], "verbs": ["*"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "team-admin", "namespace": namespace},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u} for u in users]}
    cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                          "items": [crds, binding]}))


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
