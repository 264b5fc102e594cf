"""A cold build parses and validates each input file once, whatever the number of pairs
that read it (issue 15): the parse tasks' products are shared between the pairs."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("manifesto.tasks.pair")

REPO = Path(__file__).resolve().parents[2]


def _tree(root: Path, copies: int) -> Path:
    """The bundled examples plus ``copies`` copies of every qwen spec, built with a routing profile."""
    for name in ("models", "clusters", "routing"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns(".*"))
    for spec in sorted((root / "models" / "qwen").glob("*.yaml")):
        for k in range(copies):
            shutil.copy(spec, spec.with_name(f"{spec.stem}-copy{k}.yaml"))
    buildfile = (REPO / "BUILD.yaml").read_text()
    assert "    # routing_profile: //routing:kv-aware" not in buildfile
    buildfile = buildfile.replace("    # routing_profile: //routing:wide-ep-lws-config",
                                  "    routing_profile: routing/kv-aware.yaml")
    (root / "BUILD.yaml").write_text(buildfile)
    return root


def test_a_cold_build_parses_and_validates_each_file_once(tmp_path, monkeypatch):
    import manifesto.tasks.pair as build_renderer
    from manifesto.load import inputs as load, yamlio
    from manifesto.build_graph.api import build
    from manifesto.build_graph.report import Report

    root = _tree(tmp_path / "tree", copies=3)
    parsed, texts, validated = Counter(), Counter(), Counter()
    parse_yaml, validate = yamlio.parse_yaml, load.validate

    def counting_parse(text, name):
        parsed[name] += 1
        texts[text] += 1
        return parse_yaml(text, name)

    def counting_validate(model_cls, loaded):
        validated[(model_cls.__name__, tuple(loaded.files))] += 1
        return validate(model_cls, loaded)

    monkeypatch.setattr(yamlio, "parse_yaml", counting_parse)
    monkeypatch.setattr(load, "validate", counting_validate)
    monkeypatch.setattr(build_renderer, "PRODUCTS", build_renderer.Products())
    monkeypatch.chdir(root)

    class Quiet:
        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    report = build(["//::"], jobs=1, root=str(root), renderer="manifesto.tasks", ui=Quiet())
    assert isinstance(report, Report)
    rendered = [i for i in report.items if i.status == "ok"]
    assert len(rendered) >= 40  # many pairs share each cluster, spec and routing file

    inputs = sorted(p.relative_to(root).as_posix() for d in ("models", "clusters", "routing")
                    for p in (root / d).rglob("*.yaml"))
    read = [n for n in inputs if not n.startswith("routing/") or n == "routing/kv-aware.yaml"]
    # Every input's bytes were parsed, once: a copy of a spec is parsed with its original.
    assert {(root / n).read_text() for n in read} <= set(texts)
    assert {t[:40]: c for t, c in texts.items() if c != 1} == {}
    assert sum(parsed.values()) == len(texts)
    assert len(parsed) < len(read)  # copies were not parsed again
    # Each spec (copies included: it is its own file) and cluster was validated once.
    assert {k: c for k, c in validated.items() if c != 1} == {}
    assert sum(1 for kind, _ in validated if kind == "ClusterProfile") == sum(1 for n in read if n.startswith("clusters/"))
    assert sum(1 for kind, _ in validated if kind == "ModelSpec") == sum(1 for n in read if n.startswith("models/")
                                                                       and not n.endswith("-base.yaml"))
    # A copy parsed as its original still points errors at its own lines.
    skipped = {(i.pair[0].rsplit("/", 1)[-1], i.pair[1]): i.message for i in report.items if i.status == "skipped"}
    assert skipped[("h200-aggregated-copy1.yaml", "example-gb200")] == (
        "models/qwen/h200-aggregated-copy1.yaml:14:1: accelerator: 'h200' is not offered by cluster "
        "'example-gb200'; it offers: b200, gb200")
    # The specs and clusters went through the build's products (not BUILD.yaml, the image
    # catalog, or the routing profile, which is kept whole as a validated product).
    assert build_renderer.PRODUCTS.parses == sum(1 for n in parsed if n.startswith(("models/", "clusters/")))
