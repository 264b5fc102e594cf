"""The memo resolves each path a build names once (issue 26: a cold build's pairs name the
same cluster and image catalog thousands of times)."""

from __future__ import annotations

import os

from manifesto.store import Store
from manifesto.tasks.memo import Tasks


def test_a_path_is_resolved_once_and_as_os_path_realpath_does(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "c.yaml").write_text("x: 1\n")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    calls = []
    real = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda p, *a, **k: calls.append(p) or real(p, *a, **k))
    memo = Tasks(Store(None), "code")
    path = str(tmp_path / "link" / "c.yaml")
    assert [memo.realpath(path) for _ in range(5)] == [str(tmp_path / "real" / "c.yaml")] * 5
    assert calls == [path]
    assert Tasks(Store(None), "code").realpath(path) == str(tmp_path / "real" / "c.yaml") and len(calls) == 2
