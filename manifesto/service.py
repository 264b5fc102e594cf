"""Glue between loading, resolving and rendering, shared by the CLI, the API and builds."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["load_images", "load_routing_profile", "plan_for", "render_text", "forget_warnings"]


@lru_cache(maxsize=4)
def _images(path: str):
    from manifesto.load import load_typed
    from manifesto.schema.routing import ImageCatalog

    return load_typed(ImageCatalog, path)[0]


def load_images():
    from manifesto.catalog import images_path

    return _images(str(images_path()))


def load_routing_profile(ref: str, search=None) -> tuple[str, str, str, dict, object]:
    """(source name, YAML text, path, data, field path -> Origin) of a validated routing profile."""
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
    return f"--routing-profile {display_name(path)}", text, real, data, locs.find


def plan_for(spec, cluster, options, search=None):
    """Resolve a loaded spec against a loaded cluster. Returns (Plan, files read).
    ``search`` (a catalog.SearchPath) is where a routing profile name resolves."""
    from manifesto.catalog import images_path, runtime_tables
    from manifesto.resolve.core import resolve

    files = list(spec.files) + list(cluster.loaded.files) + [str(images_path().resolve())]
    epp = None
    epp_where = None
    if options.routing_profile:
        source, text, path, data, epp_where = load_routing_profile(options.routing_profile, search)
        epp = (source, text, data)
        files.append(path)
    tables = runtime_tables()
    plan = resolve(spec.model, cluster.profile, load_images(), options, where=spec.where,
                   cluster_where=cluster.where, epp_config=epp, tables=tables,
                   **({"epp_where": epp_where} if epp_where else {}))
    _warn_untabled(plan, tables)
    if plan.routing is not None:
        _warn_no_router_table(load_images(), cluster.profile, tables)
    return plan, files


_WARNED: set[str] = set()


def forget_warnings() -> None:
    _WARNED.clear()


def _warn_no_router_table(images, profile, tables) -> None:
    import sys

    from manifesto.resolve.core import router_release

    release = router_release(images, profile)
    if release not in (None, "main") and tables.router(release) is not None:
        return
    if release == "main":
        why = "llm-d-router main changes with every commit, so no table describes the image"
    elif release:
        why = f"Manifesto has no table of llm-d-router {release}"
    else:
        why = f"cluster '{profile.name}' runs its own endpoint-picker image, whose router release Manifesto cannot know"
    if why not in _WARNED:
        _WARNED.add(why)
        print(f"manifesto: warning: {why}; the endpoint-picker configuration is not checked", file=sys.stderr)


def _warn_untabled(plan, tables) -> None:
    """Say once per process that the checks against vLLM's table were skipped, and why."""
    import sys

    from manifesto.resolve.vllm_check import vllm_version

    for role in plan.roles[:1]:
        version = vllm_version(role.image)
        if role.vllm_env:
            why = f"runtime.vllm_env runs vLLM from the worktree {role.vllm_env}, whose release Manifesto cannot know"
        elif version is None:
            why = f"the image {role.image} names no vLLM release"
        elif tables.vllm(version) is None:
            why = f"Manifesto has no table of vLLM {version} (the image {role.image})"
        else:
            continue
        if why not in _WARNED:
            _WARNED.add(why)
            print(f"manifesto: warning: {why}; vLLM arguments and VLLM_* variables are not checked",
                  file=sys.stderr)


def render_text(spec, cluster, options, search=None) -> tuple[str, str, list[str]]:
    """(artifact text, suffix, files read) for the cluster's platform."""
    from manifesto.render import artifact_text

    plan, files = plan_for(spec, cluster, options, search)
    text, suffix = artifact_text(plan, spec, cluster, options)
    return text, suffix, files
