"""A cold ``build --jobs 1`` opens each input file at most twice, whatever the number of pairs
that read it (issue 26): once for its text, once for its digest (``manifesto.tasks.memo``).
Before, every pair read and hashed its spec and cluster again: one cluster file was opened
702 times in a 508-pair build."""

from __future__ import annotations

import builtins
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("manifesto.tasks.pair")

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names a dir_fd through /proc")


def _tree(root: Path, copies: int) -> Path:
    """The bundled examples plus ``copies`` copies of every qwen spec, with a routing profile;
    every input older than the build (so its products may be stored)."""
    for name in ("models", "clusters", "routing"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns(".*"))
    for spec in sorted((root / "models" / "qwen").glob("*.yaml")):
        for k in range(copies):
            shutil.copy(spec, spec.with_name(f"{spec.stem}-copy{k}.yaml"))
    buildfile = (REPO / "BUILD.yaml").read_text()
    (root / "BUILD.yaml").write_text(buildfile.replace("    # routing_profile: //routing:wide-ep-lws-config",
                                                       "    routing_profile: routing/kv-aware.yaml"))
    for path in root.rglob("*.yaml"):
        os.utime(path, (1_600_000_000, 1_600_000_000))
    return root


class Opens:
    """Counts the opens of files below ``root`` through ``os.open`` (with or without a
    ``dir_fd``) and the built-in ``open``, by real path."""

    def __init__(self, root: Path) -> None:
        self.prefix = os.path.join(os.path.realpath(root), "")
        self.count: Counter = Counter()

    def note(self, path, dir_fd=None) -> None:
        if isinstance(path, int):
            return
        path = os.fsdecode(path)
        if dir_fd is not None and not os.path.isabs(path):
            path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
        path = os.path.realpath(path)
        if path.startswith(self.prefix):
            self.count[path[len(self.prefix):]] += 1


def test_a_cold_build_opens_each_input_at_most_twice(tmp_path, monkeypatch):
    import manifesto.tasks.pair as pair
    from manifesto.build_graph.api import build

    root = _tree(tmp_path / "tree", copies=3)
    opens = Opens(root)
    real_os_open, real_open = os.open, builtins.open

    def counting_os_open(path, flags, mode=0o777, *, dir_fd=None):
        if not flags & (os.O_WRONLY | os.O_RDWR):
            opens.note(path, dir_fd)
        return real_os_open(path, flags, mode, dir_fd=dir_fd)

    def counting_open(file, mode="r", *args, **kwargs):
        if not any(c in mode for c in "wax+"):
            opens.note(file)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(pair, "PRODUCTS", pair.Products())
    monkeypatch.chdir(root)

    class Quiet:
        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    monkeypatch.setattr(os, "open", counting_os_open)
    monkeypatch.setattr(builtins, "open", counting_open)
    try:
        report = build(["//::"], jobs=1, root=str(root), renderer="manifesto.tasks", ui=Quiet())
    finally:
        monkeypatch.undo()
    rendered = [i for i in report.items if i.status == "ok"]
    assert len(rendered) >= 40  # many pairs share each cluster, spec and routing file
    inputs = {p.relative_to(root).as_posix() for d in ("models", "clusters") for p in (root / d).rglob("*.yaml")}
    inputs.add("routing/kv-aware.yaml")
    assert inputs <= set(opens.count), sorted(inputs - set(opens.count))  # the hook saw every input
    assert {name: n for name, n in opens.count.items() if name in inputs and n > 2} == {}
    print(sorted(opens.count.items(), key=lambda kv: -kv[1])[:5], file=sys.stderr)
