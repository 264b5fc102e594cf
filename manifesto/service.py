"""Glue between loading, resolving and rendering, shared by the CLI, the API and builds."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["load_images", "load_routing_profile", "plan_for", "render_text", "expanded_inputs"]


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
    from manifesto.load import Loaded, display_name, validate
    from manifesto.schema.routing import EndpointPickerConfig
    from manifesto.yamlio import parse_yaml

    path = find("routing", ref)
    text = Path(path).read_text(encoding="utf-8")  # once: the file may be a pipe (`<(...)`)
    data, locs = parse_yaml(text, display_name(path))
    validate(EndpointPickerConfig, Loaded(data, locs, [str(Path(path).resolve())]))
    return f"--routing-profile {display_name(path)}", text, str(Path(path).resolve())


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


def _routing_yaml(plan, options) -> str | None:
    """The text of a --routing-profile that shaped the plan (None when it did not)."""
    if options.routing_profile is None or plan.routing is None:
        return None
    return plan.routing.config_files[0][1]


def render_text(spec, cluster, options) -> tuple[str, str, list[str]]:
    """(artifact text, suffix, files read) for the cluster's platform."""
    plan, files = plan_for(spec, cluster, options)
    model_yaml, cluster_yaml = expanded_inputs(spec, cluster)
    header = {"options": options, "routing_yaml": _routing_yaml(plan, options)}
    if plan.platform == "slurm":
        from manifesto.errors import ResolveError
        from manifesto.render.slurm import SlurmUnsupported, render_slurm

        try:
            return render_slurm(plan, model_yaml, cluster_yaml, **header), ".sbatch", files
        except SlurmUnsupported as exc:  # point at the field in the file the refusal is about
            where = spec.where if exc.source == "spec" else cluster.where
            raise ResolveError(exc.message, where(exc.fields), exc.path) from None
    from manifesto.render.k8s import render_manifest

    return render_manifest(plan, model_yaml, cluster_yaml, **header), ".yaml", files
