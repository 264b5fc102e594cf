"""Helpers of the build tests: small trees in ``tmp_path`` and the real CLI in a subprocess.

The default tree renders with ``fake_renderer`` (this directory): four model
targets (two extending a base file, one without a ``.yaml`` suffix) against three
clusters, with incompatible pairs, a routing target and an excluded README.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from kit import settle_tree

HERE = Path(__file__).resolve().parent

BUILD_YAML = """\
options:
  default:
    user: test-user
    namespace: test-ns
targets:
  - kind: cluster
    path: clusters
    sources: ["*.yaml"]
  - kind: routing
    path: routing
    sources: ["*.yaml"]
  - kind: model
    path: models
    sources: ["**/*", "!**/*-base.yaml", "!**/*.md"]
"""

TREE = {
    "BUILD.yaml": BUILD_YAML,
    "models/README.md": "Specs.\n",
    "models/wide/wide-base.yaml": "accelerator: gb200\nimage: v1\n",
    "models/wide/1p1d.yaml": "extends: wide-base.yaml\nrelease: one\n",
    "models/wide/2p1d.yaml": "extends: wide-base.yaml\nrelease: two\n",
    "models/qwen/aggregated.yaml": "release: qwen\n",
    "models/qwen/laguna": "release: laguna\naccelerator: b200\n",
    "clusters/gpu.yaml": "accelerators: gb200 b200\n",
    "clusters/hopper.yaml": "accelerators: h200\n",
    "clusters/slurm.yaml": "accelerators: gb200 h200\nplatform: slurm\n",
    "routing/pick.yaml": "plugins: []\n",
}

#: Every pair of TREE and whether it renders (True) or is skipped (False).
PAIRS = {
    ("wide/1p1d.yaml", "gpu"): True,
    ("wide/1p1d.yaml", "hopper"): False,
    ("wide/1p1d.yaml", "slurm"): True,
    ("wide/2p1d.yaml", "gpu"): True,
    ("wide/2p1d.yaml", "hopper"): False,
    ("wide/2p1d.yaml", "slurm"): True,
    ("qwen/aggregated.yaml", "gpu"): True,
    ("qwen/aggregated.yaml", "hopper"): True,
    ("qwen/aggregated.yaml", "slurm"): True,
    ("qwen/laguna", "gpu"): True,
    ("qwen/laguna", "hopper"): False,
    ("qwen/laguna", "slurm"): False,
}


def write_files(root: Path, files: dict[str, str], age: float = 0) -> None:
    """Write ``files`` below ``root``; ``age`` seconds back-dates them (in-process tests)."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if age:
            stamp = time.time() - age
            os.utime(path, (stamp, stamp))


def make_tree(root: Path, extra: dict[str, str] | None = None) -> Path:
    """The default tree (plus ``extra`` files) in ``root``; returns ``root``."""
    write_files(root, {**TREE, **(extra or {})})
    return root


class Runner:
    """Runs ``python -m manifesto.build_graph`` in one tree with the fake renderer."""

    def __init__(self, root: Path, log: Path, env: dict[str, str] | None = None) -> None:
        self.root, self.log = root, log
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "MANIFESTO_BUILD_RENDERER": "fake_renderer",
            "FAKE_RENDER_LOG": str(log),
            **(env or {}),
        }

    def argv(self, *args: str, python_flags: tuple = ()) -> list[str]:
        return [sys.executable, *python_flags, "-m", "manifesto.build_graph", *args]

    def settle(self) -> None:
        """``kit.settle_tree`` of this tree: its newest file is past the build's edit window."""
        settle_tree(self.root)

    def __call__(self, *args: str, check: bool = True, python_flags: tuple = (), **env) -> subprocess.CompletedProcess:
        self.settle()
        proc = subprocess.run(self.argv(*args, python_flags=python_flags), cwd=self.root,
                              env={**self.env, **env}, capture_output=True, text=True, timeout=300)
        if check and proc.returncode != 0:
            raise AssertionError(f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        return proc

    def popen(self, *args: str, **env) -> subprocess.Popen:
        self.settle()
        return subprocess.Popen(self.argv(*args), cwd=self.root, env={**self.env, **env},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def build_json(self, *args: str, check: bool = True, **env) -> dict:
        proc = self("build", *args, "--output", "json", check=check, **env)
        return json.loads(proc.stdout)

    def renders(self) -> list[tuple[str, str]]:
        """The pairs rendered since the last call (model below models/, cluster name)."""
        if not self.log.exists():
            return []
        lines = self.log.read_text().splitlines()
        self.log.unlink()
        return sorted((m, c.removesuffix(".yaml")) for m, c in (line.split("|") for line in lines))


def artifacts(root: Path) -> dict[str, bytes]:
    """Every file below ``root/out`` except the cache and the lock, by relative path."""
    out = root / "out"
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.relative_to(out).as_posix().startswith(".")
    }


def expected_artifacts() -> set[str]:
    """The artifact paths a full build of TREE writes."""
    return {
        f"{cluster}/{model.removesuffix('.yaml')}{'.sbatch' if cluster == 'slurm' else '.yaml'}"
        for (model, cluster), ok in PAIRS.items()
        if ok
    }


def pairs_where(predicate) -> list[tuple[str, str]]:
    """Sorted pairs of TREE (rendered or skipped) whose (model, cluster) satisfy ``predicate``."""
    return sorted(p for p in PAIRS if predicate(*p))
