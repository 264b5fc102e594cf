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
    assert "Contracts: 5 kept, 0 broken." in proc.stdout


# (module that gains the import, the import, the contract that must break)
BITES = [
    ("manifesto/resolve/core.py", "import manifesto.render.k8s", "Layers import downwards only"),
    ("manifesto/catalog.py", "import manifesto.build_graph.api", "Layers import downwards only"),
    ("manifesto/render/launch.py", "import subprocess",
     "resolve and render are pure: no loading, YAML parsing, catalogs or processes"),
    ("manifesto/resolve/layout.py", "import manifesto.load",
     "resolve and render are pure: no loading, YAML parsing, catalogs or processes"),
    ("manifesto/render/k8s/model.py", "import manifesto.schema.model",
     "renderers consume the Plan, never the input schemas"),
    ("manifesto/render/slurm/script.py", "import manifesto.render.k8s.model",
     "the Kubernetes and Slurm renderers share code only through neutral modules"),
    ("manifesto/service.py", "import shelve", "one store: no module keeps a cache of its own"),
    ("manifesto/build_graph/report.py", "import marshal", "one store: no module keeps a cache of its own"),
    ("manifesto/cli/commands.py", "import manifesto.store.entries", "one store: no module keeps a cache of its own"),
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
