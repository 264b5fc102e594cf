"""The build graph with the product's renderer (``manifesto.tasks``) on copies of the
bundled examples: reproducible bytes, incremental re-renders, a light no-op."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # every test here runs the build CLI as a process

pytest.importorskip("manifesto.tasks.pair")

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("pydantic", "pydantic_core", "ruamel.yaml", "msgspec", "manifesto.tasks.pair", "manifesto.load.yamlio")


def copy_examples(dest: Path) -> Path:
    """BUILD.yaml and the bundled inputs, without out/ or any cache."""
    dest.mkdir(parents=True)
    shutil.copy(REPO / "BUILD.yaml", dest / "BUILD.yaml")
    for name in ("models", "clusters", "routing"):
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns(".*"))
    return dest


def cli(root: Path, *args: str, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k != "MANIFESTO_BUILD_RENDERER"}
    return subprocess.run([sys.executable, "-m", "manifesto.build_graph", *args], cwd=root, env={**clean, **env},
                          capture_output=True, text=True, timeout=600)


def out_files(root: Path) -> dict[str, bytes]:
    out = root / "out"
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.relative_to(out).as_posix().startswith(".")}


def rendered(proc) -> list[tuple[str, str]]:
    return sorted((r["model"], r["cluster"]) for r in json.loads(proc.stdout)["pairs"] if r["status"] == "rendered")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = copy_examples(tmp_path_factory.mktemp("real") / "examples")
    first = cli(root, "build", "//::", "--output", "json")
    return root, json.loads(first.stdout)


def test_bundled_examples_build_with_every_failure_explained(built):
    root, report = built
    assert report["summary"]["rendered"] > 0
    for row in report["pairs"]:
        assert row["status"] in ("rendered", "skipped", "failed")
        if row["status"] != "rendered":
            assert row["message"]
    assert set(out_files(root)) == {r["artifact"][4:] for r in report["pairs"] if r["status"] == "rendered"}


def test_artifacts_carry_no_absolute_path(built):
    root, _ = built
    for name, text in out_files(root).items():
        assert str(root).encode() not in text and str(REPO).encode() not in text, name


def test_noop_build_renders_nothing_and_imports_nothing_heavy(built):
    """Errors without the files they read are retried every build, so the no-op is
    measured on the clusters where every pair renders or is skipped."""
    root, report = built
    failing = {r["cluster"] for r in report["pairs"] if r["status"] == "failed"}
    clean = [f"--cluster={c}" for c in sorted({r["cluster"] for r in report["pairs"]} - failing)]
    proc = cli(root, "build", "//::", *clean, "--output", "json")
    assert json.loads(proc.stdout)["pairs"] and rendered(proc) == []
    trace = subprocess.run([sys.executable, "-X", "importtime", "-m", "manifesto.build_graph", "build", "//::", *clean],
                           cwd=root, capture_output=True, text=True, env={**os.environ, "MANIFESTO_BUILD_RENDERER": ""})
    imported = set(re.findall(r"\|\s*([\w.]+)\s*$", trace.stderr, re.M))
    assert "manifesto.build_graph.engine" in imported
    assert not imported.intersection(HEAVY)


def test_editing_a_cluster_re_renders_exactly_its_pairs(tmp_path):
    root = copy_examples(tmp_path / "examples")
    report = json.loads(cli(root, "build", "//::", "--output", "json").stdout)
    cluster = sorted({r["cluster"] for r in report["pairs"] if r["status"] == "rendered"})[0]
    path = root / "clusters" / f"{cluster}.yaml"
    path.write_text(path.read_text() + "\n# an edit that changes no field\n")
    again = cli(root, "build", "//::", "--output", "json")
    ok = {(r["model"], r["cluster"]) for r in report["pairs"] if r["status"] == "rendered"}
    assert rendered(again) == sorted(p for p in ok if p[1] == cluster)


def test_two_checkouts_with_different_hash_seeds_are_byte_identical(built, tmp_path):
    root, _ = built
    other = copy_examples(tmp_path / "elsewhere" / "checkout")
    cli(other, "build", "//::", "--jobs", "2", PYTHONHASHSEED="987")
    assert out_files(other) == out_files(root)


def test_committed_out_matches_the_inputs(tmp_path):
    if not any((REPO / "out").glob("*/**/*.yaml")):
        pytest.skip("out/ of the bundled examples is not committed yet")
    root = copy_examples(tmp_path / "clone")
    shutil.copytree(REPO / "out", root / "out", ignore=shutil.ignore_patterns(".*"))
    proc = cli(root, "build", "--check", "//::")
    assert proc.stdout.endswith("; check: 0 problems\n"), proc.stderr


def test_user_catalog_and_environment_never_reach_an_artifact(built, tmp_path):
    """A user catalog that shadows every bundled name, and identity settings in the
    environment, change nothing: the build names its inputs by path only."""
    root, _ = built
    catalog = tmp_path / "user-catalog"
    for kind in ("models", "clusters", "routing"):
        for src in (root / kind).rglob("*.yaml"):
            dest = catalog / kind / src.relative_to(root / kind)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text("this: [is not a valid catalog entry\n")
    shadow = copy_examples(tmp_path / "shadowed")
    cli(shadow, "build", "//::", MANIFESTO_CONFIG_HOME=str(catalog), USER="alice", MANIFESTO_NAMESPACE="leaky",
        MANIFESTO_CLUSTER="example-h200", MANIFESTO_ROUTING_PROFILE="wide-ep-lws-config")
    assert out_files(shadow) == out_files(root)
