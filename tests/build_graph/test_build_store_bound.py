"""The build's store stays within a size bound (issue 26): ``clean --gc`` and the build itself
delete the least recently used entries past it, never one the last build's pairs use, so a
build after either restores every artifact without rendering."""

from __future__ import annotations

import json
import re

import pytest
from buildkit import BUILD_YAML, PAIRS, Runner, artifacts, make_tree
from store_kit import entry_files

pytestmark = pytest.mark.integration  # the real CLI in a subprocess

SPEC = "models/qwen/aggregated.yaml"


@pytest.fixture
def run(tmp_path):
    return Runner(make_tree(tmp_path / "tree"), tmp_path / "renders.log")


def _results(run) -> int:
    return len(entry_files(run.root / "out/.cache/tasks", "result"))


def _edit_and_build(run, times: int, **env) -> None:
    for n in range(times):
        (run.root / SPEC).write_text(f"release: qwen{n}\n")
        run("build", **env)


def _restores_without_rendering(run) -> None:
    run.renders()
    built = artifacts(run.root)
    for rel in built:
        (run.root / "out" / rel).unlink()
    run("build")  # writes them again, from the store
    assert run.renders() == [] and artifacts(run.root) == built


def test_clean_gc_keeps_the_entries_the_last_build_uses(run):
    run("build")
    _edit_and_build(run, 3)  # each edit leaves the qwen pairs' older results behind
    assert _results(run) == len(PAIRS) + 3 * 3
    done = json.loads(run("clean", "--gc", "-o", "json", MANIFESTO_STORE_LIMIT="0").stdout)
    assert done["removed"] >= 9 and done["limit_bytes"] == 0 and done["entries"] == len(PAIRS)
    assert done["bytes"] == done["live_bytes"] > 0  # only the live entries and their texts are left
    assert _results(run) == len(PAIRS)
    _restores_without_rendering(run)


def test_clean_gc_within_the_bound_deletes_nothing(run):
    run("build")
    _edit_and_build(run, 1)
    proc = run("clean", "--gc")
    assert re.fullmatch(r"removed 0 files \(0\.0 MiB\); the store holds (\d+\.\d) MiB of its 1024\.0 MiB bound, "
                        r"(\d+\.\d) MiB of it used by the last build\n", proc.stdout), proc.stdout
    assert _results(run) == len(PAIRS) + 3


def test_a_build_prunes_past_the_bound_buildfile_sets(run):
    (run.root / "BUILD.yaml").write_text(BUILD_YAML + "store_limit: 0\n")
    run("build")
    _edit_and_build(run, 3)
    assert _results(run) == len(PAIRS)  # each build pruned what the one before left behind
    _restores_without_rendering(run)
    _edit_and_build(run, 2, MANIFESTO_STORE_LIMIT="1Gi")  # the environment's bound wins
    assert _results(run) == len(PAIRS) + 2 * 3


def test_a_bad_bound_is_one_error_naming_where_it_came_from(run):
    (run.root / "BUILD.yaml").write_text(BUILD_YAML + "store_limit: lots\n")
    proc = run("build", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    line = BUILD_YAML.count("\n") + 1
    assert proc.stderr == (f"error: BUILD.yaml:{line}:1: store_limit: expected a size such as 2Gi, 500M or 1000000 "
                           "(bytes, at most 1Pi), got 'lots'\n")
    (run.root / "BUILD.yaml").write_text(BUILD_YAML)
    for command in (("build",), ("clean", "--gc")):
        proc = run(*command, check=False, MANIFESTO_STORE_LIMIT="a lot")
        assert proc.returncode == 1 and proc.stderr == (
            "error: MANIFESTO_STORE_LIMIT: expected a size such as 2Gi, 500M or 1000000 (bytes, at most 1Pi), "
            "got 'a lot'\n"), command


def test_a_planted_manifest_cannot_upset_the_bound(run):
    from manifesto.build_graph.state import load_state, save_state

    run("build")
    path = str(run.root / "out/.cache/state")
    state = load_state(path, print)
    state.tasks, state.store = "many", ("big", -1)  # a committed out/.cache may hold anything
    save_state(path, state)
    _edit_and_build(run, 1, MANIFESTO_STORE_LIMIT="0")
    assert _results(run) == len(PAIRS)  # measured, then pruned to what the pairs use
    assert load_state(path, print).store[0] > 0


def test_the_build_entry_point_reads_the_stores_variable_without_importing_the_store():
    """``build_graph.api`` names ``MANIFESTO_STORE_LIMIT`` itself (a no-op build must not import
    the store for a name): the two names are one."""
    from manifesto.build_graph.api import STORE_LIMIT_VARIABLE
    from manifesto.store import ENV_LIMIT

    assert STORE_LIMIT_VARIABLE == ENV_LIMIT
