"""The README's workflow commands, run as a user would run them.

The ``<!-- readme-test: setup -->`` block makes the scratch folder every later block runs in
(a clone of the checkout, the stand-in kubectl linked into it, every cache inside it); every
```sh block announced by ``<!-- readme-test: KIND -->`` runs after it, under ``bash -e`` with
``manifesto`` on PATH, from a copy of this checkout that is a git repository of its own and a
home of its own: ``offline`` and ``kubectl`` blocks (the latter against the stand-in the
setup links), ``walkthrough`` blocks exactly as a reader pastes them (no HF_TOKEN and no
kubectl from the harness), ``slurm`` blocks against the local Slurm kit with ``my-slurm`` in
the user catalog. The whole README, top to bottom in one shell, leaves the checkout's
``git status`` as it was and writes nothing in the home but the scratch folder. A block that
is announced but not run fails the test.
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
from test_slurm_cli import CLUSTER as SLURM_CLUSTER

pytestmark = pytest.mark.integration  # the README workflows run as processes

BIN = Path(sys.executable).parent
_BLOCK = re.compile(r"<!-- readme-test: (\w+) -->\n```(?:sh|python)\n(.*?)```", re.S)
#: uv's cache as the reader's uv has it, found before conftest gives each test a home of its own:
#: the quick start's `uv run` installs from it, offline. It is uv's shared, content-addressed
#: cache, no file of the reader's: the one thing the test adds there is the copy's built wheel,
#: as `uv run` in any new checkout does (uv prunes it with `uv cache prune`).
_UV_CACHE = os.environ.get("UV_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "uv")
#: The one line of the quick start the test does not run: the test suite itself.
_SUITE = "uv run --extra test pytest -n auto       # run the test suite\n"
_GIT = {"PATH": "/usr/bin:/bin", "GIT_AUTHOR_NAME": "readme", "GIT_AUTHOR_EMAIL": "readme@example.com",
        "GIT_COMMITTER_NAME": "readme", "GIT_COMMITTER_EMAIL": "readme@example.com",
        "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def announced() -> list[tuple[str, str]]:
    return _BLOCK.findall((REPO_ROOT / "README.md").read_text())


def blocks(kind: str) -> list[str]:
    return [body for k, body in announced() if k == kind]


def test_every_announced_block_has_a_runner():
    kinds = [k for k, _ in announced()]
    assert kinds and set(kinds) <= {"quickstart", "python", "setup", "offline", "kubectl", "walkthrough", "slurm"}
    tour = [k for k in kinds if k not in ("quickstart", "python")]  # those two run from the checkout itself
    assert tour[0] == "setup" and kinds.count("setup") == 1  # first, once: the others run in its folder
    assert kinds[:2] == ["quickstart", "quickstart"] and kinds.count("python") == 1
    # Every sh and python block is run: one that needs what no test has (a real Argo CD, a
    # server of your own) is a `text` block.
    text = (REPO_ROOT / "README.md").read_text()
    assert text.count("```sh\n") + text.count("```python\n") == len(kinds)
    assert (REPO_ROOT / "README.md").read_text().count("<!-- readme-test:") == len(kinds)
    assert "(see below)" not in (REPO_ROOT / "README.md").read_text()


def _env(tmp_path: Path, **extra: str) -> dict:
    if not (BIN / "manifesto").exists():
        unavailable(f"no manifesto console script in {BIN} (run uv sync)")
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "USER": "readme",
            "MANIFESTO_CONFIG_HOME": str(tmp_path / "config"), **extra}


def _run(body: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, f"{body}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc


def _git(cwd: Path, *argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=cwd, env=_GIT, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="session")
def checkout(tmp_path_factory) -> Path:
    """This checkout's files (tracked and untracked, not ignored) as a git repository of its own,
    committed: where a reader stands when the README says "from the root of the checkout"."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT,
                            env=_GIT, capture_output=True)
    if listed.returncode != 0 or shutil.which("git") is None:
        unavailable(f"{REPO_ROOT} is not a git checkout (the README starts from a clone)")
    root = tmp_path_factory.mktemp("checkout") / "llm-manifesto"
    for rel in filter(None, listed.stdout.decode().split("\0")):
        source = REPO_ROOT / rel
        if source.is_file():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / rel)
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "checkout"]):
        _git(root, *argv)
    return root


def _tour(env: dict) -> Path:
    return Path(env["HOME"]) / "manifesto-tour"


def _after_setup(body: str) -> str:
    (setup,) = blocks("setup")
    return setup + body


@pytest.mark.parametrize("index", range(len(blocks("offline"))))
def test_offline_workflows(tmp_path, checkout, index):
    env = _env(tmp_path)
    _run(_after_setup(blocks("offline")[index]), checkout, env)
    if "manifesto man" in blocks("offline")[index]:
        assert (_tour(env) / "manifesto.1").read_text().startswith(".TH MANIFESTO")


