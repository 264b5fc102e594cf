"""A cloned workspace's ``out/.cache`` cannot reach outside the workspace (issue 35).

A repository can commit ``out/.cache/tasks`` with shard folders that are links to a folder
elsewhere (``~/.ssh``), files named like the files there, old mtimes, and ``store_limit: 0``.
Every way the tool deletes, touches or writes in its store then runs: a build that prunes to
nothing, ``clean --gc``, the sweep after a killed build, ``clean``. The folder outside stays
byte-identical (names, bytes, modes, mtimes), and the build still renders what it must.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "build_graph"))

from buildkit import BUILD_YAML, Runner, make_tree  # noqa: E402

pytestmark = pytest.mark.integration

#: Shard names a planted link takes: hex ones the store might use, and others.
LINKED = ("au", "zz", "0f", "a0", "ff")


def _snapshot(folder: Path) -> dict:
    out = {}
    for path in sorted(folder.rglob("*")):
        st = os.lstat(path)
        body = os.readlink(path) if path.is_symlink() else (path.read_bytes() if path.is_file() else None)
        out[str(path.relative_to(folder))] = (st.st_mode, st.st_mtime_ns, body)
    return out


def _outside(root: Path) -> Path:
    """A folder outside the workspace holding every name the store could delete."""
    outside = root / "victim"
    outside.mkdir()
    names = ["authorized_keys", "id_ed25519", ".x.tmp~", ".authorized_keys.0123.tmp~"]
    names += [p + "0" * 30 for p in LINKED] + [p + "ab" * 15 for p in LINKED] + ["0" * 32, "f" * 64]
    for name in names:
        (outside / name).write_bytes(b"precious " + name.encode())
        os.utime(outside / name, ns=(10**9, 10**9))  # older than anything the store holds
    (outside / "sub").mkdir()
    (outside / "sub" / ("0" * 32)).write_bytes(b"nested")
    return outside


def _plant(tasks: Path, outside: Path) -> None:
    """Linked shards, and in every real shard decoys named like the files outside."""
    tasks.mkdir(parents=True, exist_ok=True)
    for shard in LINKED:
        link = tasks / shard
        if link.is_dir() and not link.is_symlink():
            os.rename(link, tasks / f"{shard}-was-here")
        link.symlink_to(outside)
    (tasks / "sub").symlink_to(outside / "sub")
    real = [p for p in tasks.iterdir() if p.is_dir() and not p.is_symlink()] or [tasks / "12"]
    for shard in real:
        shard.mkdir(exist_ok=True)
        for name in os.listdir(outside):
            if (outside / name).is_file():
                decoy = shard / name
                decoy.write_bytes(b"decoy")
                os.utime(decoy, ns=(10**9, 10**9))
        (shard / "dir-entry").mkdir(exist_ok=True)  # a folder where a file belongs: passed over
    (tasks.parent / "state-link").symlink_to(outside / "authorized_keys")


@pytest.fixture
def run(tmp_path):
    tree = make_tree(tmp_path / "tree", {"BUILD.yaml": BUILD_YAML + "store_limit: 0\n"})
    return Runner(tree, tmp_path / "renders.log")


def test_a_linked_shard_never_lets_the_store_touch_a_folder_outside(run, tmp_path):
    outside = _outside(tmp_path)
    run("build")
    before = _snapshot(outside)
    _plant(run.root / "out/.cache/tasks", outside)
    # an edit makes the next build render, store and prune to its bound of 0 bytes
    spec = run.root / "models/qwen/aggregated.yaml"
    spec.write_text(spec.read_text() + "# edited\n")
    proc = run("build", check=False)  # a pair whose entry would go into a linked shard fails, naming it
    assert "Traceback" not in proc.stderr
    for line in proc.stderr.splitlines():
        if line.startswith("error:"):
            assert "cannot store the result: out/.cache/tasks/" in line and "is a symlink" in line, line
    assert _snapshot(outside) == before
    assert run("clean", "--gc").returncode == 0
    assert _snapshot(outside) == before
    (run.root / "out/.lock").write_bytes(b"left by a killed build\n")  # the next build sweeps the store
    spec.write_text(spec.read_text() + "# again\n")
    assert "Traceback" not in run("build", check=False).stderr
    assert (run.root / "out/.lock").read_bytes() == b""
    assert _snapshot(outside) == before
    run("clean")
    assert _snapshot(outside) == before
    assert not (run.root / "out/.cache").exists()
    run("build")
    assert run("build", "--check").returncode == 0


def test_a_linked_cache_folder_is_removed_as_a_link(run, tmp_path):
    outside = _outside(tmp_path)
    before = _snapshot(outside)
    (run.root / "out").mkdir()
    (run.root / "out/.cache").symlink_to(outside)
    proc = run("build", check=False)
    assert proc.returncode != 0 and "out/.cache is a symlink" in proc.stderr and "Traceback" not in proc.stderr
    run("clean")
    assert not os.path.lexists(run.root / "out/.cache") and _snapshot(outside) == before


def test_a_linked_tasks_folder_is_never_listed_or_pruned(run, tmp_path):
    outside = _outside(tmp_path)
    before = _snapshot(outside)
    (run.root / "out/.cache").mkdir(parents=True)
    (run.root / "out/.cache/tasks").symlink_to(outside)
    proc = run("build", check=False)
    assert "Traceback" not in proc.stderr
    run("clean", "--gc", check=False)
    assert _snapshot(outside) == before
