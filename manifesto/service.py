"""Glue between loading, resolving and rendering, shared by the CLI, the API and builds."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["load_images", "load_routing_profile", "plan_for", "render_text", "monitoring_text"]


@lru_cache(maxsize=4)
def _images(path: str):
    from manifesto.load import load_typed
    from manifesto.schema.routing import ImageCatalog

    return load_typed(ImageCatalog, path)[0]


def load_images():
    from manifesto.catalog import images_path

    return _images(str(images_path()))


def load_routing_profile(ref: str, search=None) -> tuple[str, str, str, dict]:
    """(source name, YAML text, path, data) of a validated routing profile."""
    from pathlib import Path

    from manifesto.catalog import find
    from manifesto.load import Loaded, display_name, validate
    from manifesto.schema.routing import EndpointPickerConfig
    from manifesto.yamlio import parse_yaml, read_text

    path = find("routing", ref, search=search)
    text = read_text(path, display_name(path))  # once: the file may be a pipe (`<(...)`)
    data, locs = parse_yaml(text, display_name(path))
    real = str(Path(path).resolve())
    validate(EndpointPickerConfig, Loaded(data, locs, [real]))
    return f"--routing-profile {display_name(path)}", text, real, data


def plan_for(spec, cluster, options, search=None):
    """Resolve a loaded spec against a loaded cluster. Returns (Plan, files read).
    ``search`` (a catalog.SearchPath) is where a routing profile name resolves."""
    from manifesto.catalog import images_path
    from manifesto.resolve.core import resolve

    files = list(spec.files) + list(cluster.loaded.files) + [str(images_path().resolve())]
    epp = None
    if options.routing_profile:
        source, text, path, data = load_routing_profile(options.routing_profile, search)
        epp = (source, text, data)
        files.append(path)
    plan = resolve(spec.model, cluster.profile, load_images(), options, where=spec.where,
                   cluster_where=cluster.where, epp_config=epp)
    return plan, files


def render_text(spec, cluster, options, search=None) -> tuple[str, str, list[str]]:
    """(artifact text, suffix, files read) for the cluster's platform."""
    from manifesto.render import artifact_text

    plan, files = plan_for(spec, cluster, options, search)
    text, suffix = artifact_text(plan, spec, cluster, options)
    return text, suffix, files


def monitoring_text(specs, cluster, options, search=None) -> tuple[str, list[str]]:
    """(monitoring YAML, files read) for the loaded ``specs`` on a Kubernetes ``cluster``."""
    from manifesto.errors import ResolveError
    from manifesto.render import expanded_inputs
    from manifesto.render.monitoring import render_monitoring

    if cluster.platform == "slurm":
        raise ResolveError(f"cluster '{cluster.name}' is a Slurm cluster; monitoring objects are Kubernetes-only")
    plans, files, models = [], list(cluster.loaded.files), []
    cluster_yaml = expanded_inputs(specs[0], cluster)[1] if specs else None
    routing_yaml = None
    for spec in specs:
        plan, read = plan_for(spec, cluster, options, search)
        plans.append(plan)
        files += read
        models.append(expanded_inputs(spec, cluster)[0])
        if options.routing_profile and plan.routing is not None:
            routing_yaml = plan.routing.config_files[0][1]
    if cluster_yaml is None:
        from manifesto.yamlemit import dump_yaml

        cluster_yaml = dump_yaml(cluster.loaded.data)
    text = render_monitoring(plans, options, models, cluster_yaml, routing_yaml)
    return text, sorted(set(files))
