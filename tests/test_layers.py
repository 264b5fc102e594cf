"""The architecture contracts in pyproject.toml ([tool.importlinter]) hold, and they bite:
adding a forbidden import to a copy of the package breaks the named contract."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)


def test_contracts_hold():
    proc = lint(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    declared = (REPO / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert declared >= 6 and f"Contracts: {declared} kept, 0 broken." in proc.stdout


def test_every_task_module_has_a_layer():
    """The tasks' layer names its modules one by one (entries and inputs sit lower), so a new
    module in manifesto/tasks/ must be given its place, or no layer rule would cover it."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    [layers] = [c["layers"] for c in config if c["id"] == "layers"]
    named = {m.strip() for layer in layers for m in layer.replace(":", "|").split("|")}
    modules = {f"manifesto.tasks.{p.stem}" for p in (REPO / "manifesto" / "tasks").glob("*.py") if p.stem != "__init__"}
    assert modules - named == set()


CLI_ACYCLIC = "CLI modules import downwards only (no cycle)"

# (module that gains the import, the import, the contract that must break)
BITES = [
    ("manifesto/resolve/core.py", "import manifesto.render.k8s", "Layers import downwards only"),
    ("manifesto/load/catalog.py", "import manifesto.build_graph.api", "Layers import downwards only"),
    ("manifesto/render/launch.py", "import subprocess",
     "resolve and render are pure: no loading, YAML parsing, catalogs or processes"),
    ("manifesto/resolve/layout.py", "import manifesto.load",
     "resolve and render are pure: no loading, YAML parsing, catalogs or processes"),
    ("manifesto/render/k8s/model.py", "import manifesto.schema.model",
     "renderers consume the Plan, never the input schemas"),
    ("manifesto/render/slurm/script.py", "import manifesto.render.k8s.model",
     "the Kubernetes and Slurm renderers share code only through neutral modules"),
    ("manifesto/tasks/inputs/plan.py", "import shelve", "one store: no module keeps a cache of its own"),
    ("manifesto/build_graph/report.py", "import marshal", "one store: no module keeps a cache of its own"),
    ("manifesto/cli/commands.py", "import manifesto.tasks.entries", "one store: no module keeps a cache of its own"),
    ("manifesto/util/rules.py", "import manifesto.resolve.plan", "Layers import downwards only"),
    ("manifesto/tasks/entries.py", "import manifesto.tasks.memo", "Layers import downwards only"),
    ("manifesto/build_graph/api.py", "import manifesto.review.semdiff", "Layers import downwards only"),
    ("manifesto/cli/common.py", "import manifesto.cli.target_cmds", CLI_ACYCLIC),
    ("manifesto/cli/settings.py", "import manifesto.cli.parser", CLI_ACYCLIC),
    ("manifesto/cli/ops_cmds.py", "import manifesto.cli.complete", CLI_ACYCLIC),
]


@pytest.fixture(scope="module")
def copy_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(REPO / "manifesto", root / "manifesto", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize(("module", "statement", "contract"), BITES, ids=[b[0].split("/", 1)[1] for b in BITES])
def test_a_forbidden_import_breaks_its_contract(copy_root, module, statement, contract):
    path = copy_root / module
    original = path.read_text()
    path.write_text(original + f"\n{statement}  # added by test_layers\n")
    try:
        proc = lint(copy_root)
    finally:
        path.write_text(original)
    assert proc.returncode != 0
    broken = proc.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, proc.stdout
    assert f"{module[:-3].replace('/', '.')} ->" in broken or module[:-3].replace("/", ".") in broken


def _cycles(package: str) -> list[list[str]]:
    """Every import cycle among the modules of ``package`` (one per strongly connected set)."""
    import grimp

    graph = grimp.build_graph("manifesto")
    mods = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    edges = {m: sorted(d for d in graph.find_modules_directly_imported_by(m) if d in mods and d != m) for m in mods}
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(m: str) -> None:  # Tarjan's strongly connected components
        index[m] = low[m] = len(index)
        stack.append(m)
        on.add(m)
        for d in edges[m]:
            if d not in index:
                visit(d)
                low[m] = min(low[m], low[d])
            elif d in on:
                low[m] = min(low[m], index[d])
        if low[m] == index[m]:
            group = []
            while True:
                top = stack.pop()
                on.discard(top)
                group.append(top)
                if top == m:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for m in mods:
        if m not in index:
            visit(m)
    return out


def test_the_cli_modules_form_no_import_cycle():
    """Issue 15: all 13 cli modules used to form one cycle (function-level imports count)."""
    assert _cycles("manifesto.cli") == []


@pytest.mark.parametrize("module", ["manifesto/load/catalog.py", "manifesto/load/yamlio.py",
                                    "manifesto/resolve/options.py",
                                    "manifesto/tasks/pair.py", "manifesto/cli/settings.py",
                                    "manifesto/build_graph/executor.py"])
def test_no_process_wide_state_in_lookups_and_readers(module):
    """Issue 15: the catalog search path and the yamlio confinement roots were process globals
    set by one caller and read by another; they are now values passed to each call (the
    executor's settings and render function too: each batch carries its settings)."""
    import ast

    tree = ast.parse((REPO / module).read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Global)], f"{module} rebinds a module global"
    for node in tree.body:  # no module-level set or list that calls could fill
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            assert getattr(node.value.func, "id", "") not in ("set", "list"), ast.unparse(node)
        names = [t.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if isinstance(t, ast.Name)]
        if names != ["__all__"] and isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, (ast.Set, ast.List)):
            raise AssertionError(f"{module}: module-level mutable {ast.unparse(node)}")


@pytest.mark.parametrize(("statement", "contract"), [
    ("import manifesto.resolve.plan", "store is generic: it imports no resolve, render, schema or task"),
    ("import manifesto.render.products", "store is generic: it imports no resolve, render, schema or task"),
    ("import manifesto.schema.checks", "store is generic: it imports no resolve, render, schema or task"),
    ("from manifesto.tasks import entries", "store is generic: it imports no resolve, render, schema or task"),
], ids=["resolve", "render", "schema", "entries"])
def test_the_store_package_stays_generic(copy_root, statement, contract):
    """Issue 26: ``manifesto.store`` keeps entries of kinds it does not know (their owners
    register codecs), so its package imports no policy, not even inside a function."""
    path = copy_root / "manifesto/store/__init__.py"
    original = path.read_text()
    path.write_text(original + f"\n\ndef _added_by_test_layers():\n    {statement}\n")
    try:
        proc = lint(copy_root)
    finally:
        path.write_text(original)
    assert proc.returncode != 0
    broken = proc.stdout.split("Broken contracts", 1)[-1]
    assert contract in " ".join(broken.split()), proc.stdout