@pytest.mark.parametrize("index", range(len(blocks("kubectl"))))
def test_kubectl_workflows(tmp_path, checkout, index):
    env = _env(tmp_path)
    _run(_after_setup(blocks("kubectl")[index]), checkout, env)
    calls = (_tour(env) / ".cache" / "manifesto" / "fake-kube" / "calls.jsonl").read_text()
    assert calls.count('"apply"') >= 1  # the stand-in cluster was really asked


@pytest.mark.parametrize("index", range(len(blocks("walkthrough"))))
def test_walkthroughs_run_as_printed(tmp_path, checkout, index):
    """No HF_TOKEN and no kubectl from the harness; the real kubectl, if /usr/bin has one,
    is on PATH as it would be for a reader. A walkthrough block goes on from the ones before
    it (the workspace `init` made), so those run first."""
    env = _env(tmp_path)
    assert "HF_TOKEN" not in env and "FAKE_KUBE_DIR" not in env
    _run(_after_setup("".join(blocks("walkthrough")[:index + 1])), checkout, env)
    calls = (_tour(env) / ".cache" / "manifesto" / "fake-kube" / "calls.jsonl").read_text()
    assert calls.count('"apply"') >= 2 and '"delete"' in calls  # the stand-in cluster was really asked
    assert "hf_xxx" not in calls  # the token is not in the stand-in's call log


def test_the_quick_start_runs_as_printed_and_leaves_out_as_committed(tmp_path, checkout):
    """The quick start's blocks (all but the line that runs this suite), in order, from a copy
    of the checkout, with `uv` as a reader has it, a fresh home and no USER: `out/` renders as
    committed and git sees no change (`.venv` and `out/.cache` are ignored)."""
    uv = shutil.which("uv")
    if uv is None or not os.path.isdir(_UV_CACHE):
        unavailable("no uv on PATH, or no uv cache to install from offline (the quick start runs `uv run`)")
    root = tmp_path / "llm-manifesto"
    shutil.copytree(checkout, root, symlinks=True)
    (first, second) = blocks("quickstart")
    assert _SUITE in first
    env = _env(tmp_path)
    del env["USER"]  # `--user` is left to its default, so an unset USER is no trouble
    # uv's own cache (the packages a reader's uv already has: no network here), offline.
    env.update({"PATH": f"{Path(uv).parent}:{BIN}:/usr/bin:/bin", "UV_CACHE_DIR": _UV_CACHE,
                "UV_OFFLINE": "1", "UV_PYTHON": sys.executable})
    before = _git(root, "status", "--porcelain")
    proc = _run(first.replace(_SUITE, "") + second, root, env)
    assert _git(root, "status", "--porcelain") == before == ""
    assert re.search(r"^\d+ rendered, 0 up to date, \d+ skipped, 0 failed$", proc.stdout, re.M), proc.stdout
    assert proc.stdout.count("# Generated by:") == 1 and "ok: qwen/aggregated renders against example-h200" in proc.stdout


def test_the_python_api_example_runs_as_printed(tmp_path, checkout):
    """The README's Python block, from the root of the checkout, with this install's python."""
    (body,) = blocks("python")
    root = tmp_path / "llm-manifesto"
    shutil.copytree(checkout, root, symlinks=True)
    script = body + ("assert text.startswith('# Generated by') and objects and settings is not None\n"
                     "print(spec.release, spec.model.id, spec.roles[0].parallelism.tp, cluster.accelerators.default)\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, env=_env(tmp_path), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "qwen3-0-6b Qwen/Qwen3-0.6B 1 gb200\n"
    assert _git(root, "status", "--porcelain") == ""


def test_the_readme_top_to_bottom_leaves_the_checkout_as_it_was(tmp_path, checkout):
    """Every block but Slurm's (which needs the Slurm kit, and a profile in the user catalog),
    in order, in one shell, from the root of the checkout, in a fresh home: the checkout's git
    status is unchanged and the home holds the scratch folder alone."""
    env = _env(tmp_path)
    before = _git(checkout, "status", "--porcelain", "--ignored")
    script = "".join(body for kind, body in announced() if kind not in ("slurm", "quickstart", "python"))
    proc = _run(script, checkout, env)
    assert _git(checkout, "status", "--porcelain", "--ignored") == before
    assert sorted(os.listdir(env["HOME"])) == ["manifesto-tour"]
    # The down remote cache's one warning, as the README promises (its block sends it to stdout).
    assert proc.stdout.count("warning: remote cache http://127.0.0.1:9: ") == 1
    tour = _tour(env)
    assert (tour / "my-llms" / "out").is_dir() and (tour / "gitops-demo" / "out" / "gitops").is_dir()


@pytest.mark.slurm
@pytest.mark.xdist_group("slurm-jobs")  # its job shares the kit's nodes and ports with test_slurm_jobs
def test_slurm_workflow(slurm_cluster, tmp_path, checkout):
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
    proc = _run(_after_setup(body), checkout, env)
    assert "cancelled Slurm job" in proc.stderr or "had already ended; nothing to cancel" in proc.stderr
