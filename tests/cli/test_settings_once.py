"""Settings are resolved once, at the entry points: the CLI (``manifesto/cli/``) and the library
API's entry points read the process environment and hand a typed value down; no module below
reads ``os.environ`` or ``os.getenv``. The few other readers are listed with their reason.
Store codecs are registered by an explicit call, not as a side effect of an import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "manifesto"

#: Entry points: they resolve the settings and pass them down.
ENTRY_POINTS = {
    "manifesto/build_graph/api.py": "the build's library API: the renderer and MANIFESTO_STORE_LIMIT",
}
#: Readers that are not settings of a render or build, each with its reason.
LISTED = {
    "manifesto/edge/trust.py": "key_path(environ): the cache key's folder; callers may pass their settings, "
                               "the default is the process's own (the key belongs to the user, not to a run)",
    "manifesto/edge/git.py": "the environment a git child process runs with (PATH, HOME, XDG_CONFIG_HOME kept)",
    "manifesto/ops/kubectl.py": "the environment a kubectl child process inherits, and the PATH it is found on",
    "manifesto/render/k8s/idle_controller.py": "the idle-shutdown controller's own program, configured by its "
                                                "Deployment's env in its pod",
    "manifesto/testing/fake_kubectl.py": "the stand-in kubectl: a program of its own, run as a child process",
    "manifesto/load/catalog.py": "config_dir(environ): the user catalog's folder when a library call "
                                 "(load_spec, load_cluster) names no search path; not yet handed down",
}


def _readers(path: Path) -> list[int]:
    """Lines of ``path`` that read the process environment through ``os``."""
    tree = ast.parse(path.read_text(), str(path))
    modules = {"os"} | {a.asname for n in ast.walk(tree) if isinstance(n, ast.Import)
                        for a in n.names if a.name == "os" and a.asname}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                a.name in ("environ", "getenv", "environb", "getenvb") for a in node.names):
            found.append(node.lineno)
        elif (isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb", "getenvb")
              and isinstance(node.value, ast.Name) and node.value.id in modules):
            found.append(node.lineno)
    return found


def test_no_module_below_the_entry_points_reads_the_environment():
    readers = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        lines = _readers(path)
        if lines and not rel.startswith("manifesto/cli/"):
            readers[rel] = lines
    unexplained = {rel: lines for rel, lines in readers.items() if rel not in ENTRY_POINTS and rel not in LISTED}
    assert not unexplained, f"read the settings at the entry point and pass them down: {unexplained}"
    stale = sorted(set(LISTED) - set(readers))
    assert not stale, f"listed but no longer reading the environment (take them off the list): {stale}"


def test_the_scan_sees_each_way_of_reading_it(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import os\nimport os as o\nfrom os import getenv\n"
                    "a = os.environ['X']\nb = o.getenv('Y')\nc = os.path.join('a')\n")
    assert sorted(_readers(path)) == [3, 4, 5]


def test_the_engine_the_renderer_and_the_commands_store_take_their_settings():
    """What used to be read deep inside is a parameter now."""
    import inspect

    from manifesto.build_graph.engine import BuildRequest
    from manifesto.build_graph.store_bound import StoreBound
    from manifesto.build_graph.renderer import renderer_name
    from manifesto.tasks.commands import bound, cached

    assert renderer_name({"MANIFESTO_BUILD_RENDERER": "x"}) == "x"
    assert "store_limit" in inspect.signature(BuildRequest).parameters
    assert "setting" in inspect.signature(StoreBound.limit).parameters
    assert "setting" in inspect.signature(bound).parameters and "store_limit" in inspect.signature(cached).parameters


@pytest.mark.integration  # a fresh interpreter: nothing imported yet
def test_importing_the_entries_registers_nothing_and_install_registers_them():
    import subprocess
    import sys

    code = ("import manifesto.store as s, manifesto.tasks.entries as e\n"
            "before = sorted(s._BY_KIND)\ne.install()\ne.install()\n"
            "print(before, sorted(s._BY_KIND))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[0] == "[] ['code', 'parsed', 'rendered', 'request', 'resolved', 'result']"


def test_no_module_registers_anything_when_it_is_imported():
    """A call at a module's top level (or in a loop or condition there) to a ``register``
    function is registration as an import side effect."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        top = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        for stmt in top:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Lambda):
                    continue
                if isinstance(node, ast.Call):
                    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                    if name.startswith("register"):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found
