"""The engine in-process, with an injected render function, and its small parts."""

from __future__ import annotations

import argparse
import subprocess
import sys

import fake_renderer
import pytest
from buildkit import TREE, make_tree, write_files

from manifesto.build_graph import api
from manifesto.build_graph.addresses import parse_address
from manifesto.build_graph.globs import GlobError, compile_glob, select
from manifesto.build_graph.state import load_state, new_state, save_state
from manifesto.errors import BuildError, IncompatiblePairError


class Recorder:
    """A UI that keeps warnings, and a render function that counts its calls."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.calls: list[tuple[str, str]] = []

    def render(self, task, request, store):
        self.calls.append((request.spec.rsplit("/models/", 1)[1], request.cluster.rsplit("/", 1)[1]))
        return fake_renderer.run(task, request, store)

    warn = wait = lambda self, message: self.warnings.append(message)

    def progress(self, done, total, label) -> None:
        pass

    def progress_done(self) -> None:
        pass


@pytest.fixture
def tree(tmp_path):
    write_files(tmp_path, TREE, age=10)
    return tmp_path


def build(tree, rec: Recorder, *addresses, **kwargs):
    return api.build(addresses or ["//::"], root=tree, renderer="fake_renderer", ui=rec, render=rec.render, **kwargs)


def test_injected_render_function_builds_and_then_does_nothing(tree):
    rec = Recorder()
    first = build(tree, rec)
    assert len(rec.calls) == 12 and first.counts()["rendered"] == 8
    rec.calls.clear()
    second = build(tree, rec)
    assert rec.calls == [] and second.counts() == {"rendered": 0, "up to date": 8, "skipped": 4, "failed": 0}
    assert rec.warnings == []


def test_an_edit_during_the_build_is_not_cached(tree):
    """A file modified while (or just before) a build runs is rendered again next time."""
    rec = Recorder()
    write_files(tree, {"models/qwen/aggregated.yaml": "release: fresh\n"})  # mtime: now
    build(tree, rec)
    rec.calls.clear()
    build(tree, rec)
    assert sorted(rec.calls) == [("qwen/aggregated.yaml", c) for c in ("gpu.yaml", "hopper.yaml", "slurm.yaml")]


def test_artifact_for_returns_a_fresh_artifact(tree):
    rec = Recorder()
    path = api.artifact_for("//models/wide:1p1d", "gpu", root=tree, renderer="fake_renderer", ui=rec)
    assert path == tree.resolve() / "out/gpu/wide/1p1d.yaml" and path.is_file()
    path.write_text("hand edit\n")
    again = api.artifact_for(str(tree / "models/wide/1p1d.yaml"), "//clusters:gpu", root=tree,
                             renderer="fake_renderer", ui=rec)
    assert again == path and "hand edit" not in path.read_text()


def test_target_path_resolves_one_target(tree):
    assert api.target_path("//models/qwen:laguna", root=tree) == tree.resolve() / "models/qwen/laguna"
    assert api.target_path("//clusters:gpu", root=tree) == tree.resolve() / "clusters/gpu.yaml"
    with pytest.raises(BuildError) as info:
        api.target_path("//models/wide:", root=tree)
    assert str(info.value) == "//models/wide: names 2 targets; expected one"


def test_artifact_for_an_incompatible_pair_raises(tree):
    with pytest.raises(IncompatiblePairError) as info:
        api.artifact_for("//models/wide:1p1d", "hopper", root=tree, renderer="fake_renderer", ui=Recorder())
    assert str(info.value) == "wide/1p1d.yaml: the spec pins accelerator 'gb200' but cluster 'hopper' offers h200"
    with pytest.raises(BuildError) as info:
        api.artifact_for("//models/wide:", "gpu", root=tree, renderer="fake_renderer", ui=Recorder())
    assert str(info.value) == "'//models/wide:' names 2 targets; expected one model target"


def test_a_renderer_bug_fails_its_pair_with_the_traceback(tree):
    rec = Recorder()

    def crash(task, request, store):
        if "laguna" in request.spec:
            raise ZeroDivisionError("oops")
        return rec.render(task, request, store)

    report = api.build(["//models/qwen::"], root=tree, renderer="fake_renderer", ui=rec, render=crash)
    failed = [r for r in report.rows if r["status"] == "failed"]
    assert len(failed) == 3 and "ZeroDivisionError: oops" in failed[0]["message"]
    assert report.counts()["rendered"] == 3


def test_a_renderer_that_returns_no_outcome_fails_its_pair(tree):
    rec = Recorder()

    def untyped(task, request, store):
        if "laguna" in request.spec:
            return ("text", ".yaml")  # the old tuple shape: not an Outcome
        return rec.render(task, request, store)

    report = api.build(["//models/qwen::"], root=tree, renderer="fake_renderer", ui=rec, render=untyped)
    failed = [r for r in report.rows if r["status"] == "failed"]
    assert len(failed) == 3 and all("it returned a tuple, not an Outcome" in r["message"] for r in failed)
    assert report.counts()["rendered"] == 3


# -- state ---------------------------------------------------------------------


def test_state_round_trips_and_rejects_damage(tmp_path):
    path = str(tmp_path / "state")
    state = new_state()
    state.stat.set("a", 1 | 2 << 64, "d")
    save_state(path, state)
    warnings = []
    back = load_state(path, warnings.append).stat
    assert back.signatures == {"a": 1 | 2 << 64} and back.digests == {"a": "d"}
    blob = open(path, "rb").read()
    open(path, "wb").write(blob[:-1] + bytes([blob[-1] ^ 1]))
    assert load_state(path, warnings.append) == new_state()
    assert warnings == [f"{path}: corrupt build cache, ignoring it (this build re-checks every pair)"]


def test_task_cache_collection_keeps_referenced_and_newest_entries(tmp_path):
    import os

    from manifesto.store import Store

    cache = Store(str(tmp_path), None)
    keys = [f"{i:x}" * 32 for i in range(10)]  # file names the store writes: keys, in their shard
    for i, key in enumerate(keys):
        path = tmp_path / key[:2] / key
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"x")
        os.utime(path, ns=(i * 10**9, i * 10**9))
    assert cache.collect({keys[0], keys[1]}, 5) == 5
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [keys[i] for i in (0, 1, 7, 8, 9)]


# -- globs and addresses -------------------------------------------------------

FILES = ["a.yaml", "b-base.yaml", "x/c.yaml", "x/y/d.yaml", "x/y/d-base.yaml", "e", "x/README.md"]

GLOBS = {
    "star": (["*.yaml"], [], ["a.yaml", "b-base.yaml"]),
    "double-star": (["**/*.yaml"], [], ["a.yaml", "b-base.yaml", "x/c.yaml", "x/y/d.yaml", "x/y/d-base.yaml"]),
    "exclude": (["**/*"], ["**/*-base.yaml", "**/*.md"], ["a.yaml", "x/c.yaml", "x/y/d.yaml", "e"]),
    "below": (["x/**"], [], ["x/c.yaml", "x/y/d.yaml", "x/y/d-base.yaml", "x/README.md"]),
    "middle": (["x/**/d.yaml"], [], ["x/y/d.yaml"]),
    "class": (["[ab].yaml", "?"], [], ["a.yaml", "e"]),
    "negated-class": (["[!a]*.yaml"], [], ["b-base.yaml"]),
}


@pytest.mark.parametrize("includes, excludes, expected", list(GLOBS.values()), ids=list(GLOBS))
def test_globs_select_sources(includes, excludes, expected):
    assert select(FILES, includes, excludes) == expected


@pytest.mark.parametrize("pattern, message", [
    ("", "empty pattern"),
    ("/abs", "patterns are relative to the target's path; drop the leading '/'"),
    ("a/../b", "'..' is not allowed in a pattern"),
    ("a//b", "'//' is not allowed in a pattern"),
    ("a**", "'**' must be a whole path segment, as in 'a/**/b.yaml'"),
    ("[ab", "unclosed '[' character class"),
])
def test_bad_globs_say_what_is_wrong(pattern, message):
    with pytest.raises(GlobError) as err:
        compile_glob(pattern)
    assert str(err.value) == message


@pytest.mark.parametrize("text, kind, directory, name, single", [
    ("//models/deepseek-v4:1P-EP8-1D-EP8", "target", "models/deepseek-v4", "1P-EP8-1D-EP8", True),
    ("//models/deepseek-v4:all", "dir", "models/deepseek-v4", "", False),
    ("//models/deepseek-v4:", "dir", "models/deepseek-v4", "", False),
    ("//models::", "tree", "models", "", False),
    ("//models/...", "tree", "models", "", False),
    ("//::", "tree", "", "", False),
    ("//...", "tree", "", "", False),
    ("//:root-file", "target", "", "root-file", True),
    ("models/qwen/aggregated.yaml", "file", "", "models/qwen/aggregated.yaml", True),
])
def test_addresses_parse(text, kind, directory, name, single):
    spec = parse_address(text)
    assert (spec.kind, spec.dir, spec.name, spec.single) == (kind, directory, name, single)


# -- the CLI registration ------------------------------------------------------


@pytest.mark.integration
def test_register_declares_every_command_without_importing_the_engine():
    code = (
        "import argparse, sys\n"
        "from manifesto.cli.build_cmds import formatter, register\n"
        "p = argparse.ArgumentParser(formatter_class=formatter()); register(p.add_subparsers(dest='cmd'))\n"
        "a = p.parse_args(['build', '//models::', '--check', '-j', '2', '--cluster', 'c', '--changed-since', 'HEAD'])\n"
        "assert a.func.__name__ == '_run_build' and a.jobs == 2 and a.cluster == ['c']\n"
        "heavy = [m for m in sys.modules if m.startswith('manifesto.build_graph.')]\n"
        "heavy += [m for m in ('msgspec', 'ruamel', 'pydantic', 'pydantic_core', 'shutil') if m in sys.modules]\n"
        "print(sorted(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == "[]\n"


@pytest.mark.parametrize("argv", [
    ["list"], ["deps", "//:x"], ["dependents", "f"], ["matrix", "--format", "github"], ["clean", "--all"],
])
def test_every_command_has_a_handler(argv):
    from manifesto.cli.build_cmds import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="cmd"))
    assert callable(parser.parse_args(argv).func)


def test_commands_names_every_command_and_only_declares_just_one():
    from manifesto.cli.build_cmds import COMMANDS, register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="cmd"))
    assert tuple(parser._subparsers._group_actions[0].choices) == COMMANDS
    for name in COMMANDS:
        parser = argparse.ArgumentParser()
        register(parser.add_subparsers(dest="cmd"), only=name)
        assert list(parser._subparsers._group_actions[0].choices) == [name]


def test_the_main_cli_parses_a_build_command_alone_like_in_the_whole_tree():
    """``manifesto build ...`` parses with only the build commands (no other command module is
    imported); the namespace is the one the whole tree gives."""
    from manifesto.cli.parser import get_parser

    argv = ["build", "//models::", "--check", "-j", "2", "--cluster", "c", "--explain"]
    alone, whole = get_parser("build", alone=True), get_parser()
    assert vars(alone.parse_args(argv)) == vars(whole.parse_args(argv))
    assert list(alone._subparsers._group_actions[0].choices) == ["build"]


def test_jobs_must_be_positive(capsys):
    from manifesto.cli.build_cmds import register

    parser = argparse.ArgumentParser(prog="m")
    register(parser.add_subparsers(dest="cmd"))
    with pytest.raises(SystemExit):
        parser.parse_args(["build", "--jobs", "0"])
    assert "expected a number of jobs from 1 to 1024, got '0'" in capsys.readouterr().err


def test_public_api_is_pinned():
    import manifesto.build_graph

    assert manifesto.build_graph.__all__ == [
        "artifact_for", "build", "clean", "deps", "dependents", "list_targets", "matrix", "target_path",
    ]
    assert all(callable(getattr(manifesto.build_graph, name)) for name in manifesto.build_graph.__all__)


def test_make_tree_helper_matches_the_fake_renderer_contract(tmp_path):
    root = make_tree(tmp_path)
    with pytest.raises(IncompatiblePairError):
        fake_renderer.render_pair(str(root / "models/qwen/laguna"), str(root / "clusters/hopper.yaml"),
                                  fake_renderer.RenderOptions("u", "n"))


def test_the_session_keeps_the_look_and_the_execution_only():
    """Issue 37 item 4: planning, a pair's job and saving the manifest are modules of their own
    (``planning``, ``jobs``, ``saving``) that never import the engine; the Session keeps the
    look at the workspace and the execution, with no method of theirs left on it."""
    import ast
    from pathlib import Path

    from manifesto.build_graph.engine import Session

    moved = {"plan", "_classify", "_why_context", "_current_digests", "_changed_keys", "needs_lock",
             "_skipped_leftovers", "artifact_rel", "artifact_key", "_job", "_gitops_request", "save", "_referenced",
             "save_opportunistically", "_save_now_and_then"}
    assert sorted(moved & set(vars(Session))) == []
    package = Path(__file__).resolve().parents[2] / "manifesto" / "build_graph"
    for name in ("planning", "jobs", "saving"):
        tree = ast.parse((package / f"{name}.py").read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert "manifesto.build_graph.engine" not in imported, name
        assert "engine" not in {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                                for alias in node.names}, name
