"""The public Python API is pinned: changing it must be a deliberate edit of this file."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "manifesto.cluster": ["Cluster", "load_cluster"],
    "manifesto.spec": ["Spec", "load_spec"],
    "manifesto.render": ["render", "render_kubernetes", "render_to_yaml"],
    "manifesto.workload": ["COMPUTE_DOMAIN_CLAIM", "PlatformClaim", "PodPlacement", "AcceleratorSettings",
                           "WorkloadSettings", "workload_settings"],
    "manifesto.errors": ["Origin", "ManifestoError", "InputError", "YamlSyntaxError", "SchemaError",
                         "ExtendsError", "ExpressionError", "CatalogError", "ResolveError",
                         "IncompatiblePairError", "RenderCheckError", "BuildError", "OpsError", "did_you_mean",
                         "format_path", "show_value", "printable", "excerpt"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_exported_members(module):
    mod = importlib.import_module(module)
    assert mod.__all__ == PUBLIC[module]
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.{name}"


def test_spec_example_from_the_docs_runs():
    from manifesto.cluster import load_cluster
    from manifesto.render import render, render_kubernetes, render_to_yaml
    from manifesto.spec import load_spec
    from manifesto.workload import workload_settings

    cluster = load_cluster("clusters/example-slurm.yaml")
    spec = load_spec("models/qwen/qwen3-0.6b.yaml", cluster)
    artifact = render(spec, user="tester", cluster=cluster)
    assert artifact.startswith("#!/bin/bash") and "#SBATCH --job-name=manifesto-qwen3-0-6b" in artifact

    k8s = load_cluster("clusters/example-gb200.yaml")
    objects = render_kubernetes(load_spec("models/qwen/qwen3-0.6b.yaml", k8s), user="tester")
    assert render_to_yaml(objects).startswith("---\napiVersion:")
    settings = workload_settings(k8s).accelerator("gb200")
    assert settings is not None
