"""BUILD.yaml's target generators are typed records (issue 26): one class per kind, read by
field name, kept in the manifest as plain rows and rebuilt from them, a damaged row being a
reason to parse BUILD.yaml again, never a crash."""

from __future__ import annotations

import marshal

import fake_renderer
import pytest
from buildkit import TREE, write_files

from manifesto.build_graph import api
from manifesto.build_graph.buildfile import parse_buildfile
from manifesto.build_graph.generators import (DeploymentGenerator, GitopsGenerator, MonitoringGenerator,
                                               SourceGenerator, from_rows, to_rows)
from manifesto.build_graph.renderer import OPTION_FIELDS
from manifesto.build_graph.state import load_state, save_state

EVERY_KIND = """\
options:
  default: {user: u, namespace: n}
targets:
  - kind: cluster
    path: clusters
    sources: ["*.yaml", "!old-*.yaml"]
  - kind: routing
    path: routing
    sources: ["*.yaml"]
  - kind: model
    path: models
    sources: ["**/*"]
    clusters: ["//clusters:gpu"]
  - kind: deployment
    name: demo
    model: //models/qwen:aggregated
    cluster: gpu
    namespace: prod
    context: admin@gpu
  - kind: monitoring
    name: watch
    cluster: gpu
    models: ["//models/qwen::"]
  - kind: gitops
    name: argocd
    repo_url: https://example.com/serving.git
    revision: main
    deployments: ["//:demo"]
"""


def _generators(tmp_path, text: str = EVERY_KIND) -> list:
    (tmp_path / "BUILD.yaml").write_text(text)
    config, _ = parse_buildfile(str(tmp_path / "BUILD.yaml"), "BUILD.yaml")
    return config["generators"]


def test_each_kind_parses_to_its_own_record(tmp_path):
    clusters, routing, models, deployment, monitoring, gitops = _generators(tmp_path)
    assert clusters == SourceGenerator("cluster", "clusters", ("*.yaml",), ("old-*.yaml",))
    assert routing.kind == "routing" and routing.clusters is None and routing.options is None
    assert type(models) is SourceGenerator and models.kind == "model" and models.path == "models"
    assert models.clusters == ("//clusters:gpu",) and len(models.options) == len(OPTION_FIELDS)
    assert type(deployment) is DeploymentGenerator and deployment.kind == "deployment"
    assert (deployment.name, deployment.model, deployment.cluster) == ("demo", "//models/qwen:aggregated", "gpu")
    assert (deployment.context, deployment.slurm_host) == ("admin@gpu", None)
    options = dict(zip(OPTION_FIELDS, deployment.options))
    assert (options["user"], options["namespace"]) == ("u", "prod")  # the target's own namespace wins
    assert type(monitoring) is MonitoringGenerator
    assert (monitoring.name, monitoring.models, monitoring.cluster) == ("watch", ("//models/qwen::",), "gpu")
    assert type(gitops) is GitopsGenerator and (gitops.name, gitops.deployments) == ("argocd", ("//:demo",))
    assert gitops.settings.repo_url == "https://example.com/serving.git" and gitops.settings.automated is True


def test_a_record_is_read_by_name_not_by_position(tmp_path):
    for gen in _generators(tmp_path):
        with pytest.raises(TypeError):
            gen[0]  # noqa: B018 (no code may index a generator: its slots mean different things per kind)


def test_rows_survive_marshal_and_come_back_as_the_same_records(tmp_path):
    generators = _generators(tmp_path)
    rows = marshal.loads(marshal.dumps(to_rows(generators)))  # what the manifest does with them
    assert all(type(row) is tuple and row[0] == gen.kind for row, gen in zip(rows, generators))
    assert from_rows(rows) == generators


@pytest.mark.parametrize("rows", [
    None,
    [("cluster", "clusters", ("*.yaml",), (), None, None)],  # a list, not the tuple saved
    (("cluster", "clusters", ("*.yaml",), (), None),),  # a field short
    (("pipeline", "x"),),  # an unknown kind
    ((),),
    ("cluster",),
    (("cluster", 7, ("*.yaml",), (), None, None),),  # a path that is no text
    (("model", "models", ("**/*",), (), "//clusters::", ()),),  # clusters: a string, not addresses
    (("deployment", "demo", "m", "gpu", ("ctx", None), ()),),  # the 6-tuple of before issue 26
    (("deployment", "demo", "m", "gpu", None, 5, ()),),  # a Slurm host that is no text
    (("monitoring", "watch", ("//models::",), "gpu", None, ()),),  # the 6-tuple of before issue 26
    (("monitoring", "watch", "//models::", "gpu", ()),),
    (("gitops", "argocd", None, ["repo"]),),  # settings: no mapping
], ids=["none", "list", "short", "unknown-kind", "empty-row", "not-a-row", "path-type", "clusters-type",
        "old-deployment", "host-type", "old-monitoring", "models-type", "settings-type"])
def test_rows_that_no_build_saved_are_refused(rows):
    assert from_rows(rows) is None


class _Quiet:
    warn = wait = lambda self, message: None

    def progress(self, done, total, label) -> None:
        pass

    def progress_done(self) -> None:
        pass


def test_a_damaged_cached_buildfile_is_parsed_again(tmp_path):
    """A manifest whose cached generators are not records' rows (damaged, planted, or saved
    before the records) makes the build read BUILD.yaml again and carry on: no traceback."""
    write_files(tmp_path, TREE, age=10)

    def build():
        return api.build(["//::"], root=tmp_path, renderer="fake_renderer", ui=_Quiet(), render=fake_renderer.run)

    first = build().counts()
    path = str(tmp_path / "out" / ".cache" / "state")
    state = load_state(path, print)
    digest, config, locations = state.buildfile
    assert from_rows(config["generators"]) is not None  # what a build saves reads back
    rows = list(config["generators"])
    rows[0] = rows[0][:3]  # a row cut short
    state.buildfile = (digest, {**config, "generators": tuple(rows)}, locations)
    save_state(path, state)
    again = build().counts()
    assert again["failed"] == 0 and again["rendered"] + again["up to date"] == first["rendered"]
    assert from_rows(load_state(path, print).buildfile.config["generators"]) is not None  # saved afresh
