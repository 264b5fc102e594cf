"""Glue between loading, resolving and rendering, shared by the CLI, the API and builds."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["load_images", "load_routing_profile", "plan_for", "render_text", "expanded_inputs", "k8s_objects"]


@lru_cache(maxsize=4)
def _images(path: str):
    from manifesto.load import load_typed
    from manifesto.schema.routing import ImageCatalog

    return load_typed(ImageCatalog, path)[0]


def load_images():
    from manifesto.catalog import images_path

    return _images(str(images_path()))


def load_routing_profile(ref: str) -> tuple[str, str, str]:
    """(source name, YAML text, path) of a validated routing profile."""
    from pathlib import Path

    from manifesto.catalog import find
    from manifesto.load import display_name, load_typed
    from manifesto.schema.routing import EndpointPickerConfig

    path = find("routing", ref)
    load_typed(EndpointPickerConfig, path)
    return display_name(path), Path(path).read_text(encoding="utf-8"), str(Path(path).resolve())


def plan_for(spec, cluster, options):
    """Resolve a loaded spec against a loaded cluster. Returns (Plan, files read)."""
    from manifesto.catalog import images_path
    from manifesto.resolve.core import resolve

    files = list(spec.files) + list(cluster.loaded.files) + [str(images_path().resolve())]
    epp = None
    if options.routing_profile:
        source, text, path = load_routing_profile(options.routing_profile)
        epp = (source, text)
        files.append(path)
    plan = resolve(spec.model, cluster.profile, load_images(), options, where=spec.where,
                   cluster_where=cluster.where, epp_config=epp)
    return plan, files


def expanded_inputs(spec, cluster) -> tuple[str, str]:
    """The flattened model YAML and the cluster YAML, for the provenance header."""
    from manifesto.render.yamlemit import dump_yaml

    return dump_yaml(spec.loaded.data), dump_yaml(cluster.loaded.data)


def render_text(spec, cluster, options) -> tuple[str, str, list[str]]:
    """(artifact text, suffix, files read) for the cluster's platform."""
    plan, files = plan_for(spec, cluster, options)
    model_yaml, cluster_yaml = expanded_inputs(spec, cluster)
    if plan.platform == "slurm":
        from manifesto.errors import ResolveError
        from manifesto.render.slurm import SlurmUnsupported, render_slurm

        try:
            return render_slurm(plan, model_yaml, cluster_yaml), ".sbatch", files
        except SlurmUnsupported as exc:  # point at the field in the file the refusal is about
            where = spec.where if exc.source == "spec" else cluster.where
            raise ResolveError(exc.message, where(exc.fields), exc.path) from None
    from manifesto.render.k8s import render_manifest

    return render_manifest(plan, model_yaml, cluster_yaml, k8s_objects(plan, spec)), ".yaml", files


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
    from manifesto.errors import ResolveError
    from manifesto.yamlio import format_path

    path, what = ("release",), "release"
    owners = [(i, r) for i, r in enumerate(plan.roles)
              if exc.name == r.workload_name or exc.name.startswith(r.workload_name + "-")]
    if owners:
        # The longest matching workload name; among equals the last role, which made the second object.
        i, role = max(reversed(owners), key=lambda o: len(o[1].workload_name))
        explicit = spec.model.roles[i].workload_name is not None
        path = ("roles", i, "workload_name" if explicit else "name")
        what = format_path(path) if explicit else f"release or {format_path(path)}"
    if exc.excess < 0:
        message = (f"gives a second {exc.kind} named '{exc.name}' (another object of the instance has that name); "
                   f"choose a different {format_path(path)}")
    else:
        message = (f"makes a {exc.kind} name too long by {exc.excess} character{'s' if exc.excess > 1 else ''}: "
                   f"{exc.problem}; shorten {what}")
    return ResolveError(message, spec.where(path), format_path(path))
