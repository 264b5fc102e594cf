"""A command's -q/-v and the warnings it has given live in its own run (``errors.Run``), not in
module globals (issue 26): a second command in the same process starts with nothing said, and
importing or running the CLI leaves argparse as it was."""

from __future__ import annotations

import argparse
import gettext

from kit import cli_in_process
from manifesto.errors import Run, warn_once


def test_a_warning_is_said_once_per_run_and_again_in_the_next(capsys):
    first = Run()
    with first.active():
        warn_once("manifesto: warning: w")
        warn_once("manifesto: warning: w")
    assert capsys.readouterr().err == "manifesto: warning: w\n"
    with Run().active():
        warn_once("manifesto: warning: w")
    assert capsys.readouterr().err == "manifesto: warning: w\n"


def test_outside_a_run_a_warning_is_said_every_time(capsys):
    warn_once("manifesto: warning: w")
    warn_once("manifesto: warning: w")
    assert capsys.readouterr().err == "manifesto: warning: w\nmanifesto: warning: w\n"


def test_runs_nest_and_the_outer_one_is_active_again(capsys):
    outer = Run()
    with outer.active():
        with Run().active():
            warn_once("inner")
        warn_once("inner")  # the outer run has not said it
        warn_once("inner")
    assert capsys.readouterr().err == "inner\ninner\n"


def test_quiet_silences_notes_not_warnings(capsys):
    run = Run(quiet=True)
    run.info("a note")
    run.once("warning: kept")
    assert capsys.readouterr().err == "warning: kept\n"


def test_two_commands_in_one_process_each_give_their_warnings(tmp_path):
    spec = tmp_path / "ref.yaml"
    runs = []
    for comment in ("# first\n", "# second\n"):  # new bytes: the second command parses the file again
        spec.write_text("release: demo\nnamespace: prod\nmodel: {id: org/model}\nroles:\n  - name: decode\n" + comment)
        runs.append(cli_in_process("config", "validate", str(spec), "--cluster", "example-stateless-b200",
                                   "--user", "u", "--namespace", "ns"))
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    warnings = [[line for line in r.stderr.splitlines() if line.startswith("manifesto: warning:")] for r in runs]
    assert warnings[0] and warnings[0] == warnings[1]
    assert "namespace is ignored" in warnings[0][0]


def test_the_cli_leaves_argparse_as_it_found_it():
    import manifesto.cli  # noqa: F401 - importing it must patch nothing

    assert argparse._ is gettext.gettext and argparse.ngettext is gettext.ngettext
    assert cli_in_process("--help").returncode == 0
    assert argparse._ is gettext.gettext and argparse.ngettext is gettext.ngettext


