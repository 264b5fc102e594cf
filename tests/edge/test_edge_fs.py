"""Confined writes and reads (``manifesto.edge.fs``): never through a symlink, never into a FIFO."""

from __future__ import annotations

import os
import socket

import pytest

from manifesto.edge.fs import UnsafePath, open_regular, write_atomic


@pytest.fixture
def tree(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "out" / "gpu").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim.yaml").write_text("untouched\n")
    return root, outside


def _refused(root, rel: str) -> str:
    with pytest.raises(UnsafePath) as info:
        write_atomic(root / rel, "new\n", root=root)
    return f"{os.path.relpath(info.value.filename, root)} {info.value.strerror}"


def test_writes_and_creates_missing_directories(tree):
    root, _ = tree
    write_atomic(root / "out" / "deploy" / "a.yaml", "x\n", root=root, mode=0o640)
    path = root / "out" / "deploy" / "a.yaml"
    assert path.read_text() == "x\n" and (path.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in path.parent.iterdir()] == ["a.yaml"]  # no temporary file left


@pytest.mark.parametrize("link", ["out", "out/gpu"])
def test_a_symlinked_directory_is_refused(tree, link):
    root, outside = tree
    import shutil

    target = root / link
    shutil.rmtree(target)
    target.symlink_to(outside)
    assert _refused(root, f"{link}/victim.yaml") == f"{link} is a symlink (to {outside}); refusing to go through it"
    assert (outside / "victim.yaml").read_text() == "untouched\n"


def test_a_symlinked_file_is_refused_not_replaced(tree):
    root, outside = tree
    (root / "out" / "gpu" / "m.yaml").symlink_to(outside / "victim.yaml")
    assert _refused(root, "out/gpu/m.yaml") == (f"out/gpu/m.yaml is a symlink (to {outside}/victim.yaml); refusing "
                                                "to go through it")
    assert (root / "out" / "gpu" / "m.yaml").is_symlink()


@pytest.mark.parametrize("kind", ["fifo", "socket", "dir"])
def test_special_files_are_refused(tree, kind):
    root, _ = tree
    path = root / "out" / "gpu" / "m.yaml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
    else:
        path.mkdir()
    word = {"fifo": "a FIFO", "socket": "a socket", "dir": "a directory"}[kind]
    assert _refused(root, "out/gpu/m.yaml") == f"out/gpu/m.yaml is {word}, expected a file"
    with pytest.raises(UnsafePath):
        open_regular(path, follow=True)  # a read: no hang on the FIFO


def test_a_file_where_a_directory_belongs(tree):
    root, _ = tree
    (root / "out" / "deploy").write_text("x\n")
    assert _refused(root, "out/deploy/a.yaml") == "out/deploy is a file, expected a directory"


def test_a_path_outside_the_root_is_refused(tree):
    root, outside = tree
    with pytest.raises(UnsafePath, match="is outside"):
        write_atomic(root / ".." / "outside" / "x.yaml", "x", root=root)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.yaml"]


def test_open_regular_follows_a_link_to_a_file_only_when_asked(tree):
    root, outside = tree
    link = root / "link.yaml"
    link.symlink_to(outside / "victim.yaml")
    with open(open_regular(link, follow=True), "rb") as f:
        assert f.read() == b"untouched\n"
    with pytest.raises(UnsafePath, match="is a symlink"):
        open_regular(link)
