"""`manifesto man`: sections, a reproducible date, and clean lints by mandoc and groff."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kit import run_cli, unavailable

pytestmark = pytest.mark.integration  # every test here reads a page from the CLI run as a process

SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO")


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    first, second = run_cli("man"), run_cli("man")
    assert first.returncode == 0 and first.stdout == second.stdout
    return first.stdout


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        unavailable(f"{name} is not installed (.ci/run installs it)")
    return path


def test_sections_title_and_every_command(page):
    from manifesto.cli import get_parser

    header = page.splitlines()[0]
    assert header == '.TH MANIFESTO "1" "December 1, 2026" "llm\\-manifesto 0.1.0" "llm\\-manifesto manual"'
    headings = [line[4:].strip('"') for line in page.splitlines() if line.startswith(".SH ")]
    for section in SECTIONS:
        assert section in headings, section
    assert "Generated Python Manual" not in page and "1970" not in page
    top = get_parser()._subparsers._group_actions[0].choices
    for name in top:
        assert f"manifesto {name}" in page.replace("\\-", "-"), name


def test_description_ends_where_its_text_ends(page):
    """DESCRIPTION is the page's own text: argparse's one-line --help description is not glued
    on after it as a sentence of its own."""
    body = page.split(".SH DESCRIPTION\n", 1)[1].split("\n.SH", 1)[0]
    assert "Render vLLM" not in body
    assert body.rstrip().endswith(".BR \"\\-o, \\-\\-output text|json|yaml|name\" ."), body[-200:]


def test_source_date_epoch_sets_the_date():
    proc = run_cli("man", env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert proc.stdout.splitlines()[0].split('"')[3] == "November 14, 2023"


def test_mandoc_lint_is_clean(page, tmp_path):
    path = tmp_path / "manifesto.1"
    path.write_text(page)
    proc = subprocess.run([_tool("mandoc"), "-Tlint", str(path)], capture_output=True, text=True)
    assert proc.stdout + proc.stderr == "", proc.stdout + proc.stderr


def test_groff_warns_about_nothing(page):
    proc = subprocess.run([_tool("groff"), "-ww", "-z", "-man"], input=page, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_man_renders_the_page(page, tmp_path):
    path = tmp_path / "manifesto.1"
    path.write_text(page)
    proc = subprocess.run([_tool("man"), "-l", str(path)], capture_output=True, text=True,
                          env={"MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    for section in SECTIONS:
        assert f"\n{section}\n" in text, section
    assert "MANIFESTO_CLUSTER_MAP" in text and "manifesto build //::" in text
