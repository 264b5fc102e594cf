"""Issue 26: no import cycles anywhere in the package (imports inside functions count), and a
package top that shows the architecture.

The graph is built from the AST of every module, so an import inside a function counts as
much as one at the top; imports under ``if TYPE_CHECKING:`` do not (they never run).

Edges: ``import a.b.c`` depends on module ``a.b.c``; ``from a.b import x`` depends on ``a.b``
(its own code decides what ``x`` is) and, when ``x`` is a module, on ``a.b.x`` too. So a
package whose ``__init__`` imports its own modules is in a cycle as soon as one of them
writes ``from package import sibling`` (the four cycles the issue named were of that kind,
and ``schema.checks`` <-> ``quick`` was a real one).
"""

from __future__ import annotations

import ast
import os
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skip.update(id(n) for n in ast.walk(child))
    return skip


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package modules it imports (anywhere in its code), from the AST."""
    mods = _modules(root)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skip = _type_checking_nodes(tree)
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                deps.update(filter(None, (known(a.name) for a in node.names)))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                target = known(source)
                if target:
                    deps.add(target)
                deps.update(f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in mods)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected set of more than one module (Tarjan, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    group.append(top)
                    if top == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def _path(graph: dict[str, set[str]], group: list[str]) -> str:
    """One cycle through the first module of ``group``, spelled ``a -> b -> a``."""
    members, first = set(group), group[0]
    seen, queue = {first: None}, [first]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & members):
            if child == first:
                chain = [node]
                while seen[chain[-1]] is not None:
                    chain.append(seen[chain[-1]])
                return " -> ".join([*reversed(chain), first])
            if child not in seen:
                seen[child] = node
                queue.append(child)
    return " <-> ".join(group)


def test_the_package_has_no_import_cycle():
    graph = import_graph(REPO / "manifesto")
    found = cycles(graph)
    assert not found, "import cycles (function-level imports count):\n" + "\n".join(_path(graph, g) for g in found)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.mark.parametrize(("files", "expected"), [
    ({"__init__.py": "", "a.py": "def f():\n    from pkg import b\n", "b.py": "import pkg.a\n"},
     [["pkg.a", "pkg.b"]]),
    ({"__init__.py": "", "sub/__init__.py": "from pkg.sub.x import X\n", "sub/x.py": "from pkg.sub import y\n",
      "sub/y.py": ""},
     [["pkg.sub", "pkg.sub.x"]]),
    ({"__init__.py": "", "a.py": "from . import b\n", "b.py": "from .a import f\n"}, [["pkg.a", "pkg.b"]]),
], ids=["function-level", "package-init", "relative"])
def test_the_graph_sees_each_kind_of_cycle(tmp_path, files, expected):
    assert cycles(import_graph(_package(tmp_path, files))) == expected


def test_type_checking_imports_and_direct_module_imports_make_no_cycle(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
        "b.py": "import pkg.a\n",
        "sub/__init__.py": "from pkg.sub.x import X\n",
        "sub/x.py": "import pkg.sub.y as y\n",
        "sub/y.py": "",
    })
    assert cycles(import_graph(root)) == []


#: The package top: the public API of the spec (cluster, spec, workload, errors) and the entry
#: points. Everything else lives in a package that says what it is.
#: the public API (cluster, spec, workload, errors, capacity planning) and the entry points
TOP = {"__init__", "__main__", "capacity", "cluster", "errors", "spec", "workload"}


def test_at_most_eight_modules_at_the_package_top():
    top = {p[:-3] for p in os.listdir(REPO / "manifesto") if p.endswith(".py")}
    assert top == TOP, f"modules at the package top: {sorted(top)}"
    assert len(top) <= 8


def test_argparse_lives_in_the_cli_only():
    """Flags are made in ``manifesto.cli`` (``cli.flags`` for the shared ones): no other module
    imports argparse or adds arguments, groups or subcommands to a parser."""
    import ast

    calls = {"add_argument", "add_argument_group", "add_mutually_exclusive_group", "add_subparsers", "add_parser"}
    offenders = []
    package = REPO / "manifesto"
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(n == "argparse" or n.startswith("argparse.") for n in names):
                offenders.append(f"{path.relative_to(package)}:{node.lineno} imports argparse")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in calls:
                offenders.append(f"{path.relative_to(package)}:{node.lineno} calls {node.func.attr}")
    assert offenders == []
