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
