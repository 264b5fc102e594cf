"""The edge's leftovers (issue 25): temporary names within NAME_MAX, catalog import names,
``init`` validating the cluster profile first, a missing kubectl named as such, and
``matrix --shards`` agreeing with ``build --shard``."""

from __future__ import annotations

import os

import pytest

from manifesto import fsutil


# -- temporary names ------------------------------------------------------------------------

@pytest.mark.parametrize("size", [245, 250, 255])
@pytest.mark.parametrize("confined", [False, True])
def test_a_long_legal_name_gets_a_legal_temporary_name(tmp_path, size, confined):
    name = "m" * (size - 5) + ".yaml"
    target = tmp_path / "out" / name
    fsutil.write_atomic(target, "x: 1\n", root=tmp_path if confined else None, suffix=".tmp~")
    assert target.read_text() == "x: 1\n"
    assert os.listdir(target.parent) == [name]  # no temporary file left behind


def test_a_long_multibyte_name_is_cut_at_a_character(tmp_path):
    name = "é" * 127  # 254 bytes
    target = tmp_path / name
    fsutil.write_atomic(target, b"ok")
    assert target.read_bytes() == b"ok"
    tmp = fsutil.temp_name(name, ".tmp~", "ab" * 6)
    assert len(tmp.encode()) <= fsutil.NAME_MAX and tmp.startswith(".é") and tmp.endswith(".abababababab.tmp~")
    tmp.encode("utf-8")  # whole characters only


def test_temporary_names_keep_what_cleaners_look_for():
    for name in ("a", "x" * 255, "ü" * 127):
        for suffix in ("", ".tmp", ".tmp~"):
            tmp = fsutil.temp_name(name, suffix, "0" * 12)
            assert tmp.startswith(".") and tmp.endswith("0" * 12 + suffix)
            assert len(tmp.encode()) <= fsutil.NAME_MAX
    assert fsutil.temp_name("short.yaml", ".tmp", "f" * 12) == ".short.yaml.ffffffffffff.tmp"


@pytest.mark.integration  # the render asks kubectl for the context's namespace
def test_render_file_writes_a_245_character_spec_name(tmp_path, monkeypatch):
    from kit import REPO_ROOT, cli_in_process

    name = "q" * 240 + ".yaml"
    (tmp_path / name).write_text((REPO_ROOT / "models" / "qwen" / "qwen3-0.6b.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    for out in (name[:-5] + ".out", "o" * 255):
        res = cli_in_process("render", "file", name, "--cluster", "example-gb200", "-o", str(tmp_path / out))
        assert res.returncode == 0, res.stderr
        assert (tmp_path / out).read_text().startswith("#")
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]
