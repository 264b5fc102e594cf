"""Issue 26: the public API, ``render monitoring``, ``plan`` and the commands that load a pair
themselves run the pair's task through ``manifesto.tasks.runner.run`` (a PairRequest or
MonitoringRequest that refers to what they loaded), and nothing else in the package resolves a
pair on its own. Issue 37: one request type per product, its inputs referred to by path or as
loaded."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kit import cli_in_process

pytest.importorskip("msgspec")

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "models" / "qwen" / "qwen3-0.6b.yaml"
GB200 = REPO / "clusters" / "example-gb200.yaml"
H200_SPEC = REPO / "models" / "qwen" / "h200-aggregated.yaml"


@pytest.fixture
def runs(monkeypatch) -> list:
    """Every ``run`` call from here on, as (task value, request class name, how its cluster is
    referred to: "path" or "loaded")."""
    import manifesto.tasks.runner as runner

    seen, real = [], runner.run

    def recording(task, request, store):
        seen.append((task.value, type(request).__name__, "path" if isinstance(request.cluster, str) else "loaded"))
        return real(task, request, store)

    monkeypatch.setattr(runner, "run", recording)
    return seen


def test_the_public_api_runs_the_pairs_tasks_on_what_it_loaded(runs):
    from manifesto.cluster import load_cluster
    from manifesto.render import render, render_kubernetes
    from manifesto.spec import load_spec
    from manifesto.store import Store
    from manifesto.tasks.core import PairRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run
    from manifesto.resolve.options import Options

    cluster = load_cluster(str(GB200))
    spec = load_spec(str(SPEC), cluster)
    text = render(spec, user="u", namespace="n")
    objects = render_kubernetes(spec, user="u", namespace="n")
    plan, files = spec.resolve(cluster, Options(user="u", namespace="n"))
    assert runs == [("render", "PairRequest", "loaded"), ("artifact", "PairRequest", "loaded"),
                    ("resolve", "PairRequest", "loaded")]
    # the same text, Plan and inputs as the task on the files (as `render manifest` runs it)
    by_path = run(Task.RENDER, PairRequest(str(SPEC), str(GB200), Options(user="u", namespace="n")),
                  Tasks(Store(None), ""))
    assert text == by_path.text and plan == by_path.plan and tuple(files) == by_path.inputs
    from manifesto.render.k8s import objects as objects_of, with_digest

    assert objects == with_digest(objects_of(by_path.plan))


def test_a_loaded_spec_is_used_as_loaded_not_read_again(tmp_path):
    """The request carries the objects: an edit to the file after loading does not reach them."""
    from manifesto.cluster import load_cluster
    from manifesto.render import render
    from manifesto.spec import load_spec

    path = tmp_path / "m.yaml"
    path.write_text(SPEC.read_text())
    cluster = load_cluster(str(GB200))
    spec = load_spec(str(path), cluster)
    before = render(spec, user="u")
    path.write_text("not: [a spec\n")  # would not even parse
    assert render(spec, user="u") == before


def test_the_api_raises_the_tasks_error_as_it_always_did():
    from manifesto.cluster import load_cluster
    from manifesto.errors import IncompatiblePairError
    from manifesto.render import render
    from manifesto.spec import load_spec

    cluster = load_cluster(str(GB200))
    with pytest.raises(IncompatiblePairError, match="'h200' is not offered by cluster 'example-gb200'"):
        render(load_spec(str(H200_SPEC), cluster), user="u")


def test_plan_resolves_each_layout_through_the_resolve_task(runs):
    from manifesto.capacity import resolve_layout
    from manifesto.cluster import load_cluster
    from manifesto.load.yamlio import load_yaml
    from manifesto.resolve.options import Options

    cluster = load_cluster(str(GB200))
    data, _ = load_yaml(str(SPEC), str(SPEC))
    plan = resolve_layout(data, "planned.yaml", cluster, Options(user="plan"))
    assert runs == [("resolve", "PairRequest", "loaded")] and plan.cluster == "example-gb200"


def test_render_monitoring_runs_the_monitoring_task_and_names_a_spec_the_cluster_cannot_run(runs):
    common = ("--cluster", str(GB200), "--user", "u", "--namespace", "demo")
    rc, out, err = cli_in_process("render", "monitoring", str(SPEC), *common)
    assert (rc, err) == (0, "") and "kind: PodMonitor" in out
    assert runs == [("monitoring", "MonitoringRequest", "loaded")]
    rc, out, err = cli_in_process("render", "monitoring", str(SPEC), str(H200_SPEC), *common)
    assert (rc, out) == (1, "") and "'h200' is not offered by cluster 'example-gb200'" in err


def test_explain_json_resolves_through_the_resolve_task(runs):
    rc, out, err = cli_in_process("explain", str(SPEC), "--cluster", str(GB200), "--user", "u", "--namespace", "n",
                                  "-o", "json")
    assert rc == 0, err
    assert runs == [("resolve", "PairRequest", "loaded")] and '"cluster": "example-gb200"' in out


def test_only_the_pair_task_resolves():
    """No module of the package calls the resolution on loaded inputs but the pair's tasks:
    every other route goes through ``run`` (a bypass would be a second way to a Plan)."""
    users = []
    for path in sorted((REPO / "manifesto").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("manifesto.tasks.inputs.plan", "manifesto.resolve.core"):
                names = {a.name for a in node.names} & {"resolution", "resolve", "plan_for"}
                if names:
                    users.append((path.relative_to(REPO).as_posix(), node.module, *sorted(names)))
    assert users == [("manifesto/tasks/inputs/plan.py", "manifesto.resolve.core", "resolve"),
                     ("manifesto/tasks/pair.py", "manifesto.tasks.inputs.plan", "resolution")]


def test_one_request_type_per_product_and_no_branch_on_how_an_input_came():
    """Issue 37: a request refers to each input by path or as loaded; there is no twin
    "loaded" request type, and the pair's tasks never ask which kind of request they got
    (the one place that tells a path from a loaded input is how each input is loaded)."""
    import manifesto.tasks.core as core

    requests = sorted(n for n, v in vars(core).items() if isinstance(v, type) and n.endswith("Request"))
    assert requests == ["FileRequest", "GitopsRequest", "MonitoringRequest", "PairRequest", "ParseRequest"]
    tree = ast.parse((REPO / "manifesto" / "tasks" / "pair.py").read_text(encoding="utf-8"))
    checks = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "isinstance"]
    assert not [c for c in checks if c.startswith("isinstance(request")], checks
    assert checks.count("isinstance(ref, str)") == 3, checks  # _named, _spec and _cluster


def test_a_request_by_path_and_one_of_the_same_inputs_loaded_come_to_the_same_outcome():
    from manifesto.cluster import load_cluster
    from manifesto.spec import load_spec
    from manifesto.store import Store
    from manifesto.tasks.core import MonitoringRequest, PairRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run
    from manifesto.resolve.options import Options

    options = Options(user="u", namespace="n")
    cluster = load_cluster(str(GB200))
    spec = load_spec(str(SPEC), cluster)
    for task in (Task.RESOLVE, Task.RENDER, Task.EXPLAIN):
        by_path = run(task, PairRequest(str(SPEC), str(GB200), options), Tasks(Store(None), "")).ok()
        mixed = run(task, PairRequest(str(SPEC), cluster, options), Tasks(Store(None), "")).ok()
        loaded = run(task, PairRequest(spec, cluster, options), Tasks(Store(None), "")).ok()
        assert by_path.text == mixed.text == loaded.text and by_path.plan == mixed.plan == loaded.plan
        assert by_path.inputs == mixed.inputs == loaded.inputs
    build = run(Task.MONITORING, MonitoringRequest((str(SPEC), str(H200_SPEC)), str(GB200), options),
                Tasks(Store(None), "")).ok()  # a build's target: the spec for another accelerator is left out
    named = run(Task.MONITORING, MonitoringRequest((spec,), cluster, options, explicit=True), Tasks(Store(None), ""))
    assert build.text == named.ok().text and "kind: PodMonitor" in build.text
    refused = run(Task.MONITORING, MonitoringRequest((str(SPEC), str(H200_SPEC)), cluster, options, explicit=True),
                  Tasks(Store(None), ""))
    assert refused.status.value == "failed" and "'h200' is not offered by cluster 'example-gb200'" in refused.reason
