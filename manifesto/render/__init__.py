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
# internal (the build's tasks, manifesto.tasks.pair): artifact (the one product of an instance),
# render_plan, header_inputs, Refused, place, placed_artifact, artifact_text, expanded_inputs, k8s_objects


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
    # The pair's ARTIFACT task (manifesto.tasks.runner.run), through the loaded spec.
    made = spec._outcome("artifact", _cluster_of(spec, cluster), _options(user, namespace, **options))
    if made.artifact.objects is None:
        raise ValueError(f"cluster '{made.plan.cluster}' is a Slurm cluster; use render() for its batch script")
    return made.artifact.objects


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
    """(text, suffix) of ``plan``'s :func:`artifact` with the provenance header of ``header``
    (a HeaderInputs): a function of these two values alone. Raises :class:`Refused`."""
    made = artifact(plan, header)
    return made.text, made.suffix


def artifact(plan, header, layer: str = "manifest"):
    """The :class:`~manifesto.render.products.Artifact` of ``plan`` (``layer``: "manifest", the
    whole instance, or "routing", its routing layer) with the provenance header of ``header``
    (a HeaderInputs). The one place a Plan becomes Kubernetes objects: their names checked
    (a refusal names the spec field behind a name), the digest annotation added, the size of
    every object checked. A Slurm plan's manifest is its batch script. Raises :class:`Refused`."""
    from manifesto.render.products import Artifact, Refusal

    args = {"options": header.options, "routing_yaml": header.routing_yaml}
    if plan.platform == "slurm":
        if layer != "manifest":
            raise ValueError(f"a Slurm plan has no {layer} layer: its batch script embeds its router")
        from manifesto.render.slurm import SlurmUnsupported, render_slurm

        try:
            return Artifact(render_slurm(plan, header.model_yaml, header.cluster_yaml, **args), ".sbatch")
        except SlurmUnsupported as exc:
            raise Refused(Refusal(exc.message, exc.source, exc.fields, exc.path)) from None
    from manifesto.render.k8s import render_text
    from manifesto.render.k8s.validity import MAX_OBJECT, LimitError, size_problem

    try:
        objs = _checked_objects(plan, routing=layer == "routing")
        text, digest = render_text(f"render {layer}", objs, header.model_yaml, header.cluster_yaml, **args)
        if len(text) > MAX_OBJECT // 3:  # JSON is at most about 3x our YAML: only then can an object be too big
            problem = size_problem(objs)
            if problem is not None:
                raise problem
    except LimitError as exc:
        # pod annotations may come from the cluster's pod_defaults: place() decides
        source = "annotations" if exc.field.endswith("annotations") else "spec"
        raise Refused(Refusal(exc.message, source, (), "")) from None
    return Artifact(text, ".yaml", layer, objs, digest)


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
    """(text, suffix) of ``plan``'s artifact; ``spec`` and ``cluster`` are the loaded
    inputs, written into the provenance header with the ``options`` that shaped the plan,
    and used to place a refusal in its file."""
    made = placed_artifact(plan, spec, cluster, options)
    return made.text, made.suffix


def placed_artifact(plan, spec, cluster, options=None, layer: str = "manifest"):
    """:func:`artifact` of ``plan`` made from the loaded ``spec`` and ``cluster`` (its header
    inputs), a refusal raised as the ResolveError at the input field behind it."""
    try:
        return artifact(plan, header_inputs(plan, spec, cluster, options), layer)
    except Refused as exc:
        raise place(exc.refusal, spec, cluster) from None


def _checked_objects(plan, routing: bool = False) -> list[dict]:
    """The instance's Kubernetes objects (or its routing layer's): the one call of the object
    builders (``render.k8s.objects``, ``routing_only``). A name that is too long or taken
    twice is a :class:`Refused` naming the spec field behind it."""
    from manifesto.errors import RenderCheckError
    from manifesto.render.k8s import objects, routing_only

    try:
        return routing_only(plan) if routing else objects(plan)
    except RenderCheckError as exc:
        if not exc.excess:
            raise
        raise Refused(_refusal(exc, plan)) from None


def k8s_objects(plan, spec, routing: bool = False, cluster=None, options=None) -> list[dict]:
    """The objects of ``plan``'s artifact (or of its routing layer) as applied: with the
    digest annotation, names and sizes checked; a refusal is reported on the input field
    behind it. ``cluster`` (default: the one ``spec`` was loaded with) and ``options`` are
    what the provenance header, and so the digest, shows."""
    made = placed_artifact(plan, spec, cluster if cluster is not None else spec.cluster, options,
                           "routing" if routing else "manifest")
    return made.objects


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
