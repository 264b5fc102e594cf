"""Helpers for tests against the real control plane that ``tools/testcluster`` starts."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
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
