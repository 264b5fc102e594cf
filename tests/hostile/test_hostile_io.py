"""Run the I/O hostile corpus (``io_cases.py``) through the real CLI, one process per case.

Every case must end within ``BOUND`` seconds (a hang fails the test instead of stalling
the suite), exit with its code, print no traceback and no secret, print exactly its one
expected error line, and write nothing outside the workspace, the user catalog and the
caches: everything else below the case's root is snapshotted before and compared after.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kubefake
from io_cases import CASES, SECRET, Case
from io_cases_19 import CASES as CASES_19
from io_cases_35 import CASES as CASES_35

ALL = CASES + CASES_19 + CASES_35


def unprintable(text: str) -> list[str]:
    """What no command may print raw: characters that are not printable (a terminal escape,
    a bidi override, a zero-width space), line feed and tab aside."""
    return sorted({f"U+{ord(c):04X}" for c in text if not c.isprintable() and c not in "\n\t"})

#: Seconds a case may take; the slowest (a 2-second ready deadline, a 1-second kubectl
#: bound) need a few. Only a hang comes near it.
BOUND = 90

#: Where a case may write: the workspace, the user catalog and the caches.
WRITABLE = ("ws", "config", "cache", "kube", "home", "bin")


def _materialise(root: Path, files: dict) -> None:
    for rel, spec in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(spec, tuple):
            kind = spec[0]
            if kind == "symlink":
                os.symlink(spec[1].replace("{tmp}", str(root)), path)
            elif kind == "fifo":
                os.mkfifo(path)
            elif kind == "dir":
                path.mkdir()
            elif kind == "bytes":
                path.write_bytes(spec[1])
            elif kind == "exec":
                path.write_text(spec[1])
                path.chmod(0o755)
            elif kind == "socket":
                import socket

                with socket.socket(socket.AF_UNIX) as sock:
                    sock.bind(str(path))
            continue
        path.write_text(spec.replace("{tmp}", str(root)))


def _snapshot(root: Path) -> dict:
    """Every path below ``root`` outside WRITABLE, with its type, bytes and mtime."""
    seen = {}
    for top, dirs, files in os.walk(root):
        rel_top = Path(top).relative_to(root)
        if rel_top.parts and rel_top.parts[0] in WRITABLE:
            dirs[:] = []
            continue
        for name in dirs + files:
            if not rel_top.parts and name in WRITABLE:
                continue
            path = Path(top) / name
            st = os.lstat(path)
            body = path.read_bytes() if path.is_file() and not path.is_symlink() else os.readlink(path) \
                if path.is_symlink() else None
            seen[str(path.relative_to(root))] = (st.st_mode, st.st_mtime_ns, body)
    return seen


def _env(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MANIFESTO_", "KUBE", "XDG_"))}
    env.update({
        "HOME": str(root / "home"), "XDG_CACHE_HOME": str(root / "cache"), "MANIFESTO_CONFIG_HOME": str(root / "config"),
        "PATH": f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", "FAKE_KUBE_DIR": str(root / "kube"),
        "MANIFESTO_COMPLETE_TIMEOUT": "20",  # the stand-in kubectl may start slowly on a loaded machine
        "KUBECONFIG": str(root / "no-kubeconfig"), "HF_TOKEN": f"hf_{SECRET}", "EDITOR": "true", "COLUMNS": "200",
    })
    return env


def prepare(case: Case, root: Path) -> None:
    """The case's tree below ``root``: workspace, catalog, a sentinel outside, the fake kubectl."""
    for sub in ("ws", "config", "outside", "home"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "outside" / "sentinel").write_text("untouched\n")
    kubefake.fake_kubectl(root)
    _materialise(root, case.files)
    (root / "kube" / "state.json").write_text(json.dumps({"objects": [], "config": {}, **(case.kube or {})}))


def _settle(ws: Path) -> None:
    """Wait until the workspace's newest file is past the build's edit window (20 ms): a build
    does not store the result of an input stamped later than that before it started (it may
    still be being written), so a case about a store in the way would pass by luck."""
    import time

    newest = max((os.lstat(os.path.join(top, n)).st_mtime_ns for top, _, names in os.walk(ws) for n in names),
                 default=0)
    wait_ns = newest + 40_000_000 - time.time_ns()
    if wait_ns > 0:
        time.sleep(wait_ns / 1e9)


def run_case(case: Case, root: Path) -> subprocess.CompletedProcess:
    if case.argv[:1] == ("build",) or "--build" in case.argv:
        _settle(root / "ws")
    env = {**_env(root), **{k: v.replace("{tmp}", str(root)) for k, v in case.env.items()}}
    argv = [a.replace("{tmp}", str(root)) for a in case.argv]
    try:
        return subprocess.run([sys.executable, "-m", "manifesto", *argv], cwd=root / "ws", env=env,
                              capture_output=True, text=True, timeout=BOUND, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case.id}: no answer within {BOUND}s (a hang)")


def error_lines(stderr: str) -> list[str]:
    """The lines that report an error (``error: ...``, or argparse's ``manifesto X: error: ...``)."""
    return [line for line in stderr.splitlines() if line.startswith("error: ") or ": error: " in line]


@pytest.mark.integration
@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_hostile_io_case(case: Case, tmp_path):
    root = tmp_path.resolve()
    prepare(case, root)
    before = _snapshot(root)
    proc = run_case(case, root)
    where = f"{case.id}: exit {proc.returncode}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-4000:]}"
    assert "Traceback" not in proc.stderr, where
    assert SECRET not in proc.stderr and SECRET not in proc.stdout, where
    assert proc.returncode == case.rc, where
    expected = [] if case.expect is None else [case.expect.replace("{tmp}", str(root))]
    assert error_lines(proc.stderr) == expected, where
    assert not unprintable(proc.stdout) and not unprintable(proc.stderr), where
    assert len(proc.stderr) < 8000, where  # tool output in errors is bounded
    if case.stdout is not None:
        assert proc.stdout == case.stdout, where
    assert _snapshot(root) == before, f"{case.id} wrote outside the workspace, the catalog and the caches"


def test_the_corpus_is_large_and_covers_every_class():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 45
    round2 = [c.id for c in CASES_19]
    assert len(set(ids) | set(round2)) == len(ids) + len(round2)
    for prefix in ("w-", "s-", "u-", "o-"):  # issue 19: classes 1, 2, 4 (I/O side) and 5
        assert sum(i.startswith(prefix) for i in round2) >= 10, prefix
    starts = ("alias", "int", "idle-timeout", "kubectl-", "cache-root", "extends-", "build-", "export-", "edit-",
              "servers-", "ready-", "deploy-", "stop-")
    assert all(any(i.startswith(s) for i in ids) for s in starts)


def test_the_third_round_covers_its_classes():
    """Issue 35: gitops and init values, numbers, YAML tags and the leftovers, several cases each."""
    ids = [c.id for c in CASES_35]
    assert len(ids) == len(set(ids)) and not set(ids) & {c.id for c in CASES + CASES_19}
    for prefix in ("g-init-", "g-build-", "n-config-json-", "n-max-model-len-", "n-store-limit-", "t-", "l-"):
        assert sum(i.startswith(prefix) for i in ids) >= 3, prefix
