"""A build's plan: the selected pairs, each classified from the manifest alone.

Planning reads the manifest (``state.BuildState``), the stat cache, the graph and the code
fingerprint; it renders nothing, imports no renderer and writes nothing. Each pair becomes
an :class:`Item` whose ``kind`` says what the build must do for it (``Need``): nothing
(fresh, or settled as skipped or failed with unchanged inputs), restore its artifact, or
evaluate it. :func:`needs_lock` then says whether the build has anything to do under the
lock. ``engine`` runs both before it executes anything.
"""

from __future__ import annotations

import os

import manifesto.build_graph.outdir as outdir
from manifesto.build_graph.state import PairContext
from manifesto.tasks.status import Need, Source, Status

__all__ = ["Item", "artifact_key", "artifact_rel", "needs_lock", "plan"]


class Item:
    """One selected pair through the build: its old record and its fate."""

    __slots__ = ("pair", "explicit", "context", "old", "kind", "status", "message",
                 "suffix", "art_digest", "how", "wrote", "why")

    def __init__(self, pair, explicit: bool, context: PairContext, old) -> None:
        self.pair, self.explicit, self.context, self.old = pair, explicit, context, old
        self.kind: Need = Need.STALE  # what the build must do for it (decided by plan)
        self.status: Status | str = ""  # its outcome once settled ("" until then)
        self.message: str = ""
        self.suffix: str = ""
        self.art_digest: str = ""
        self.how: Source = Source.RECORD  # where the outcome came from (set by settle)
        self.wrote: bool = False
        self.why: str = ""  # what changed since the last build, when the pair must be evaluated

    def settle(self, status, suffix="", art_digest="", message="", how=Source.RECORD) -> None:
        self.status, self.suffix, self.art_digest, self.message, self.how = status, suffix, art_digest, message, how


def artifact_rel(graph, pair, suffix: str) -> str:
    """The path below out/ of ``pair``'s artifact with ``suffix``."""
    return graph.out_base(pair) + suffix


def artifact_key(ws, graph, pair, suffix: str) -> str:
    """The stat-cache key of ``pair``'s artifact with ``suffix``."""
    return ws.out_key(artifact_rel(graph, pair, suffix))


def plan(request, ws, graph, state, stat, code) -> list[Item]:
    """The pairs ``request`` (an ``engine.BuildRequest``) selects in workspace ``ws``, each
    classified from the manifest ``state`` and the stat cache ``stat`` alone. ``code`` gives
    the code fingerprint; it is asked for once the changed files are known, so a bad
    ``--changed-since`` revision is the error a build reports first."""
    from manifesto.build_graph.select import select_pairs

    changed = _changed_keys(ws, stat, request.changed_since) if request.changed_since else None
    fingerprint = code()
    code_keys = state.code.keys if fingerprint and state.code else ()
    pairs, explicit = select_pairs(graph, state, request.addresses, request.clusters, changed, code_keys)
    if request.shard is not None:
        from manifesto.build_graph.shard import likely_renderable, pick

        pairs = pick(pairs, request.shard, likely_renderable(graph))
    records, options = state.pairs, graph.model_options
    # one context per model (its pairs share it): not a named tuple made for each of 10,000 pairs
    contexts = {model: PairContext(fingerprint, options[model]) for model in {p[0] for p in pairs}}
    items = [Item(p, p in explicit, contexts[p[0]], records.get(p)) for p in pairs]
    current = _current_digests(stat, items)
    for item in items:
        _classify(item, request.mode, current, stat.digest, ws, graph)
    return items


def _current_digests(stat, items: list[Item]) -> dict:
    """The digest of every file the selected pairs last read (each file once)."""
    digest = stat.digest
    keys = {k for item in items if item.old is not None for k in item.old.inputs}
    return {k: digest(k) for k in keys}


def _changed_keys(ws, stat, rev: str) -> set:
    from manifesto.build_graph.changes import changed_files

    return {stat.key(p) for p in changed_files(ws.root, rev)}


def _classify(item: Item, mode: str, current: dict, digest, ws, graph) -> None:
    """Settle ``item`` from its record when nothing it read has changed (``digest``: the
    stat cache's, for its artifact in out/)."""
    rec = item.old
    if rec is None or rec.digests is None or rec.context != item.context:
        item.why = _why_context(rec, item.context)
        return
    if tuple(map(current.__getitem__, rec.inputs)) != rec.digests:
        item.why = _why_inputs(rec, current)
        return
    if rec.status != Status.OK:  # skipped, or failed with known inputs
        item.kind = Need.SETTLED
        item.settle(rec.status, message=rec.reason)
        return
    item.settle(Status.OK, rec.suffix, rec.art_digest)
    if mode == "plan" or digest(artifact_key(ws, graph, item.pair, rec.suffix)) == rec.art_digest:
        item.kind = Need.FRESH
    else:
        item.kind = Need.MISMATCH if mode == "check" else Need.RESTORE
        item.why = f"out/{artifact_rel(graph, item.pair, rec.suffix)} was missing or not what the build wrote"


def _why_context(rec, context: PairContext) -> str:
    """Why a pair without a usable record, or with another code or options, is evaluated."""
    if rec is None:
        return "not built before"
    if rec.digests is None:
        return "an input changed while the last build read it"
    if type(rec.context) is not PairContext:  # a planted or damaged record
        return "its last record is not one a build wrote"
    reasons = []
    if rec.context.code != context.code:
        reasons.append("the code changed")
    if rec.context.options != context.options:
        from manifesto.build_graph.renderer import OPTION_FIELDS

        changed = [n for n, a, b in zip(OPTION_FIELDS, rec.context.options, context.options) if a != b]
        reasons.append("options changed: " + ", ".join(changed) if changed else "its options changed")
    return "; ".join(reasons)


def _why_inputs(rec, current: dict) -> str:
    """The input files whose bytes differ from what the pair's last render read."""
    changed = [key + (" removed" if current[key] is None else " changed")
               for key, was in zip(rec.inputs, rec.digests) if current[key] != was]
    return ", ".join(changed)


def needs_lock(items: list[Item], mode: str, ws, graph, graph_changed: bool) -> bool:
    """Whether a request of ``mode`` with these planned ``items`` has anything to render,
    restore, prune or record (``graph_changed``: the targets or options may differ from the
    manifest's)."""
    if any(i.kind in (Need.STALE, Need.RESTORE) for i in items):
        return True
    if mode != "write":
        return False
    return (graph_changed or _skipped_leftovers(items, ws, graph) or outdir.has_leftovers(ws.cache_dir)
            or outdir.unfinished(ws.lock_path))


def _skipped_leftovers(items: list[Item], ws, graph) -> bool:
    """Whether out/ holds an artifact of a pair the manifest says is skipped. Each out/
    directory is listed once, not stat'ed twice per skipped pair; a name found there is
    then checked as before (a dangling link is no artifact)."""
    listings: dict = {}
    out = os.path.join(ws.out_dir, "")
    for item in items:
        if item.kind != Need.SETTLED or item.status != Status.SKIPPED:
            continue
        folder, _, name = graph.out_base(item.pair).rpartition("/")
        names = listings.get(folder)
        if names is None:
            names = listings[folder] = outdir.names_in(out + folder)
        for suffix in outdir.SUFFIXES:
            if (names is False or name + suffix in names) and os.path.exists(f"{out}{folder}/{name}{suffix}"):
                return True
    return False
