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

__all__ = ["render", "render_kubernetes", "render_to_yaml"]  # artifact_text, expanded_inputs, k8s_objects: internal


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
    cluster = _cluster_of(spec, cluster)
    opts = _options(user, namespace, **options)
    plan, _ = spec.resolve(cluster, opts)
    return artifact_text(plan, spec, cluster, opts)[0]


def render_kubernetes(spec, *, user: str, cluster=None, namespace: str = "default", **options) -> list[dict]:
    """The Kubernetes objects (plain dicts, in apply order) for ``spec`` on ``cluster``, as the
    artifact holds them (with the artifact-digest annotation)."""
    from manifesto.render.k8s import objects, with_digest

    plan, _ = spec.resolve(_cluster_of(spec, cluster), _options(user, namespace, **options))
    if plan.platform == "slurm":
        raise ValueError(f"cluster '{plan.cluster}' is a Slurm cluster; use render() for its batch script")
    return with_digest(objects(plan))


def expanded_inputs(spec, cluster) -> tuple[str, str]:
    """The flattened model YAML and the cluster YAML, for the provenance header."""
    from manifesto.yamlemit import dump_yaml

    return dump_yaml(spec.loaded.data), dump_yaml(cluster.loaded.data)


def _routing_yaml(plan, options) -> str | None:
    """The text of a --routing-profile that shaped the plan (None when it did not)."""
    if options is None or options.routing_profile is None or plan.routing is None:
        return None
    return plan.routing.config_files[0][1]


def artifact_text(plan, spec, cluster, options=None) -> tuple[str, str]:
    """(text, suffix) of ``plan`` for its platform; ``spec`` and ``cluster`` are the loaded
    inputs, written into the provenance header with the ``options`` that shaped the plan,
    and used to place a refusal in its file."""
    model_yaml, cluster_yaml = expanded_inputs(spec, cluster)
    header = {"options": options, "routing_yaml": _routing_yaml(plan, options)}
    if plan.platform == "slurm":
        from manifesto.errors import ResolveError
        from manifesto.render.slurm import SlurmUnsupported, render_slurm

        try:
            return render_slurm(plan, model_yaml, cluster_yaml, **header), ".sbatch"
        except SlurmUnsupported as exc:  # point at the field in the file the refusal is about
            where = spec.where if exc.source == "spec" else cluster.where
            raise ResolveError(exc.message, where(exc.fields), exc.path) from None
    from manifesto.render.k8s import render_manifest
    from manifesto.render.k8s.validity import MAX_OBJECT, LimitError, size_problem

    try:
        objs = k8s_objects(plan, spec)
        text = render_manifest(plan, model_yaml, cluster_yaml, objs, **header)
        if len(text) > MAX_OBJECT // 3:  # JSON is at most about 3x our YAML: only then can an object be too big
            problem = size_problem(objs)
            if problem is not None:
                raise problem
    except LimitError as exc:
        raise _placed_limit(exc, spec, cluster) from None
    return text, ".yaml"


def _placed_limit(exc, spec, cluster):
    """A size limit on the input that fills the field: the cluster's pod annotations for
    annotations, else the spec (the rendered object and field are named in the message)."""
    from manifesto.errors import ResolveError

    if exc.field.endswith("annotations") and cluster.profile.pod_defaults.annotations:
        return ResolveError(exc.message, cluster.where(("pod_defaults", "annotations")), "pod_defaults.annotations")
    return ResolveError(exc.message, spec.where(()))


def k8s_objects(plan, spec, routing: bool = False) -> list[dict]:
    """The instance's Kubernetes objects (or only its routing layer), checked against Kubernetes'
    rules; a name that is too long or taken twice is reported on the spec field behind it."""
    from manifesto.errors import RenderCheckError
    from manifesto.render.k8s import objects, routing_only

    try:
        return routing_only(plan) if routing else objects(plan)
    except RenderCheckError as exc:
        if not exc.excess:
            raise
        raise _placed(exc, plan, spec) from None


def _placed(exc, plan, spec):
    """The spec field a name comes from: the role whose workload name starts it, else the release."""
    from manifesto.errors import ResolveError, format_path

    path, what = ("release",), "release"
    owners = [(i, r) for i, r in enumerate(plan.roles)
              if exc.name == r.workload_name or exc.name.startswith(r.workload_name + "-")]
    if owners:
        # The longest matching workload name; among equals the last role, which made the second object.
        i, role = max(reversed(owners), key=lambda o: len(o[1].workload_name))
        explicit = role.workload_name != f"{plan.instance}-{role.name}"
        path = ("roles", i, "workload_name" if explicit else "name")
        what = format_path(path) if explicit else f"release or {format_path(path)}"
    if exc.excess < 0:
        message = (f"gives a second {exc.kind} named '{exc.name}' (another object of the instance has that name); "
                   f"choose a different {format_path(path)}")
    else:
        message = (f"makes a {exc.kind} name too long by {exc.excess} character{'s' if exc.excess > 1 else ''}: "
                   f"{exc.problem}; shorten {what}")
    return ResolveError(message, spec.where(path), format_path(path))


def render_to_yaml(objects: list[dict]) -> str:
    """Multi-document YAML for a list of objects (no provenance header)."""
    from manifesto.yamlemit import dump_all

    return dump_all(objects)
