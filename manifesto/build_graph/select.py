"""Which (model, cluster) pairs a request names, and which of them are explicit.

A model target selects its pairs, a cluster target every pair rendered against it,
a routing target every pair whose last render read it. A pair is *explicit* when
its model was named by a single-target address and its cluster by ``--cluster`` or
a single-target address, and always for a deployment target: an incompatible explicit
pair is an error, not a skip.
"""

from __future__ import annotations

from manifesto.build_graph.addresses import match, parse_address
from manifesto.build_graph.state import BuildState

__all__ = ["select_pairs"]


def select_pairs(graph, state: BuildState, addresses, clusters=(), changed=None, code_keys=()):
    """``(pairs, explicit)``: sorted pairs and the set of explicit ones.

    ``changed`` is a set of stat-cache keys (``--changed-since``) or None.
    """
    pairs: set = set()
    models, named_clusters = set(), set()
    routing = []
    for text in addresses:
        spec = parse_address(text)
        single = spec.single
        for target in match(spec, graph):
            if target.kind == "routing":
                routing.append(target)
                continue
            pairs |= _pairs_of(target, graph)
            if single and target.kind == "model":
                models.add(target.path)
            elif single and target.kind == "cluster":
                named_clusters.add(target.name)
    if routing:
        pairs |= _readers(routing, graph, state, pairs)
    if clusters:
        wanted = _cluster_names(clusters, graph)
        _check_declared(models, wanted, graph)
        pairs = {p for p in pairs if p[1] in wanted}
        named_clusters |= wanted
    if changed is not None:
        pairs = _changed(pairs, graph, state, changed, code_keys)
    # A deployment names its one cluster itself: it cannot be skipped, only fail.
    explicit = {p for p in pairs if (p[0] in models and p[1] in named_clusters) or p[0] in graph.deployments
                or p[0] in graph.monitors or p[0] in graph.gitops}
    return sorted(pairs), explicit


def _pairs_of(target, graph) -> set:
    if target.kind in ("model", "deployment", "monitoring", "gitops"):
        return {(target.path, c) for c in graph.model_clusters[target.path]}
    return {(m, target.name) for m, cs in graph.model_clusters.items() if target.name in cs}


def _readers(routing: list, graph, state: BuildState, chosen: set) -> set:
    """Pairs (not yet chosen) whose last render read one of the ``routing`` targets."""
    paths = [t.path for t in routing]
    return {p for p in graph.pairs() if p not in chosen and any(_may_read(state, p, x, graph) for x in paths)}


def _may_read(state: BuildState, pair, path: str, graph) -> bool:
    rec = state.pairs.get(pair)
    if rec is None:
        return True
    return path in rec.inputs or graph.options(pair[0])["routing_profile"] == path


def _cluster_names(clusters, graph) -> set:
    from manifesto.errors import BuildError, did_you_mean

    names = set()
    for text in clusters:
        if text in graph.clusters:
            names.add(text)
            continue
        try:
            hits = [t for t in match(parse_address(text), graph) if t.kind == "cluster"]
        except BuildError:
            hits = []
        if not hits:
            raise BuildError(f"--cluster: unknown cluster '{text}'{did_you_mean(text, graph.clusters)}")
        names.update(t.name for t in hits)
    return names


def _check_declared(models: set, clusters: set, graph) -> None:
    from manifesto.errors import BuildError

    for model in sorted(models):
        missing = sorted(clusters - set(graph.model_clusters[model]))
        if missing:
            declared = ", ".join(graph.model_clusters[model]) or "none"
            raise BuildError(
                f"{graph.address(model)} is not built for cluster {', '.join(missing)} "
                f"(BUILD.yaml gives it: {declared})"
            )


def _changed(pairs: set, graph, state: BuildState, changed: set, code_keys) -> set:
    if "BUILD.yaml" in changed or changed.intersection(code_keys):
        return pairs
    keep = set()
    for pair in pairs:
        rec = state.pairs.get(pair)
        own = {graph.source(pair[0]), graph.clusters[pair[1]].path}
        if rec is None or rec.digests is None or not changed.isdisjoint(own.union(rec.inputs)):
            keep.add(pair)
    return keep
