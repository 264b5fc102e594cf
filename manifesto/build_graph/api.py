"""Library entry points of the build graph; the CLI handlers call one each.

Every function finds the workspace from ``root`` (default: the working directory
or the nearest parent holding BUILD.yaml) and raises ``ManifestoError``s.
"""

from __future__ import annotations

import os

from manifesto.build_graph.report import ConsoleUI
from manifesto.build_graph.workspace import find_workspace, wrong_type

__all__ = ["artifact_for", "build", "deployment", "clean", "collect_garbage", "deps", "dependents", "list_targets", "matrix",
           "matrix_and_shards", "shards", "target_path"]


def _setup(root, renderer, ui):
    from manifesto.build_graph.renderer import renderer_name

    return find_workspace(root), renderer or renderer_name(os.environ), ui or ConsoleUI()


def _graph(ws):
    """The graph of workspace ``ws`` (looking at targets only: the engine is not imported)."""
    from manifesto.build_graph.sources import workspace_graph

    return workspace_graph(ws, ConsoleUI().warn)


#: ``store.ENV_LIMIT``, named here so that a no-op build does not import the store to read it.
STORE_LIMIT_VARIABLE = "MANIFESTO_STORE_LIMIT"


def _store_limit() -> str | None:
    """``MANIFESTO_STORE_LIMIT`` as the process environment sets it: read here, at the entry
    point, and handed down (the engine reads no environment)."""
    return os.environ.get(STORE_LIMIT_VARIABLE)


def build(addresses, *, check=False, root=None, renderer=None, ui=None, render=None, **selection):
    """Build (or with ``check``, verify) the pairs ``addresses`` name; returns a ``Report``.
    ``selection``: the keywords of ``engine.BuildRequest`` that narrow and run the build:
    ``clusters`` (a cluster filter), ``changed_since`` (a git revision), ``jobs``, ``shard``
    (``(i, n)``, this runner's share of the pairs) and ``remote`` (a ``remote.RemoteSettings``;
    None: BUILD.yaml's ``remote_cache``, if any); any other keyword is a TypeError. ``root``,
    ``renderer`` and ``ui``: the workspace, the renderer module and the progress display
    (defaults: found from the working directory, the product's renderer, the console);
    ``render``: a test's stand-in render function."""
    from manifesto.build_graph.engine import BuildRequest, run

    ws, renderer, ui = _setup(root, renderer, ui)
    selection.setdefault("store_limit", _store_limit())
    request = BuildRequest(addresses, mode="check" if check else "write", **selection)
    return run(request, ws, renderer, ui, render)[0]


def list_targets(addresses, *, root=None) -> list:
    """The targets ``addresses`` name, sorted by address (no render, no renderer import)."""
    from manifesto.build_graph.addresses import match, parse_address

    graph = _graph(find_workspace(root))
    found = {t.address: t for a in addresses for t in match(parse_address(a), graph)}
    return [found[a] for a in sorted(found)]


def deployment(address: str, *, root=None):
    """``(Deployment, render options, workspace, cluster file)`` of the deployment target
    ``address`` (the cluster file relative to the workspace root)."""
    from manifesto.build_graph.addresses import match, parse_address
    from manifesto.errors import BuildError

    ws = find_workspace(root)
    graph = _graph(ws)
    targets = match(parse_address(address), graph)
    if len(targets) != 1 or targets[0].kind != "deployment":
        names = ", ".join(sorted(graph.deployments)) or "none in BUILD.yaml"
        what = f"a {targets[0].kind} target" if len(targets) == 1 else f"{len(targets)} targets"
        raise BuildError(f"{address} is {what}, not a deployment target (deployment targets: {names}); "
                         "a deployment target (`kind: deployment` in BUILD.yaml) fixes the cluster, namespace, "
                         "user and kube context it is deployed with")
    dep = graph.deployments[targets[0].path]
    return dep, graph.options(targets[0].path), ws, graph.clusters[dep.cluster].path


