"""The resolve and render tasks keep typed products in the one store (issue 15): the Plan
of every built pair can be read back, ``render(Plan)`` of it gives the artifact, and an
edit that leaves the Plan and the header inputs equal reuses the render product."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("manifesto.tasks.pair")

REPO = Path(__file__).resolve().parents[2]


class Quiet:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _tree(root: Path) -> Path:
    for name in ("models", "clusters", "routing"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns(".*"))
    shutil.copy(REPO / "BUILD.yaml", root / "BUILD.yaml")
    _age(root)
    return root


def _age(root: Path) -> None:
    """Inputs older than the build: their products may be stored (a build skips fresh edits)."""
    for path in root.rglob("*.yaml"):
        os.utime(path, (1_600_000_000, 1_600_000_000))


def _build(root: Path, monkeypatch):
    import manifesto.tasks.pair as build_renderer
    from manifesto.build_graph.api import build

    monkeypatch.setattr(build_renderer, "PRODUCTS", build_renderer.Products())
    monkeypatch.chdir(root)
    return build(["//::"], jobs=1, root=str(root), renderer="manifesto.tasks", ui=Quiet())


def _entries(root: Path, kind: str) -> set[str]:
    from store_kit import entry_files

    return {path.name for path in entry_files(root / "out" / ".cache" / "tasks", kind)}


def _monitors(root: Path) -> set[str]:
    """Keys of monitoring and gitops targets: their artifact gathers many instances, so it is one
    render of several specs, not a (resolve, render) pair with a Plan of its own."""
    from manifesto.build_graph.api import list_targets

    return {t.path for t in list_targets(["//::"], root=str(root)) if t.kind in ("monitoring", "gitops")}


def _records(root: Path) -> dict:
    from manifesto.build_graph.state import load_state

    return load_state(str(root / "out" / ".cache" / "state"), print).pairs


def test_the_stored_plan_of_each_pair_renders_its_artifact(tmp_path, monkeypatch):
    from manifesto.render import render_plan
    from manifesto.tasks.status import Status
    from manifesto.store import Store
    from manifesto.tasks.entries import Resolved
    from manifesto.tasks.memo import plan_of

    root = _tree(tmp_path / "tree")
    _build(root, monkeypatch)
    store = Store(str(root / "out" / ".cache" / "tasks"))
    records = _records(root)
    monitors = _monitors(root)
    built = [(pair, rec) for pair, rec in records.items() if rec.status == Status.OK and pair[0] not in monitors]
    assert len(built) >= 10
    for pair, rec in built:
        plan = plan_of(store, rec.key)
        assert plan is not None, pair
        result = store.get(rec.key)
        resolved = [store.get(k) for k in result.products if isinstance(store.get(k), Resolved)][0]
        assert resolved.plan == plan
        text, suffix = render_plan(plan, resolved.header)
        written = [p for p in (root / "out").rglob("*" + suffix) if p.read_bytes() == text.encode()]
        assert written, pair
    skipped = [rec for rec in records.values() if rec.status == Status.SKIPPED]
    assert skipped and all(plan_of(store, rec.key) is None for rec in skipped)
    # an incompatible pair's result holds its reason; no resolve product is kept for it
    assert all(store.get(rec.key).reason == rec.reason and not store.get(rec.key).products for rec in skipped)
    assert not [e for e in (store.get(k) for k in _entries(root, "resolved")) if e.status == Status.SKIPPED]


def test_a_comment_reresolves_but_reuses_the_render_product(tmp_path, monkeypatch):
    from manifesto.tasks.status import Status

    root = _tree(tmp_path / "tree")
    _build(root, monkeypatch)
    before = {p: p.read_bytes() for p in (root / "out").rglob("*") if p.is_file() and ".cache" not in p.parts}
    resolved, rendered = _entries(root, "resolved"), _entries(root, "rendered")
    spec = root / "models" / "qwen" / "qwen3-0.6b.yaml"
    spec.write_text("# a comment the Plan does not see\n" + spec.read_text())
    _age(root)
    report = _build(root, monkeypatch)
    monitors = _monitors(root)
    rerendered = [i for i in report.items if i.how == "render" and i.pair[0] not in monitors]
    assert any(i.status == Status.OK for i in rerendered)
    # resolved again (an incompatible pair keeps no resolve product) ...
    assert len(_entries(root, "resolved") - resolved) == len([i for i in rerendered if i.status != Status.SKIPPED])
    assert _entries(root, "rendered") == rendered  # ... but each Plan's artifact was reused
    after = {p: p.read_bytes() for p in (root / "out").rglob("*") if p.is_file() and ".cache" not in p.parts}
    assert after == before


def test_a_changed_plan_renders_again(tmp_path, monkeypatch):
    root = _tree(tmp_path / "tree")
    _build(root, monkeypatch)
    rendered = _entries(root, "rendered")
    spec = root / "models" / "qwen" / "qwen3-0.6b.yaml"
    text = spec.read_text()
    assert "release: qwen3-0-6b\n" in text
    spec.write_text(text.replace("release: qwen3-0-6b\n", "release: qwen3-small\n"))
    _age(root)
    _build(root, monkeypatch)
    assert _entries(root, "rendered") - rendered


def _files(root: Path) -> list[Path]:
    return sorted(p for d in ("models", "clusters") for p in (root / d).rglob("*.yaml"))


@pytest.mark.parametrize("jobs", [1, pytest.param(2, marks=pytest.mark.integration)])
def test_each_files_parse_product_is_kept_and_read_back_with_its_positions(tmp_path, monkeypatch, jobs):
    """The parse task's product: a build keeps each input text's data and positions in the
    store, and a process rendering later (a build's other worker, the next build) reads them
    back, equal to what parsing gives, instead of parsing the file again."""
    import manifesto.tasks.pair as build_renderer
    from manifesto.load import yamlio
    from manifesto.build_graph.api import build
    from manifesto.load.digest import code_fingerprint
    from manifesto.store import Store
    from manifesto.tasks import PairRequest, Task, run
    from manifesto.tasks.memo import Tasks

    root = _tree(tmp_path / "tree")
    monkeypatch.setattr(build_renderer, "PRODUCTS", build_renderer.Products())
    monkeypatch.chdir(root)
    build(["//::"], jobs=jobs, root=str(root), renderer="manifesto.tasks", ui=Quiet())
    texts = {p.read_text() for p in _files(root)}
    assert len(_entries(root, "parsed")) == len(texts)  # every spec and cluster text, once

    tasks = Tasks(Store(str(root / "out" / ".cache" / "tasks")), code_fingerprint())

    def never():
        raise AssertionError("parsed again")

    for path in _files(root):
        text = path.read_text()
        data, locs = tasks.parse(text, "shown.yaml", never)
        want_data, want_locs = yamlio.parse_yaml(text, "shown.yaml")
        assert repr(data) == repr(want_data) and locs.table == want_locs.table and locs.file == "shown.yaml"

    products = build_renderer.Products()
    models = sorted((root / "models" / "qwen").glob("*.yaml"))
    request = PairRequest(str(models[0]), str(root / "clusters" / "example-gb200.yaml"),
                          build_renderer.RenderOptions(user="u", namespace="n"), (str(root),))
    run(Task.RENDER, request, Tasks(tasks.store, tasks.code, products=products))
    assert products.parses == 0


def test_a_parse_product_holds_what_json_cannot_and_refuses_what_msgpack_cannot(tmp_path):
    from manifesto.store import Store
    from manifesto.tasks.memo import Tasks
    from manifesto.load.yamlio import parse_yaml

    tasks = Tasks(Store(str(tmp_path / "store")), "code")
    text = f"a: .nan\nb: -.inf\nc: [1, 2.0, true, null, '3']\nd: {2**70}\n"
    first = tasks.parse(text, "x.yaml", lambda: parse_yaml(text, "x.yaml"))
    assert str(first[0]["a"]) == "nan" and first[0]["d"] == 2**70
    assert list((tmp_path / "store").rglob("*")) == []  # 2**70 does not fit msgpack: not stored
    small = text.replace(str(2**70), "7")
    tasks.parse(small, "x.yaml", lambda: parse_yaml(small, "x.yaml"))
    again = tasks.parse(small, "y.yaml", lambda: (_ for _ in ()).throw(AssertionError("parsed again")))
    assert repr(again[0]) == repr({"a": float("nan"), "b": float("-inf"), "c": [1, 2.0, True, None, "3"], "d": 7})
    assert {o.file for o in again[1].table.values()} == {"y.yaml"}
    [entry] = [p for p in (tmp_path / "store").rglob("*") if p.is_file()]
    entry.write_bytes(entry.read_bytes().replace(b'"data_digest":"', b'"data_digest":"0'))  # damaged: a miss
    assert tasks.parse(small, "x.yaml", lambda: parse_yaml(small, "x.yaml"))[0]["d"] == 7
