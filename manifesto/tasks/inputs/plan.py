"""The resolve step of a pair's tasks on loaded inputs (``resolution``, which
``manifesto.tasks.pair`` runs through the memo) and the warnings of the Plan it makes
(``plan_warnings``). A caller that needs the Plan of inputs it loaded runs the RESOLVE task on
a ``PairRequest`` of them (``manifesto.tasks.runner.run``), as ``Spec.resolve`` does."""

from __future__ import annotations

import os

__all__ = ["resolution", "plan_warnings"]


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
    from manifesto.tasks.inputs.architecture import load_architecture
    from manifesto.tasks.inputs.images import load_images
    from manifesto.tasks.inputs.routing import load_routing_profile

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
        return resolve(spec.validated, cluster.profile, ctx)

    return files, run


def plan_warnings(plan, profile, tables=None) -> tuple[str, ...]:
    """The warnings of ``plan`` on the cluster ``profile``: which checks its resolution could not
    make, and why (a function of these values: the pair's outcome and its Artifact carry them
    as data, and the caller says them; nothing here writes to stderr)."""
    if tables is None:
        from manifesto.load.catalog import runtime_tables

        tables = runtime_tables()
    found = [_untabled(plan, tables)]
    if plan.routing is not None:
        from manifesto.tasks.inputs.images import load_images

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