def target_path(address: str, *, root=None):
    """The file of the one target ``address`` names (for commands that take a spec
    or cluster path, such as ``render manifest``). Raises BuildError otherwise."""
    from pathlib import Path

    from manifesto.errors import BuildError

    targets = list_targets([address], root=root)
    if len(targets) != 1:
        raise BuildError(f"{address} names {len(targets)} targets; expected one")
    if targets[0].kind == "deployment":
        raise BuildError(f"{address} is a deployment target, not a file: `manifesto build {address}` writes its "
                         f"artifact, which `manifesto deploy {address}` applies")
    if targets[0].kind in ("monitoring", "gitops"):
        raise BuildError(f"{address} is a {targets[0].kind} target, not a file: `manifesto build {address}` "
                         "writes its artifact")
    return Path(find_workspace(root).root) / targets[0].path


def _plan(addresses, clusters=(), changed_since=None, jobs=None, root=None, renderer=None, ui=None):
    from manifesto.build_graph.engine import BuildRequest, run

    ws, renderer, ui = _setup(root, renderer, ui)
    request = BuildRequest(addresses, clusters, changed_since, "plan", jobs)
    return run(request, ws, renderer, ui)


def shards(addresses, n: int, *, clusters=(), changed_since=None, jobs=None, root=None, renderer=None,
           ui=None) -> list[dict]:
    """``{"shard": "I/N", "pairs": K}`` for each shard of ``build --shard I/N`` that holds a
    renderable pair, K counting only those (skipped and failed pairs are no work for CI).
    The split is the build's own: ``shard.split`` over the same selected pairs."""
    return matrix_and_shards(addresses, n, clusters=clusters, changed_since=changed_since, jobs=jobs, root=root,
                             renderer=renderer, ui=ui)[1]


def matrix(addresses, *, clusters=(), changed_since=None, jobs=None, root=None, renderer=None, ui=None) -> list[dict]:
    """One row per selected pair: model address, cluster, status ("ok", "skipped",
    "failed"), artifact path and, unless ok, the reason."""
    return matrix_and_shards(addresses, None, clusters=clusters, changed_since=changed_since, jobs=jobs, root=root,
                             renderer=renderer, ui=ui)[0]


def matrix_and_shards(addresses, n: int | None, *, clusters=(), changed_since=None, jobs=None, root=None,
                      renderer=None, ui=None) -> tuple[list[dict], list[dict]]:
    """``matrix``'s rows and, with ``n``, ``shards``' rows, from one plan."""
    from manifesto.build_graph.shard import label, likely_renderable, split

    report, session = _plan(addresses, clusters, changed_since, jobs, root, renderer, ui)
    rows = []
    for item, row in zip(report.items, report.rows):
        entry = {"model": row["model"], "cluster": row["cluster"], "status": item.status}
        if item.status == "ok":
            entry["artifact"] = row["artifact"]
        else:
            entry["reason"] = item.message
        rows.append(entry)
    if n is None:
        return rows, []
    ok = {item.pair for item in report.items if item.status == "ok"}
    parts = []
    for i, part in enumerate(split([item.pair for item in report.items], n, likely_renderable(session.graph)), 1):
        count = sum(1 for pair in part if pair in ok)
        if count:
            parts.append({"shard": label(i, n), "pairs": count})
    return rows, parts


def deps(address: str, *, clusters=(), jobs=None, root=None, renderer=None, ui=None) -> dict:
    """``{(model address, cluster): [files read]}`` for the pairs ``address`` names."""
    report, session = _plan([address], clusters, None, jobs, root, renderer, ui)
    out = {}
    for item in report.items:
        rec = session.state.pairs.get(item.pair)
        if rec is not None and item.status != "failed":
            out[(session.graph.address(item.pair[0]), item.pair[1])] = sorted(rec.inputs)
    _raise_failures(report)
    return out


def dependents(path: str, *, jobs=None, root=None, renderer=None, ui=None) -> list[dict]:
    """The artifacts ``path`` feeds: ``[{"model", "cluster", "artifact"}]``, sorted."""
    report, session = _plan(["//::"], (), None, jobs, root, renderer, ui)
    key = session.stat.key(os.path.realpath(path))
    code = session.state.code.keys if session.state.code else ()
    everything = key == "BUILD.yaml" or key in code
    rows = []
    for item, row in zip(report.items, report.rows):
        rec = session.state.pairs.get(item.pair)
        if item.status == "ok" and rec is not None and (everything or key in rec.inputs):
            rows.append({"model": row["model"], "cluster": row["cluster"], "artifact": row["artifact"]})
    return sorted(rows, key=lambda r: r["artifact"])


