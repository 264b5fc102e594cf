"""Hermetic build graph: BUILD.yaml targets, render tasks whose results go to the one store, ``out/``.

Mechanism only; the renderer is injected (``renderer.py``). Modules, bottom up:

    statcache          the stat cache (signatures and digests: manifesto.edge.signatures)
    state              the build manifest in out/.cache/state (stdlib marshal)
    (manifesto.store)  render outcomes in out/.cache/tasks, the one store (msgspec)
    store_bound        the store's bound and keeping it (MANIFESTO_STORE_LIMIT, store_limit)
    buildfile, globs   BUILD.yaml and its source globs
    sources            the graph of one look at the workspace (BUILD.yaml, listing, as cached)
    graph, addresses   targets, pairs and the addresses that name them
    select, changes    which pairs a request names; ``--changed-since``
    planning           stale or fresh: each selected pair classified from the manifest
    executor           renders in-process or in worker processes
    jobs               the job (task and request) of a pair the build evaluates
    saving             saving the manifest (at the end, now and then, after a no-op)
    engine, report     plan, lock, execute, report, save; and what happened
    api                library entry points (their argparse commands: ``manifesto.cli.build_cmds``)
    scaffold           the files of a new workspace (``manifesto init``)

Importing this package is cheap; the names below load on first use.
"""

from __future__ import annotations

__all__ = ["artifact_for", "build", "clean", "deps", "dependents", "list_targets", "matrix", "target_path"]


def __getattr__(name: str):
    if name in __all__:
        import manifesto.build_graph.api as api

        return getattr(api, name)
    raise AttributeError(f"module 'manifesto.build_graph' has no attribute {name!r}")
