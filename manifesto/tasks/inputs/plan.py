"""The loading around resolution: the image catalog, a model's architecture, routing
profiles, and ``resolution``, the resolve step of a pair's tasks (``manifesto.tasks.pair``)
on loaded inputs. A caller that needs the Plan of inputs it loaded runs the RESOLVE task on
a ``PairRequest`` of them (``manifesto.tasks.runner.run``), as ``Spec.resolve`` does."""

from __future__ import annotations

import os
from functools import lru_cache

__all__ = ["load_images", "load_routing_profile", "load_architecture", "catalog_record", "resolution",
           "plan_warnings", "refuse_slurm", "monitoring_text"]


@lru_cache(maxsize=4)
def _images(path: str):
    from manifesto.load.inputs import load_typed
    from manifesto.schema.compiled import ImageCatalog

    return load_typed(ImageCatalog, path)[0]


def load_images():
    from manifesto.load.catalog import images_file

    return _images(images_file())


@lru_cache(maxsize=64)
def _catalog_architecture(path: str):
    """The bundled record at ``path`` (one model), or None when there is none."""
    import os

    from manifesto.edge.jsonio import read_json
    from manifesto.resolve.architecture import from_config

    if not os.path.isfile(path):
        return None
    entry = read_json(path, path)
    return from_config(entry["config"], source=f"catalog/architectures ({entry['source']})",
                       params=entry.get("params"), active_params=entry.get("active_params"))


def catalog_record(model_id: str):
    """(path of the bundled record of ``model_id``, its Architecture or None)."""
    import re

    from manifesto.load.catalog import architectures_dir, path_text

    if not re.fullmatch(r"[\w.-]+/[\w.-]+", model_id) or ".." in model_id:
        return None, None
    path = path_text(os.path.join(architectures_dir(), f"{model_id}.json"))
    return path, _catalog_architecture(path)


def _read_config_json(path: str, source: str, name: str, within: tuple[str, ...] = ()):
    """The Architecture a config.json describes, read through the edge (``manifesto.edge.jsonio``:
    regular file, bounded, depth-checked; confined to ``within`` when given)."""
    from manifesto.edge.jsonio import read_json
    from manifesto.resolve.architecture import from_config

    return from_config(read_json(path, name, within), source=source)


def _config_json_path(spec, within: tuple[str, ...]) -> str:
    """Where the spec's ``model.config_json`` is: relative to the file that sets it. In a build
    (``within``) it must stay in the workspace: no absolute path, no ``..``."""
    from manifesto.errors import InputError

    model = spec.validated.model
    origin = spec.where(("model", "config_json"))
    base = os.path.dirname(origin.file) if origin is not None else os.path.dirname(spec.path)
    if within:
        value = model.config_json
        if os.path.isabs(value) or ".." in value.replace("\\", "/").split("/"):
            raise InputError("an absolute path or one with '..' leads out of the build workspace; a build reads "
                             "only files inside it (name the config.json relative to the spec, below its folder)",
                             origin, "model.config_json")
    return os.path.join(base, model.config_json)


def _hf_cache_config(hf_home: str, model_id: str, revision: str | None) -> str | None:
    """config.json of the snapshot that refs/<revision or main> names in the Hugging Face cache."""
    import os
    import re

    from manifesto.edge.files import read_text
    from manifesto.errors import InputError

    repo = os.path.join(hf_home, "hub", "models--" + model_id.replace("/", "--"))
    ref = os.path.join(repo, "refs", revision or "main")
    try:
        commit = read_text(ref, ref, limit=4096, what="ref file").strip() if "/.." not in ref else ""
    except InputError:
        commit = revision or ""  # a revision may name the snapshot (commit) directly
    # A snapshot is named by its commit: one word, never '..' or a path.
    ok = re.fullmatch(r"[\w.-]+", commit) is not None and commit.strip(".") != ""
    path = os.path.join(repo, "snapshots", commit, "config.json") if ok else ""
    return path if path and os.path.isfile(path) else None


def load_architecture(spec, hf_home: str | None = None, within: tuple[str, ...] = (), realpath=os.path.realpath):
    """(Architecture or None, why none, files read) for a loaded spec: the config.json the spec
    names, else the bundled catalog's record, else the Hugging Face cache under ``hf_home``
    (only when the caller passes one: builds never do, so they stay hermetic). ``within``: a
    build's roots (``yamlio.confinement``), the only place its config.json may be read from.
    ``realpath`` names the files read (a build's memo resolves each path once)."""

    from manifesto.load.inputs import display_name

    model = spec.validated.model
    if model.config_json:
        path = _config_json_path(spec, within)
        name = display_name(path)
        return (_read_config_json(path, f"{name} (model.config_json)", name, within), "",
                [realpath(path)])
    path, known = catalog_record(model.id)
    if known is not None:
        return known, "", [realpath(path)]
    if hf_home:
        found = _hf_cache_config(hf_home, model.id, model.revision)
        if found:
            return _read_config_json(found, f"{found} (Hugging Face cache)", found), "", [found]
    return None, (f"no architecture for {model.id}: catalog/architectures has no record of it and the spec sets "
                  "no model.config_json" + ("" if hf_home is None else " (nor is it in the Hugging Face cache)")), []


