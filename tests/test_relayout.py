"""tools/relayout.py rewrites references to moved modules, and a second run changes nothing.

The lead re-runs it after merging branches written against the old layout, so each case
below is a line such a branch could bring.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import kit

REPO = kit.REPO_ROOT


@pytest.fixture(scope="module")
def relayout():
    spec = importlib.util.spec_from_file_location("relayout", REPO / "tools" / "relayout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(REPO)  # the script looks at the package on disk, relative to the root


PYTHON = [
    ("from manifesto import catalog, errors\n",
     "from manifesto.load import catalog\nfrom manifesto import errors\n"),
    ("from manifesto.load import load_model, display_name as shown\n",
     "from manifesto.load.inputs import load_model, display_name as shown\n"),
    ("from manifesto.load import catalog, yamlio\n", "from manifesto.load import catalog, yamlio\n"),
    ("from manifesto import load\n", "from manifesto.load import inputs as load\n"),
    ("from manifesto import legacy as spellings\n", "from manifesto.load import spellings\n"),
    ("import manifesto.load\n", "import manifesto.load\n"),
    ("import manifesto.catalog as cat\n", "import manifesto.load.catalog as cat\n"),
    ("def f():\n    from manifesto import cluster, legacy  # noqa: F401\n",
     "def f():\n    from manifesto import cluster  # noqa: F401\n"
     "    from manifesto.load import spellings as legacy  # noqa: F401\n"),
    ("from manifesto.build_graph import semdiff, api\n",
     "from manifesto.review import semdiff\nfrom manifesto.build_graph import api\n"),
    ("from manifesto.schema.checks import validate as check, FieldError\n",
     "from manifesto.schema.validation import validate as check\nfrom manifesto.schema.checks import FieldError\n"),
    ("from manifesto.build_graph.api import semantic_diff\n", "from manifesto.review.base import semantic_diff\n"),
    ('mock.patch("manifesto.catalog.find")\n', 'mock.patch("manifesto.load.catalog.find")\n'),
    ('mock.patch("manifesto.load.load_yaml")\n', 'mock.patch("manifesto.load.inputs.load_yaml")\n'),
    ('lines = [\n    "from manifesto import rules",\n    "x"]\n',
     'lines = [\n    "from manifesto.util import rules",\n    "x"]\n'),
    ('RULES = "manifesto.rules.yml"\n', 'RULES = "manifesto.rules.yml"\n'),
    ('PATH = "manifesto/load.py", "manifesto/build_graph/cli.py", "manifesto/load/catalog.py"\n',
     'PATH = "manifesto/load/inputs.py", "manifesto/cli/build_cmds.py", "manifesto/load/catalog.py"\n'),
    ("x = manifesto.render.k8s.objects\n", "x = manifesto.render.k8s.objects\n"),
    # issue 37: a module that became a package of its parts, and modules moved to their owners
    ("from manifesto.tasks.inputs import load_images, resolution, _hf_cache_config as hf\n",
     "from manifesto.tasks.inputs.images import load_images\nfrom manifesto.tasks.inputs.plan import resolution\n"
     "from manifesto.tasks.inputs.hf_cache import hf_cache_config as hf\n"),
    ("from manifesto.tasks.inputs.plan import resolution\n", "from manifesto.tasks.inputs.plan import resolution\n"),
    ("import manifesto.tasks.inputs\n", "import manifesto.tasks.inputs\n"),
    ("from manifesto.util.fsutil import write_atomic\nfrom manifesto.util import status\n",
     "from manifesto.edge.fs import write_atomic\nfrom manifesto.tasks import status\n"),
    ('mock.patch("manifesto.build_graph.fsio.signature")\n', 'mock.patch("manifesto.edge.signatures.signature")\n'),
]


@pytest.mark.parametrize(("before", "after"), PYTHON, ids=[str(i) for i in range(len(PYTHON))])
def test_python_references_move_once(relayout, before, after):
    assert relayout.rewrite_python(before) == after
    assert relayout.rewrite_python(after) == after


TEXT = [
    ("See `manifesto.yamlio.load_yaml` and manifesto/fsutil.py.\n",
     "See `manifesto.load.yamlio.load_yaml` and manifesto/edge/fs.py.\n"),
    ('manifesto-fake-kubectl = "manifesto.fake_kubectl:main"\n',
     'manifesto-fake-kubectl = "manifesto.testing.fake_kubectl:main"\n'),
    ("    from manifesto import options\n", "    from manifesto.resolve import options\n"),
    ('layers = ["manifesto.load | manifesto.catalog"]\n', 'layers = ["manifesto.load | manifesto.load.catalog"]\n'),
    ("tests.fake_kubectl and my.manifesto.catalog stay\n", "tests.fake_kubectl and my.manifesto.catalog stay\n"),
]


@pytest.mark.parametrize(("before", "after"), TEXT, ids=[str(i) for i in range(len(TEXT))])
def test_text_references_move_once(relayout, before, after):
    assert relayout.rewrite_text(before) == after
    assert relayout.rewrite_text(after) == after


def test_a_module_imports_its_siblings_directly_when_the_package_init_imports_its_own(relayout):
    engine = "from manifesto.build_graph import outdir, api as a\nfrom manifesto.build_graph import build\n"
    assert relayout.direct_submodules(engine, "manifesto.build_graph.engine") == (
        "import manifesto.build_graph.outdir as outdir\nimport manifesto.build_graph.api as a\n"
        "from manifesto.build_graph import build\n")
    # schema's __init__ imports nothing of its own: no cycle to break, nothing to change
    model = "from manifesto.schema import checks\n"
    assert relayout.direct_submodules(model, "manifesto.schema.model") == model
    # outside the package the from form is no cycle
    cli = "from manifesto.build_graph import api\n"
    assert relayout.direct_submodules(cli, "manifesto.cli.complete") == cli


@pytest.mark.integration
def test_the_tree_is_already_relaid():
    """Nothing at an old path, no reference left to rewrite: ``--check`` is clean."""
    proc = subprocess.run([sys.executable, "tools/relayout.py", "--check"], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