def test_a_tasks_warnings_are_data_on_its_outcome_and_no_task_writes_them(tmp_path, capsys):
    """Issue 37: the checks a resolution could not make are the outcome's ``warnings`` (and its
    Artifact's); the task writes nothing to stderr, and no module of the tasks reports through
    the run's context variable. The entry point says them (``errors.say_warnings``)."""
    import ast
    from pathlib import Path

    from manifesto.errors import say_warnings
    from manifesto.resolve.options import Options
    from manifesto.store import Store
    from manifesto.tasks.core import PairRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run

    root = Path(__file__).resolve().parents[1]
    spec = tmp_path / "m.yaml"
    spec.write_text("release: demo\nmodel: {id: org/model, image: my/vllm:dev}\nroles:\n  - name: decode\n")
    cluster = str(root / "clusters" / "example-stateless-b200.yaml")
    said = ("manifesto: warning: the image my/vllm:dev names no vLLM release; vLLM arguments and VLLM_* "
            "variables are not checked",)
    for task in (Task.RESOLVE, Task.RENDER, Task.ARTIFACT):
        outcome = run(task, PairRequest(str(spec), cluster, Options(user="u", namespace="n")), Tasks(Store(None), ""))
        assert outcome.ok().warnings == said
    assert outcome.artifact.warnings == said
    assert capsys.readouterr().err == ""
    with Run().active():
        say_warnings(outcome)
        say_warnings(outcome)
    assert capsys.readouterr().err == said[0] + "\n"
    reporters = []
    for path in sorted((root / "manifesto" / "tasks").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in ("warn_once", "say_warnings"):
                reporters.append(f"{path.relative_to(root)}:{node.lineno}")
    # only the single commands' route (it answers the CLI) says what its task found
    assert [r.split(":")[0] for r in reporters] == ["manifesto/tasks/commands.py"], reporters


def test_loadings_warnings_are_data_on_what_it_returns_or_raises(tmp_path, capsys):
    """Issue 37: the reference spellings loading maps are ``Loaded.warnings`` (and, when a later
    check fails, the error's ``warnings``), in the order found; loading writes nothing. A task
    that loads a spec by path carries them on its outcome; one given a loaded spec does not
    (its caller said them)."""
    from pathlib import Path

    from manifesto.errors import SchemaError
    from manifesto.load.inputs import load_model
    from manifesto.resolve.options import Options
    from manifesto.spec import load_spec
    from manifesto.store import Store
    from manifesto.tasks.core import PairRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run

    root = Path(__file__).resolve().parents[1]
    cluster = str(root / "clusters" / "example-stateless-b200.yaml")
    base = tmp_path / "base.yaml"
    base.write_text("release: demo\nnamespace: prod\nmodel: {id: org/model}\nroles:\n  - name: decode\n")
    spec = tmp_path / "m.yaml"
    spec.write_text("extends: base.yaml\ncache: {cuda: cu12}\n")
    _model, loaded = load_model(spec)
    assert [line.split(": ")[2] for line in loaded.warnings] == [f"{spec}:2:9", f"{base}:2:1"]
    assert all(line.startswith("manifesto: warning: ") for line in loaded.warnings)
    assert capsys.readouterr().err == ""
    opts = Options(user="u", namespace="n")
    outcome = run(Task.RESOLVE, PairRequest(str(spec), cluster, opts), Tasks(Store(None), ""))
    assert outcome.ok().warnings[:2] == loaded.warnings
    given = load_spec(spec)  # the API's loader says them itself (outside a run: on stderr)
    assert capsys.readouterr().err == "".join(f"{line}\n" for line in loaded.warnings)
    outcome = run(Task.RESOLVE, PairRequest(given, cluster, opts), Tasks(Store(None), ""))
    assert not set(loaded.warnings) & set(outcome.ok().warnings)
    bad = tmp_path / "bad.yaml"
    bad.write_text("extends: base.yaml\ncache: {cuda: cu12}\nroles: 7\n")
    try:
        load_model(bad)
    except SchemaError as exc:
        assert [line.split(": ")[2] for line in exc.warnings] == [f"{bad}:2:9", f"{base}:2:1"]
    else:
        raise AssertionError("roles: 7 loaded")
    outcome = run(Task.RESOLVE, PairRequest(str(bad), cluster, opts), Tasks(Store(None), ""))
    assert outcome.error is not None and outcome.warnings[:2] == tuple(
        line.replace(str(spec), str(bad)) for line in loaded.warnings)
    assert capsys.readouterr().err == ""


def test_only_the_cli_and_errors_read_the_runs_context_variable():
    """Issue 37: no product depends on a ContextVar. Outside ``cli/`` and ``errors.py`` nothing
    names the run (``Run``, ``_ACTIVE``, ``warn_once``, a ``ContextVar``). ``note`` and ``quiet``
    are the terminal's verbosity (-q), a presentation setting: only the commands that talk to
    the person at the terminal (``cli/``, ``ops/``) use them, never a loader, task or renderer.
    Saying found warnings (``say_warnings``) is the caller's, after the product is made."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "manifesto"
    banned = {"Run", "_ACTIVE", "warn_once", "ContextVar"}
    presentation = {"note", "quiet"}
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "errors.py" or rel.startswith("cli/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module in ("manifesto.errors", "contextvars"):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.Attribute) and ast.unparse(node.value).endswith("errors"):
                names = [node.attr]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name == "contextvars"]
            for name in names:
                if name in banned or name == "contextvars" or (name in presentation and not rel.startswith("ops/")):
                    found.append(f"{rel}:{node.lineno}: {name}")
    assert found == []
