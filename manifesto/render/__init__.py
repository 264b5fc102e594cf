"""Public rendering API.

    from manifesto.cluster import load_cluster
    from manifesto.render import render
    from manifesto.spec import load_spec

    cluster = load_cluster("clusters/example-gb200.yaml")
    spec = load_spec("models/qwen/qwen3-0.6b.yaml", cluster)
    text = render(spec, user="tester", cluster=cluster)

``render`` returns ready-to-write text (Kubernetes YAML, or a Slurm batch script for a
Slurm cluster); ``render_kubernetes`` returns the object dicts; ``render_to_yaml``
serialises such a list.
"""

from __future__ import annotations

__all__ = ["render", "render_kubernetes", "render_to_yaml"]


def _options(user: str, namespace: str, **extra):
    from manifesto.resolve.plan import Options

    return Options(user=user, namespace=namespace, **extra)


def _cluster_of(spec, cluster):
    cluster = cluster if cluster is not None else spec.cluster
    if cluster is None:
        raise TypeError("render() needs cluster=, or a spec loaded with load_spec(path, cluster)")
    return cluster


def render(spec, *, user: str, cluster=None, namespace: str = "default", **options) -> str:
    """Artifact text for ``spec`` on ``cluster``; ``options`` are Options fields (vllm_env, ...)."""
    from manifesto.service import render_text

    text, _, _ = render_text(spec, _cluster_of(spec, cluster), _options(user, namespace, **options))
    return text


def render_kubernetes(spec, *, user: str, cluster=None, namespace: str = "default", **options) -> list[dict]:
    """The Kubernetes objects (plain dicts, in apply order) for ``spec`` on ``cluster``, as the
    artifact holds them (with the artifact-digest annotation)."""
    from manifesto.service import plan_for
    from manifesto.render.k8s import objects, with_digest

    plan, _ = plan_for(spec, _cluster_of(spec, cluster), _options(user, namespace, **options))
    if plan.platform == "slurm":
        raise ValueError(f"cluster '{plan.cluster}' is a Slurm cluster; use render() for its batch script")
    return with_digest(objects(plan))


def render_to_yaml(objects: list[dict]) -> str:
    """Multi-document YAML for a list of objects (no provenance header)."""
    from manifesto.render.yamlemit import dump_all

    return dump_all(objects)
