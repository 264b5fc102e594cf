"""Helpers for tests against the real control plane that ``tools/testcluster`` starts."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

import kit

SCRIPT = kit.REPO_ROOT / "tools" / "testcluster"

#: Every module of tests against the real cluster: one xdist group, so that one worker
#: starts one cluster for all of them.
MARKS = [pytest.mark.real_cluster, pytest.mark.integration, pytest.mark.xdist_group("real-cluster")]


def cache_dir() -> Path:
    """Where tools/testcluster keeps its binaries (the script's own default)."""
    given = os.environ.get("TESTCLUSTER_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "llm-manifesto-testcluster"


def read_env(path: Path) -> dict[str, str]:
    """DIR/env: ``export KEY='value'`` lines."""
    env = {}
    for line in path.read_text().splitlines():
        if "=" in line:
            key, _, value = line.removeprefix("export ").partition("=")
            env[key] = shlex.split(value)[0] if value else ""
    return env


@dataclass(frozen=True)
class Cluster:
    env: dict[str, str]

    @classmethod
    def from_env(cls, path: Path) -> Cluster:
        return cls(read_env(path))

    @property
    def kubeconfig(self) -> str:
        return self.env["KUBECONFIG"]

    @property
    def kubectl_path(self) -> str:
        return self.env["TESTCLUSTER_KUBECTL"]

    @property
    def bin_dir(self) -> str:
        return self.env["TESTCLUSTER_BIN"]

    def kubectl(self, *args: str, user: str = "admin", input: str | None = None,
                check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [self.kubectl_path, "--kubeconfig", self.kubeconfig, "--context", user, *args],
            input=input, capture_output=True, text=True, timeout=300, check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n"
                                 f"{proc.stderr}{proc.stdout}")
        return proc

    def get(self, *args: str, user: str = "admin") -> dict:
        return json.loads(self.kubectl("get", *args, "-o", "json", user=user).stdout)

    def ensure_namespace(self, name: str) -> None:
        doc = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        self.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(doc))


def free_port() -> int:
    """A TCP port free on 127.0.0.1 at the time of asking (for a controller's webhook or
    health server)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def certificates(folder: Path, ca_name: str) -> None:
    """A CA (``ca.crt``) and a serving certificate for 127.0.0.1 (``tls.crt``, ``tls.key``)
    made with openssl in ``folder``, for a controller's webhooks registered by URL."""
    folder.mkdir()

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
        "-out", "ca.crt", "-days", "2", "-subj", f"/CN={ca_name}")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "tls.key",
        "-out", "tls.csr", "-subj", "/CN=127.0.0.1")
    (folder / "ext").write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "tls.crt", "-days", "2", "-extfile", "ext")


def documents(path: Path) -> list[dict]:
    """The Kubernetes objects in a YAML file (documents with apiVersion and kind)."""
    try:
        docs = list(yaml.safe_load_all(path.read_text()))
    except yaml.YAMLError:
        return []
    return [d for d in docs if isinstance(d, dict) and "apiVersion" in d and "kind" in d]


def namespaces(docs: list[dict]) -> set[str]:
    return {d.get("metadata", {}).get("namespace") or "default" for d in docs
            if d["kind"] != "Namespace"}


#: Where a namespace's pods find the shared model cache: clusters/example-gb200.yaml's storage.shared_volume.
CACHE_CLAIM = "demo-model-cache"
HF_TOKEN = "hf_real_cluster_token_1"
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
    # A volume left Released by an earlier claim would never bind again; one still bound is
    # kept (deleting it would wait for its claim to go).
    found = cluster.kubectl("get", "pv", volume["metadata"]["name"], "--ignore-not-found", "-o", "json").stdout
    if found.strip() and json.loads(found).get("status", {}).get("phase") not in ("Bound", "Available", "Pending"):
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


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc


def fail(proc: subprocess.CompletedProcess, code: int = 1) -> subprocess.CompletedProcess:
    assert proc.returncode == code, f"{proc.args}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc


