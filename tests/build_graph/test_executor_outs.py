"""``executor.Outs``: a run of jobs walks to each out/ folder once, and writes as ``write_artifact`` does."""

from __future__ import annotations

import os

import pytest

from manifesto.build_graph import executor
from manifesto.edge import fs as fsutil


def test_one_walk_per_folder_and_the_same_results_as_write_artifact(tmp_path, monkeypatch):
    out = tmp_path / "out"
    walks = []
    real = fsutil.open_dir_below
    monkeypatch.setattr(fsutil, "open_dir_below", lambda root, path: walks.append(path) or real(root, path))
    outs = executor.Outs(str(out))
    try:
        first = outs.write("gpu/a.yaml", b"a: 1\n")
        outs.write("gpu/b.yaml", b"b: 1\n")
        outs.write("gpu/sub/c.yaml", b"c: 1\n")
        again = outs.write("gpu/a.yaml", b"a: 1\n")  # the same bytes: not written again
    finally:
        outs.close()
    assert walks == [str(out / "gpu"), str(out / "gpu" / "sub")]
    assert (out / "gpu" / "a.yaml").read_bytes() == b"a: 1\n" and (out / "gpu" / "sub" / "c.yaml").exists()
    assert first[0] == "gpu/a.yaml" and first[3] is True and again[3] is False and again[1] == first[1]
    assert not [n for n in os.listdir(out / "gpu") if n.endswith(".tmp~")]


def test_a_folder_removed_meanwhile_is_walked_to_again(tmp_path):
    out = tmp_path / "out"
    outs = executor.Outs(str(out))
    try:
        outs.write("gpu/a.yaml", b"a\n")
        (out / "gpu" / "a.yaml").unlink()
        (out / "gpu").rmdir()
        outs.write("gpu/b.yaml", b"b\n")
    finally:
        outs.close()
    assert (out / "gpu" / "b.yaml").read_bytes() == b"b\n"


def test_a_planted_symlink_on_the_way_is_refused(tmp_path):
    out, victim = tmp_path / "out", tmp_path / "victim"
    out.mkdir(), victim.mkdir()
    (out / "gpu").symlink_to(victim)
    outs = executor.Outs(str(out))
    try:
        with pytest.raises(fsutil.UnsafePath):
            outs.write("gpu/a.yaml", b"a\n")
        (out / "ok").mkdir()
        (out / "ok" / "a.yaml").symlink_to(victim / "x")
        with pytest.raises(fsutil.UnsafePath):
            outs.write("ok/a.yaml", b"a\n")
    finally:
        outs.close()
    assert not os.listdir(victim)


def test_without_jobs_a_few_pairs_render_in_process(monkeypatch):
    """``build`` without ``--jobs``: under ``_POOL_FROM`` pairs no pool is started (it costs
    about a dozen renders); from there on, or with a monitoring or gitops job, one per CPU."""
    from types import SimpleNamespace

    from manifesto.build_graph import engine
    from manifesto.tasks import Task

    monkeypatch.setattr(engine.os, "cpu_count", lambda: 4)
    pairs = [SimpleNamespace(task=Task.RENDER)] * (engine._POOL_FROM - 1)
    assert engine._default_jobs(pairs) == 1
    assert engine._default_jobs(pairs + [SimpleNamespace(task=Task.RENDER)]) == 4
    assert engine._default_jobs([SimpleNamespace(task=Task.MONITORING)]) == 4
    assert engine._default_jobs([SimpleNamespace(task=Task.GITOPS), *pairs[:2]]) == 4
