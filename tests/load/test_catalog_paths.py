"""The catalog hands out paths as text, spelled as pathlib spells them.

A render never makes a ``pathlib.Path`` (its import, with ``urllib.parse`` and ``ipaddress``
under it, cost a cold render 4.6 ms): the catalog works with text. These tests hold its
spelling and its file test to pathlib's own, so headers and error messages read as before.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path, PurePosixPath

import pytest

from manifesto.load import catalog


def _spellings():
    parts = ["", ".", "..", "a", "b.yaml", " ", "a b", "~"]
    for n in range(1, 4):
        for combo in itertools.product(parts, repeat=n):
            body = "/".join(combo)
            for lead in ("", "/", "//", "///", "////"):
                for tail in ("", "/", "//"):
                    yield lead + body + tail


def test_path_text_spells_a_path_as_pathlib_does():
    seen = 0
    for text in _spellings():
        assert catalog.path_text(text) == str(PurePosixPath(text)), repr(text)
        seen += 1
    assert seen > 1000


def test_is_file_answers_as_pathlib_does(tmp_path):
    (tmp_path / "file.yaml").write_text("a: 1\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "file.yaml")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    os.mkfifo(tmp_path / "fifo")
    names = ["file.yaml", "dir", "link", "dangling", "loop", "fifo", "missing", "file.yaml/below", "nul\0name"]
    for name in names:
        path = str(tmp_path / name) if "\0" not in name else name
        assert catalog._is_file(path) == Path(path).is_file(), name
    assert catalog._is_file(str(tmp_path / "file.yaml") + "/") is False  # the catalog spells it first


def test_find_returns_the_text_a_path_object_gave(tmp_path, monkeypatch):
    spec = tmp_path / "models" / "x.yaml"
    spec.parent.mkdir()
    spec.write_text("a: 1\n")
    monkeypatch.chdir(tmp_path)
    for ref in ("models/x.yaml", "./models//x.yaml", "models/./x.yaml", "models/x.yaml/", str(spec)):
        found = catalog.find("models", ref, search=catalog.PATHS_ONLY)
        assert type(found) is str and found == str(Path(ref)), ref
    bundled = catalog.find("models", "qwen/qwen3-0.6b", search=catalog.default_search({}))
    assert bundled == str(catalog.bundled_root() / "models" / "qwen" / "qwen3-0.6b.yaml")
    with pytest.raises(catalog.CatalogError, match="no model 'nope'"):
        catalog.find("models", "nope", search=catalog.default_search({}))