def load_routing_profile(ref: str, search=None) -> tuple[str, str, str, dict, object]:
    """(source name, YAML text, path, data, field path -> Origin) of a validated routing profile."""
    from manifesto.load.catalog import find, within
    from manifesto.load.inputs import Loaded, display_name, validate
    from manifesto.schema.compiled import EndpointPickerConfig
    from manifesto.load.yamlio import parse_yaml, read_text

    path = find("routing", ref, search=search)
    text = read_text(path, display_name(path), within(search))  # once: the file may be a pipe (`<(...)`)
    data, locs = parse_yaml(text, display_name(path))
    real = os.path.realpath(path)
    validate(EndpointPickerConfig, Loaded(data, locs, [real]))
    return f"--routing-profile {display_name(path)}", text, real, data, locs.find


def resolution(spec, cluster, options, search=None, routing=None, hf_home: str | None = None,
               realpath=os.path.realpath):
    """(every file the resolution reads, a function that resolves the loaded ``spec`` on the
    loaded ``cluster`` into a Plan): two steps, so the resolve task can key a stored Plan on
    the files before resolving. ``search`` (a catalog.SearchPath) is where a routing profile
    name resolves; ``routing`` is the profile already loaded (``load_routing_profile``'s
    tuple), if it is; ``hf_home`` a Hugging Face cache to look for the model's config.json in
    (see load_architecture); ``realpath`` names the files read (a build's memo resolves each
    path once)."""
    from manifesto.load.catalog import images_file, runtime_tables, within
    from manifesto.resolve.core import Context, resolve

    files = list(spec.files) + list(cluster.loaded.files) + [realpath(images_file())]
    arch, arch_note, arch_files = load_architecture(spec, hf_home, within(search), realpath)
    files += arch_files
    epp = None
    epp_where = None
    if options.routing_profile:
        source, text, path, data, epp_where = routing or load_routing_profile(options.routing_profile, search)
        epp = (source, text, data)
        files.append(path)
    tables = runtime_tables()

    def run():
        ctx = Context(options=options, images=load_images(), where=spec.where, cluster_where=cluster.where,
                      epp_config=epp, architecture=arch, architecture_note=arch_note, tables=tables,
                      **({"epp_where": epp_where} if epp_where else {}))
        plan = resolve(spec.validated, cluster.profile, ctx)
        from manifesto.errors import warn_once

        for line in plan_warnings(plan, cluster.profile, tables):
            warn_once(line)  # said once in the run; the Artifact holds them as data
        return plan

    return files, run


def plan_warnings(plan, profile, tables=None) -> tuple[str, ...]:
    """The warnings of ``plan`` on the cluster ``profile``: which checks its resolution could not
    make, and why (a function of these values; the resolution says each once in the run, and
    the pair's Artifact carries them)."""
    if tables is None:
        from manifesto.load.catalog import runtime_tables

        tables = runtime_tables()
    found = [_untabled(plan, tables)]
    if plan.routing is not None:
        found.append(_no_router_table(load_images(), profile, tables))
    return tuple(w for w in found if w)


def _no_router_table(images, profile, tables) -> str | None:
    """That the endpoint-picker configuration is not checked, and why (None: it is)."""
    from manifesto.resolve.core import router_release

    release = router_release(images, profile)
    if release not in (None, "main") and tables.router(release) is not None:
        return None
    if release == "main":
        why = "llm-d-router main changes with every commit, so no table describes the image"
    elif release:
        why = f"Manifesto has no table of llm-d-router {release}"
    else:
        why = f"cluster '{profile.name}' runs its own endpoint-picker image, whose router release Manifesto cannot know"
    return f"manifesto: warning: {why}; the endpoint-picker configuration is not checked"


def _untabled(plan, tables) -> str | None:
    """That the checks against vLLM's table were skipped, and why (None: they were made)."""
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
        return f"manifesto: warning: {why}; vLLM arguments and VLLM_* variables are not checked"
    return None


def refuse_slurm(cluster) -> None:
    """Monitoring objects are Kubernetes-only: a Slurm ``cluster`` is refused."""
    from manifesto.errors import ResolveError

    if cluster.platform == "slurm":
        raise ResolveError(f"cluster '{cluster.name}' is a Slurm cluster; monitoring objects are Kubernetes-only")


def monitoring_text(specs, cluster, options, resolved) -> tuple[str, list[str]]:
    """(monitoring YAML, files read) for the loaded ``specs`` on a Kubernetes ``cluster``;
    ``resolved`` is each spec's (Plan, files read), from its resolve task."""
    from manifesto.render import expanded_inputs
    from manifesto.render.monitoring import render_monitoring

    refuse_slurm(cluster)
    plans, files, models = [], list(cluster.loaded.files), []
    cluster_yaml = expanded_inputs(specs[0], cluster)[1] if specs else None
    routing_yaml = None
    for spec, (plan, read) in zip(specs, resolved, strict=True):
        plans.append(plan)
        files += read
        models.append(expanded_inputs(spec, cluster)[0])
        if options.routing_profile and plan.routing is not None:
            routing_yaml = plan.routing.config_files[0][1]
    if cluster_yaml is None:
        from manifesto.util.yamlemit import dump_yaml

        cluster_yaml = dump_yaml(cluster.loaded.data)
    text = render_monitoring(plans, options, models, cluster_yaml, routing_yaml)
    return text, sorted(set(files))
