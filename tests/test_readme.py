"""The README's workflow commands, run as a user would run them.

Every ```sh block announced by ``<!-- readme-test: KIND -->`` runs under ``bash -e`` with
``manifesto`` on PATH: ``offline`` blocks in a copy of the workspace, ``kubectl`` blocks
against the scripted fake kubectl, ``walkthrough`` blocks exactly as a reader pastes them
(no HF_TOKEN and no kubectl from the harness: the block brings its own), ``slurm`` blocks
against the local Slurm kit with ``my-slurm`` in the user catalog. A block that is
announced but not run fails the test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kit import REPO_ROOT, unavailable
from kubefake import TOKEN, fake_kubectl
from test_slurm_cli import CLUSTER as SLURM_CLUSTER

pytestmark = pytest.mark.integration  # the README workflows run as processes

BIN = Path(sys.executable).parent
_BLOCK = re.compile(r"<!-- readme-test: (\w+) -->\n```sh\n(.*?)```", re.S)


def blocks(kind: str) -> list[str]:
    return [body for k, body in _BLOCK.findall((REPO_ROOT / "README.md").read_text()) if k == kind]


def test_every_announced_block_has_a_runner():
    kinds = [k for k, _ in _BLOCK.findall((REPO_ROOT / "README.md").read_text())]
    assert kinds and set(kinds) <= {"offline", "kubectl", "walkthrough", "slurm"}
    assert (REPO_ROOT / "README.md").read_text().count("<!-- readme-test:") == len(kinds)
    assert "(see below)" not in (REPO_ROOT / "README.md").read_text()


def _env(tmp_path: Path, **extra: str) -> dict:
    if not (BIN / "manifesto").exists():
        unavailable(f"no manifesto console script in {BIN} (run uv sync)")
    return {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path), "USER": "readme",
            "MANIFESTO_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
            **extra}


def _run(body: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, f"{body}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc


def _workspace(tmp_path: Path) -> Path:
    """A copy of the bundled workspace, so README commands never write into the checkout."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(REPO_ROOT / "BUILD.yaml", work)
    for name in ("models", "clusters", "routing", "out"):
        shutil.copytree(REPO_ROOT / name, work / name, ignore=shutil.ignore_patterns(".cache"))
    # A repository of its own, so `diff --base HEAD` has a revision to compare with.
    git = {"PATH": "/usr/bin:/bin", "GIT_AUTHOR_NAME": "readme", "GIT_AUTHOR_EMAIL": "readme@example.com",
           "GIT_COMMITTER_NAME": "readme", "GIT_COMMITTER_EMAIL": "readme@example.com", "HOME": str(tmp_path)}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "workspace"]):
        subprocess.run(["git", *argv], cwd=work, env=git, check=True, capture_output=True)
    return work


@pytest.mark.parametrize("index", range(len(blocks("offline"))))
def test_offline_workflows(tmp_path, index):
    work = _workspace(tmp_path)
    _run(blocks("offline")[index], work, _env(tmp_path))
    if "manifesto man" in blocks("offline")[index]:
        assert (work / "manifesto.1").read_text().startswith(".TH MANIFESTO")


@pytest.mark.parametrize("index", range(len(blocks("kubectl"))))
def test_kubectl_workflows(tmp_path, index):
    bindir, state = fake_kubectl(tmp_path)
    env = _env(tmp_path, PATH=f"{bindir}:{BIN}:/usr/bin:/bin", FAKE_KUBE_DIR=str(state), HF_TOKEN=TOKEN)
    work = tmp_path / "work"
    work.mkdir()
    _run(blocks("kubectl")[index], work, env)
    assert (state / "calls.jsonl").read_text().count("apply") >= 1  # the cluster was really asked


@pytest.mark.parametrize("index", range(len(blocks("walkthrough"))))
def test_walkthroughs_run_as_printed(tmp_path, index):
    """No HF_TOKEN and no fake kubectl from the harness; the real kubectl, if /usr/bin has one,
    is on PATH as it would be for a reader."""
    env = _env(tmp_path)
    assert "HF_TOKEN" not in env and "FAKE_KUBE_DIR" not in env
    work = tmp_path / "work"
    work.mkdir()
    _run(blocks("walkthrough")[index], work, env)
    calls = (tmp_path / "cache" / "manifesto" / "fake-kube" / "calls.jsonl").read_text()
    assert calls.count('"apply"') >= 2 and '"delete"' in calls  # the fake cluster was really asked
    assert "hf_xxx" not in calls  # the token is not in the fake's call log


@pytest.mark.slurm
@pytest.mark.xdist_group("slurm-jobs")  # its job shares the kit's nodes and ports with test_slurm_jobs
def test_slurm_workflow(slurm_cluster, tmp_path):
    (body,) = blocks("slurm")
    env = _env(tmp_path)
    (tmp_path / "config" / "clusters").mkdir(parents=True)
    (tmp_path / "config" / "clusters" / "my-slurm.yaml").write_text(SLURM_CLUSTER)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "vllm").write_text("#!/bin/sh\nexec sleep 120\n")  # a stand-in model server that just waits
    (bindir / "vllm").chmod(0o755)
    env["PATH"] = f"{bindir}:{BIN}:{os.environ['PATH']}"
    env.update({k: v for k, v in os.environ.items() if k.startswith("SLURM")})
    work = tmp_path / "work"
    work.mkdir()
    proc = _run(body, work, env)
    assert "cancelled Slurm job" in proc.stderr or "had already ended; nothing to cancel" in proc.stderr
