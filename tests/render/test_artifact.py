"""One Artifact product: a Plan becomes Kubernetes objects in one place (``render.artifact``),
and every route to objects or text (render manifest/file/routing, ``render()``,
``render_kubernetes``, deploy, deploy routing, test e2e, GitOps) gets them from it, with the
artifact-digest annotation its text shows."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from manifesto.cli import main

from kit import cli_in_process
from kubefake import FAKE, FakeCluster, install

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "manifesto"
GB200 = str(ROOT / "clusters/example-gb200.yaml")
QWEN = str(ROOT / "models/qwen/qwen3-0.6b.yaml")
AGG = str(ROOT / "models/qwen/aggregated.yaml")
KEY = "manifesto.llm-d.ai/artifact-digest"
COMMON = ("--cluster", GB200, "--user", "u", "--namespace", "ns")

#: The functions that turn a Plan into the instance's objects (or its routing layer's).
BUILDERS = {"objects", "routing_only"}
#: The parts they are made of: called from inside ``render/k8s`` only.
PARTS = {"model_objects": "model", "routing_objects": "routing", "idle_objects": "idle"}


def _part_calls(path: Path) -> list[tuple[str, int]]:
    """(function, line) of every use in ``path`` of a part builder of ``manifesto.render.k8s``
    (imported from its module or from the package, by name or as an attribute)."""
    tree = ast.parse(path.read_text(), str(path))
    names, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("manifesto.render.k8s"):
            names |= {a.asname or a.name for a in node.names if a.name in PARTS}
            modules |= {a.asname or a.name for a in node.names if a.name in PARTS.values()}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name.startswith("manifesto.render.k8s")}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            found.append((node.id, node.lineno))
        elif isinstance(node, ast.Attribute) and node.attr in PARTS:
            base = ast.unparse(node.value)
            if base in modules or base.startswith("manifesto.render.k8s"):
                found.append((node.attr, node.lineno))
    return found


def test_the_parts_of_an_instance_are_built_inside_the_renderer_only():
    """No command builds a part of the instance (its model workloads, say) beside the artifact:
    ``ready`` once rendered the DisaggregatedSet itself instead of reading the applied one."""
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if (PACKAGE / "render" / "k8s") not in p.parents]
    found = {(str(p.relative_to(ROOT)), name, line) for p in outside for name, line in _part_calls(p)}
    assert found == set()


def test_the_parts_scan_sees_each_spelling(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from manifesto.render.k8s.model import model_objects as m\n"
                    "from manifesto.render.k8s import idle\nimport manifesto.render.k8s.routing as r\n"
                    "m(p); idle.idle_objects(p); r.routing_objects(p); manifesto.render.k8s.model.model_objects(p)\n")
    assert sorted(_part_calls(path)) == [("idle_objects", 4), ("m", 4), ("model_objects", 4),
                                         ("routing_objects", 4)]


def _builder_calls(path: Path) -> list[tuple[str, int]]:
    """(function, line) of every call in ``path`` of a builder imported from ``manifesto.render.k8s``
    (by name, or as an attribute of that module imported under any name)."""
    tree = ast.parse(path.read_text(), str(path))
    names, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "manifesto.render.k8s":
            names |= {a.asname or a.name for a in node.names if a.name in BUILDERS}
        elif isinstance(node, ast.ImportFrom) and node.module == "manifesto.render":
            modules |= {a.asname or a.name for a in node.names if a.name == "k8s"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == "manifesto.render.k8s" and a.asname}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in names:
            found.append((f.id, node.lineno))
        elif isinstance(f, ast.Attribute) and f.attr in BUILDERS and (
                (isinstance(f.value, ast.Name) and f.value.id in modules)
                or ast.unparse(f.value) == "manifesto.render.k8s"):
            found.append((f.attr, node.lineno))
    return found


def test_one_call_site_builds_kubernetes_objects_from_a_plan():
    calls = {(str(p.relative_to(ROOT)), name): line for p in sorted(PACKAGE.rglob("*.py"))
             for name, line in _builder_calls(p)}
    # one expression, `routing_only(plan) if routing else objects(plan)`, in render._checked_objects,
    # which only render.artifact calls
    assert sorted(calls) == [("manifesto/render/__init__.py", "objects"),
                             ("manifesto/render/__init__.py", "routing_only")]
    assert len(set(calls.values())) == 1
    source = (PACKAGE / "render/__init__.py").read_text()
    tree = ast.parse(source)
    callers = {fn.name for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
               for node in ast.walk(fn) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Name) and node.func.id == "_checked_objects"}
    assert callers == {"artifact"}
    uses = [p for p in PACKAGE.rglob("*.py") if "_checked_objects" in p.read_text()]
    assert uses == [PACKAGE / "render/__init__.py"]


def test_the_one_call_site_is_found_by_the_scan(tmp_path):
    """The scan sees each way of calling a builder (so the test above can fail)."""
    path = tmp_path / "m.py"
    path.write_text("from manifesto.render.k8s import objects as o, routing_only\n"
                    "from manifesto.render import k8s\nimport manifesto.render.k8s\n"
                    "o(p); routing_only(p); k8s.objects(p); manifesto.render.k8s.routing_only(p)\n")
    assert sorted(_builder_calls(path)) == [("o", 4), ("objects", 4), ("routing_only", 4), ("routing_only", 4)]


def _digests(objs) -> list[str | None]:
    return [((o.get("metadata") or {}).get("annotations") or {}).get(KEY) for o in objs]


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


@pytest.fixture(scope="module")
def rendered() -> list[dict]:
    """The objects of `render manifest` for qwen3-0.6b on example-gb200."""
    result = cli_in_process("render", "manifest", QWEN, *COMMON)
    assert result.returncode == 0, result.stderr
    return _docs(result.stdout)


def _one_digest(objs) -> str:
    found = _digests(objs)
    assert objs and None not in found, found
    (value,) = set(found)
    assert value.startswith("sha256:")
    return value


def test_render_and_the_public_api_carry_the_digest(rendered):
    from manifesto.cluster import load_cluster
    from manifesto.render import render, render_kubernetes
    from manifesto.spec import load_spec

    assert len(rendered) == 7
    digest = _one_digest(rendered)
    cluster = load_cluster(GB200)
    spec = load_spec(QWEN, cluster)
    objs = render_kubernetes(spec, user="u", namespace="ns")
    assert objs == rendered and _one_digest(objs) == digest
    assert _docs(render(spec, user="u", namespace="ns")) == rendered


def test_render_file_carries_the_digest(rendered, tmp_path):
    target = tmp_path / "out.yaml"
    result = cli_in_process("render", "file", QWEN, *COMMON, "-o", str(target))
    assert result.returncode == 0, result.stderr
    assert _docs(target.read_text()) == rendered


def test_render_routing_is_the_routing_layer_of_the_artifact():
    full = cli_in_process("render", "manifest", AGG, *COMMON)
    routing = cli_in_process("render", "routing", AGG, *COMMON)
    assert full.returncode == routing.returncode == 0, (full.stderr, routing.stderr)
    layer = _docs(routing.stdout)
    names = {(o["kind"], o["metadata"]["name"]) for o in _docs(full.stdout)}
    assert layer and {(o["kind"], o["metadata"]["name"]) for o in layer} <= names
    _one_digest(layer)  # the layer's own digest: it is an artifact of its own


def test_the_artifact_task_hands_out_annotated_objects_and_their_text():
    from manifesto.resolve.options import Options
    from manifesto.store import Store
    from manifesto.tasks.core import PairRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run

    options = Options(user="u", namespace="ns")
    made = run(Task.ARTIFACT, PairRequest(QWEN, GB200, options), Tasks(Store(None), "")).ok()
    text = run(Task.RENDER, PairRequest(QWEN, GB200, options), Tasks(Store(None), "")).ok()
    art = made.artifact
    assert (art.text, art.suffix) == (text.text, text.suffix) == (made.text, made.suffix)
    assert _docs(art.text) == art.objects and _one_digest(art.objects) == art.digest
    assert art.inputs == made.inputs and str(Path(QWEN).resolve()) in art.inputs
    assert art.objects is not art.objects  # fresh copies: a consumer that edits them (e2e) edits its own


@pytest.fixture
def fake(tmp_path, monkeypatch, capsys) -> FakeCluster:
    return FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)


@pytest.mark.integration
def test_deploy_applies_the_artifact_with_its_digest(fake, rendered):
    rc, _, err = fake.run("deploy", QWEN, *COMMON)
    assert rc == 0, err
    applied = fake.applied()
    assert len(applied) == 7 and _digests(applied) == _digests(rendered)
    assert applied == rendered
    names = {(o["kind"], o["metadata"]["name"]) for o in rendered}
    live = [o for o in fake.state["objects"] if (o["kind"], o["metadata"]["name"]) in names]
    assert len(live) == 7 and set(_digests(live)) == {_one_digest(rendered)}  # 7 of 7 carry it


@pytest.mark.integration
def test_deploy_routing_applies_the_routing_artifact(fake):
    rc, _, err = fake.run("deploy", "routing", AGG, *COMMON)
    assert rc == 0, err
    routing = cli_in_process("render", "routing", AGG, *COMMON)
    assert fake.applied() == _docs(routing.stdout)
    _one_digest(fake.applied())


@pytest.mark.integration
def test_test_e2e_applies_the_artifact_with_its_digest(fake, rendered):
    rc, _, err = fake.run("test", "e2e", QWEN, "--cluster", GB200, "--user", "u", "--interval", "0",
                          "--namespace", "e2e-ns")
    assert rc == 0, err
    instance = [o for o in fake.applied() if o["kind"] != "Namespace"]
    assert len(instance) == 7 and None not in _digests(instance)


def test_gitops_gets_each_deployment_from_its_artifact(monkeypatch, rendered):
    import manifesto.render.gitops as gitops
    from manifesto.resolve.options import Options
    from manifesto.store import Store
    from manifesto.tasks.core import GitopsDeployment, GitopsRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run

    seen = []
    monkeypatch.setattr(gitops, "render_gitops", lambda name, settings, deployments, checks, monitoring=():
                        seen.extend(deployments) or "kind: x\n")
    from manifesto.render.gitops import GitopsSettings

    settings = GitopsSettings("https://example.com/r.git", "main", ".", "argocd", "default", None, True)
    request = GitopsRequest("argocd", settings, False, str(ROOT / "BUILD.yaml"),
                            (GitopsDeployment("qwen", QWEN, GB200, Options(user="u", namespace="ns")),))
    run(Task.GITOPS, request, Tasks(Store(None), "")).ok()
    ((dep, objs),) = seen
    assert dep["name"] == "qwen" and objs == rendered


def test_the_architecture_page_walks_render_manifest_in_at_most_eight_real_steps():
    """Each step of docs/architecture.md's walk names a file and a function in it that exist."""
    import re

    text = (ROOT / "docs/architecture.md").read_text()
    walk = text.split("## One request, from `render manifest` to the YAML text", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^\d+\. \*\*`([^`]+)`, `([^`]+)`\*\*", walk, re.M)
    assert 1 <= len(steps) <= 8 and len(steps) == len(re.findall(r"^\d+\. ", walk, re.M))
    for rel, function in steps:
        tree = ast.parse((PACKAGE / rel).read_text())
        cls, _, name = function.rpartition(".")
        scope = tree if not cls else next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
        assert any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.walk(scope)), (rel, function)


def test_the_artifact_carries_its_resolutions_warnings_as_data(capsys):
    """The checks a resolution could not make are on the Artifact (``warnings``), not only on
    stderr: a caller, or a test, reads them without catching a stream or a context variable."""
    from manifesto.errors import Run
    from manifesto.resolve.options import Options
    from manifesto.store import Store
    from manifesto.tasks.core import PairRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run

    def made(**options):
        request = PairRequest(QWEN, GB200, Options(user="u", namespace="ns", **options))
        with Run(quiet=True, silent=True).active():
            return run(Task.ARTIFACT, request, Tasks(Store(None), "")).ok().artifact

    assert made().warnings == ()
    (line,) = made(vllm_env="/mnt/shared/vllm").warnings
    assert "runtime.vllm_env runs vLLM from the worktree /mnt/shared/vllm" in line
    assert capsys.readouterr().err == ""  # kept by the silent run, not written