def _raise_failures(report) -> None:
    """Raise the first render error among the report's pairs (incompatible ones are fine)."""
    from manifesto.errors import BuildError

    for item, row in zip(report.items, report.rows):
        if item.status == "failed":
            raise BuildError(f"{row['model']} @ {row['cluster']}: {item.message}")


def artifact_for(address_or_path: str, cluster: str, *, root=None, renderer=None, ui=None):
    """The ``out/`` artifact of one model target against one cluster, rebuilt if stale.

    ``address_or_path`` names exactly one model target (``//models/qwen:aggregated``
    or ``models/qwen/aggregated.yaml``). Raises ``IncompatiblePairError`` when the
    spec cannot run on the cluster and ``BuildError`` when the render fails.
    """
    from pathlib import Path

    from manifesto.errors import BuildError, IncompatiblePairError

    targets = list_targets([address_or_path], root=root)
    if len(targets) != 1 or targets[0].kind != "model":
        found = (f"names {len(targets)} targets" if len(targets) != 1
                 else f"names a {targets[0].kind} target")
        raise BuildError(f"'{address_or_path}' {found}; expected one model target")
    report = build([targets[0].address], clusters=[cluster], root=root, renderer=renderer, ui=ui)
    item, row = report.items[0], report.rows[0]
    if item.status == "skipped":
        raise IncompatiblePairError(item.message)
    if row["status"] == "failed":
        raise BuildError(f"{row['model']} @ {row['cluster']}: {item.message}")
    return Path(find_workspace(root).root) / row["artifact"]


def clean(*, artifacts: bool = False, root=None) -> list[str]:
    """Remove ``out/.cache`` (and with ``artifacts``, every artifact); returns what went."""
    import manifesto.build_graph.outdir as outdir
    from manifesto.edge.fs import remove_tree

    ws = find_workspace(root)
    removed = []
    for path, is_dir in ((ws.out_dir, True), (ws.lock_path, False)):
        problem = wrong_type(path, is_dir)
        if problem:
            from manifesto.errors import BuildError

            raise BuildError(f"{ws.show(path)} {problem}; remove it")
    with outdir.BuildLock(ws.lock_path, ConsoleUI().wait):
        # a link where the cache belongs goes as a link; inside, nothing is followed
        if remove_tree(ws.root, ws.cache_dir):
            removed.append("out/.cache")
        if artifacts:
            found, leftovers = outdir.scan(ws.out_dir)
            for rel in found + leftovers:
                outdir.remove(ws.out_dir, rel)
                removed.append(f"out/{rel}")
    return removed


def collect_garbage(*, root=None, ui=None) -> dict:
    """Bring the build's store (``out/.cache/tasks``) within its bound (``MANIFESTO_STORE_LIMIT``,
    else BUILD.yaml's ``store_limit``, else the default): its least recently used entries go,
    never one the last build's pairs use. Returns what it holds and what went (bytes and counts)."""
    import manifesto.build_graph.outdir as outdir
    from manifesto.build_graph.engine import Session
    from manifesto.store import Store
    from manifesto.tasks import entries

    ws, renderer, ui = _setup(root, None, ui)
    for path, is_dir in ((ws.out_dir, True), (ws.lock_path, False)):
        problem = wrong_type(path, is_dir)
        if problem:
            from manifesto.errors import BuildError

            raise BuildError(f"{ws.show(path)} {problem}; remove it")
    with outdir.BuildLock(ws.lock_path, ui.wait):
        session = Session(ws, renderer, ui)  # the records of the last build, BUILD.yaml's bound
        limit = session.bound.limit(_store_limit())
        entries.install()  # the codecs of the build's entries
        session.tasks = Store(ws.tasks_dir, ui.warn, root=ws.root)
        pruned = session.bound.prune(session.tasks, {rec.key for rec in session.state.pairs.values()}, limit)
    return {"removed": pruned.removed, "freed_bytes": pruned.freed, "entries": pruned.entries,
            "bytes": pruned.bytes, "live_bytes": pruned.live, "limit_bytes": limit}

