"""No long functions where they are hardest to review (issue 37 item 5): every function in
manifesto/edge/ (the readers of untrusted files, paths and the network) and manifesto/testing/
(the fake kubectl the lifecycle tests trust) stays at most LIMIT lines, its decorators and
docstring included. A longer one is split into named steps, as header.parse and the fake's
verbs were."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "manifesto"
FOLDERS = ("edge", "testing")
LIMIT = 60


def long_functions(source: str, file: str, limit: int = LIMIT) -> list[str]:
    """``FILE:LINE NAME is N lines`` for each function (methods and nested ones too) in
    ``source`` longer than ``limit`` lines."""
    out = []
    for node in ast.walk(ast.parse(source, file)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = node.end_lineno - first + 1
            if length > limit:
                out.append(f"{file}:{first} {node.name} is {length} lines")
    return out


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_function_is_longer_than_the_limit(folder):
    files = sorted((PACKAGE / folder).rglob("*.py"))
    assert files, f"no Python files under manifesto/{folder}"
    found = [line for path in files
             for line in long_functions(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))]
    assert not found, f"functions longer than {LIMIT} lines (split them into named steps):\n" + "\n".join(found)


def _function(lines: int, *, decorated: bool = False, method: bool = False) -> str:
    """Source of a function ``f`` of exactly ``lines`` lines (inside a class when ``method``)."""
    body = ["@staticmethod"] * decorated + ["def f():"] + ["    x = 1"] * (lines - 1 - decorated)
    if method:
        return "class C:\n" + "".join(f"    {line}\n" for line in body)
    return "".join(f"{line}\n" for line in body)


def test_the_limit_counts_every_line_of_a_function():
    assert long_functions(_function(LIMIT), "m.py") == []
    assert long_functions(_function(LIMIT + 1), "m.py") == [f"m.py:1 f is {LIMIT + 1} lines"]
    assert long_functions(_function(LIMIT + 1, decorated=True, method=True), "m.py") == \
        [f"m.py:2 f is {LIMIT + 1} lines"]
    nested = "def outer():\n" + "".join(f"    {line}\n" for line in _function(LIMIT + 1).splitlines())
    assert [line.split(" ")[1] for line in long_functions(nested, "m.py")] == ["outer", "f"]
