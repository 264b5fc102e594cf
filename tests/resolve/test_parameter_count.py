"""No function in manifesto/ takes more than 8 parameters (issue 26): a longer list is a
context a caller should build once (a Struct) and pass down, not threads handed from function
to function. ``self`` and ``cls`` do not count; positional, keyword-only, ``*args`` and
``**kwargs`` do."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "manifesto"
LIMIT = 8

#: Functions allowed over the limit, each with the reason; each entry must still exist and still
#: be too long: delete it when it is not. None today.
PENDING: set[str] = set()


def _count(args: ast.arguments) -> int:
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if names[:1] in (["self"], ["cls"]):
        names = names[1:]
    return len(names) + (args.vararg is not None) + (args.kwarg is not None)


def long_functions(source: str, file: str) -> dict[str, int]:
    """``file::Class.function`` -> parameter count, of every function of ``source`` over the limit."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                if _count(child.args) > LIMIT:
                    found[f"{file}::{name}"] = _count(child.args)
                visit(child, name + ".")
            elif isinstance(child, ast.Lambda):
                if _count(child.args) > LIMIT:
                    found[f"{file}::{prefix}<lambda>:{child.lineno}"] = _count(child.args)
                visit(child, prefix)
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def _package() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found.update(long_functions(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).as_posix()))
    return found


def test_no_function_takes_more_than_eight_parameters():
    found = {name: n for name, n in _package().items() if name not in PENDING}
    assert not found, "functions over 8 parameters (pass a context Struct instead): " + ", ".join(
        f"{name} ({n})" for name, n in sorted(found.items()))


def test_pending_entries_are_still_needed():
    found = _package()
    stale = sorted(PENDING - set(found))
    assert not stale, f"no longer over the limit, or gone: remove from PENDING: {', '.join(stale)}"


@pytest.mark.parametrize(("source", "expected"), [
    ("def f(a, b, c, d, e, f, g, h): pass", {}),
    ("def f(a, b, c, d, e, f, g, h, i): pass", {"m.py::f": 9}),
    ("class C:\n    def m(self, a, b, c, d, e, f, g, h): pass", {}),
    ("class C:\n    def m(self, a, b, c, d, e, f, g, *, h, i): pass", {"m.py::C.m": 9}),
    ("def f(a, *args, b, c, d, e, f, g, **kw): pass", {"m.py::f": 9}),
    ("def outer():\n    def inner(a, b, c, d, e, f, g, h, i): pass", {"m.py::outer.inner": 9}),
    ("g = lambda a, b, c, d, e, f, g, h, i: 0", {"m.py::<lambda>:1": 9}),
], ids=["eight", "nine", "self-not-counted", "keyword-only-count", "star-args-count", "nested", "lambda"])
def test_the_count(source, expected):
    assert long_functions(source, "m.py") == expected
