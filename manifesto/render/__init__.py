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
# internal (the build's tasks, manifesto.tasks.memo): render_plan, header_inputs, Refused, place,
# artifact_text, expanded_inputs, k8s_objects


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
    # The pair's RENDER task (manifesto.tasks.runner.run), as every command renders: reached
    # through the loaded spec (manifesto.spec.Spec), as this pure package sits below the tasks.
    return spec._outcome("render", cluster, _options(user, namespace, **options)).text


def render_kubernetes(spec, *, user: str, cluster=None, namespace: str = "default", **options) -> list[dict]:
    """The Kubernetes objects (plain dicts, in apply order) for ``spec`` on ``cluster``, as the
    artifact holds them (with the artifact-digest annotation)."""
    from manifesto.render.k8s import objects, with_digest

    # The pair's RESOLVE task (manifesto.tasks.runner.run), through the loaded spec.
    plan, _ = spec.resolve(_cluster_of(spec, cluster), _options(user, namespace, **options))
    if plan.platform == "slurm":
        raise ValueError(f"cluster '{plan.cluster}' is a Slurm cluster; use render() for its batch script")
    return with_digest(objects(plan))


def expanded_inputs(spec, cluster) -> tuple[str, str]:
    """The flattened model YAML and the cluster YAML, for the provenance header (each written
    once per loaded input: ``Loaded.yaml``)."""
    return spec.loaded.yaml(), cluster.loaded.yaml()


def _routing_yaml(plan, options) -> str | None:
    """The text of a --routing-profile that shaped the plan (None when it did not)."""
    if options is None or options.routing_profile is None or plan.routing is None:
        return None
    return plan.routing.config_files[0][1]


def header_inputs(plan, spec, cluster, options=None):
    """The :class:`~manifesto.render.header.HeaderInputs` of ``plan``: what its provenance
    header shows besides the Plan (the expanded inputs, the options, a routing profile's text)."""
    from manifesto.render.products import HeaderInputs

    model_yaml, cluster_yaml = expanded_inputs(spec, cluster)
    return HeaderInputs(model_yaml, cluster_yaml, options, _routing_yaml(plan, options))


class Refused(Exception):
    """``render_plan`` refused the plan: the inputs' doing, not a bug. ``refusal`` says why
    and which input field is behind it; :func:`place` turns it into a ResolveError at that
    field's position (render itself has no source positions: it reads only the Plan)."""

    def __init__(self, refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


def render_plan(plan, header) -> tuple[str, str]:
    """(text, suffix) of ``plan`` for its platform, with the provenance header of ``header``
    (a HeaderInputs): a function of these two values alone. Raises :class:`Refused`."""
    from manifesto.render.products import Refusal

    args = {"options": header.options, "routing_yaml": header.routing_yaml}
    if plan.platform == "slurm":
        from manifesto.render.slurm import SlurmUnsupported, render_slurm

        try:
            return render_slurm(plan, header.model_yaml, header.cluster_yaml, **args), ".sbatch"
        except SlurmUnsupported as exc:
            raise Refused(Refusal(exc.message, exc.source, exc.fields, exc.path)) from None
    from manifesto.render.k8s import render_manifest
    from manifesto.render.k8s.validity import MAX_OBJECT, LimitError, size_problem

    try:
        objs = _checked_objects(plan)
        text = render_manifest(plan, header.model_yaml, header.cluster_yaml, objs, **args)
        if len(text) > MAX_OBJECT // 3:  # JSON is at most about 3x our YAML: only then can an object be too big
            problem = size_problem(objs)
            if problem is not None:
                raise problem
    except LimitError as exc:
        # pod annotations may come from the cluster's pod_defaults: place() decides
        source = "annotations" if exc.field.endswith("annotations") else "spec"
        raise Refused(Refusal(exc.message, source, (), "")) from None
    return text, ".yaml"


def place(refusal, spec, cluster):
    """The ResolveError of ``refusal`` at the input field behind it."""
    from manifesto.errors import ResolveError

    if refusal.source == "flag":  # a command-line flag asked for it: no input field to place it at
        return ResolveError(refusal.message)
    if refusal.source == "annotations":  # a size limit filled by the pod annotations
        if cluster.profile.pod_defaults.annotations:
            return ResolveError(refusal.message, cluster.where(("pod_defaults", "annotations")),
                                "pod_defaults.annotations")
        return ResolveError(refusal.message, spec.where(()))
    where = cluster.where if refusal.source == "cluster" else spec.where
    return ResolveError(refusal.message, where(tuple(refusal.fields)), refusal.path)


def artifact_text(plan, spec, cluster, options=None) -> tuple[str, str]:
    """(text, suffix) of ``plan`` for its platform; ``spec`` and ``cluster`` are the loaded
    inputs, written into the provenance header with the ``options`` that shaped the plan,
    and used to place a refusal in its file."""
    try:
        return render_plan(plan, header_inputs(plan, spec, cluster, options))
    except Refused as exc:
        raise place(exc.refusal, spec, cluster) from None


def _checked_objects(plan, routing: bool = False) -> list[dict]:
    """The instance's Kubernetes objects; a name that is too long or taken twice is a
    :class:`Refused` naming the spec field behind it."""
    from manifesto.errors import RenderCheckError
    from manifesto.render.k8s import objects, routing_only

    try:
        return routing_only(plan) if routing else objects(plan)
    except RenderCheckError as exc:
        if not exc.excess:
            raise
        raise Refused(_refusal(exc, plan)) from None


def k8s_objects(plan, spec, routing: bool = False) -> list[dict]:
    """The instance's Kubernetes objects (or only its routing layer), checked against Kubernetes'
    rules; a name that is too long or taken twice is reported on the spec field behind it."""
    try:
        return _checked_objects(plan, routing)
    except Refused as exc:
        raise place(exc.refusal, spec, None) from None


def _refusal(exc, plan):
    """The spec field a name comes from: the role whose workload name starts it, else the release."""
    from manifesto.errors import format_path
    from manifesto.render.products import Refusal

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
    return Refusal(message, "spec", path, format_path(path))


def render_to_yaml(objects: list[dict]) -> str:
    """Multi-document YAML for a list of objects (no provenance header)."""
    from manifesto.util.yamlemit import dump_all

    return dump_all(objects)
