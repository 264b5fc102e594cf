"""out/'s sweep: what a build prunes from out/ (or ``--check`` reports), the artifacts no current
pair produces (a removed target's, a now-skipped pair's, one of another suffix), and what a
killed build left. Split from ``engine.Session``, which calls it after planning and executing."""

from __future__ import annotations

import manifesto.build_graph.outdir as outdir
from manifesto.tasks.status import Status

__all__ = ["sweep"]


def sweep(session) -> None:
    """Prune (a build that writes) or report (``--check``) the artifacts in out/ that no current
    pair produces, on ``session`` (``engine.Session``): its workspace, graph, records and mode."""
    artifacts, leftovers = outdir.scan(session.ws.out_dir)
    if session.write:
        for rel in leftovers:
            outdir.remove(session.ws.out_dir, rel)
        # the store's 256 folders only after a killed build (or when out/.cache shows one)
        outdir.remove_cache_leftovers(session.ws.cache_dir, session.ws.tasks_dir, shards=session.unfinished)
        session.cleaned = True
    expected, owners = _expected(session), None
    for rel in artifacts:
        if rel in expected:
            continue
        if owners is None:
            owners = {session.graph.out_base(p): p for p in session.graph.pairs()}
        why = _unwanted(session, rel, owners)
        if why is None:
            continue
        if session.write:
            outdir.remove(session.ws.out_dir, rel)
            session.stat.forget(session.ws.out_key(rel))
            session.pruned.append(f"out/{rel}")
        else:
            session.problems.append((f"out/{rel}", why))


def _expected(session) -> set:
    """The artifacts the records say out/ holds (each one's pair renders it): ``_unwanted``
    passes them, and a set lookup is all 6,000 of them cost at 10,000 pairs."""
    records, base, ok = session.state.pairs, session.graph.out_base, Status.OK
    expected = set()
    for pair in session.graph.pairs():
        rec = records.get(pair)
        if rec is not None and rec.status == ok:
            expected.add(base(pair) + rec.suffix)
    return expected


def _unwanted(session, rel: str, owners: dict) -> str | None:
    base, suffix = outdir.split_artifact(rel)
    pair = owners.get(base)
    if pair is None:
        return "not produced by any target (a stale artifact of a removed target)"
    rec = session.state.pairs.get(pair)
    if rec is None:
        return None
    if rec.status == Status.FAILED:
        return None  # keep the last good artifact until the pair renders again
    if rec.status == Status.SKIPPED:
        return f"stale: the pair is now skipped ({rec.reason})"
    if rec.suffix != suffix:
        return f"stale: the pair now renders out/{base}{rec.suffix}"
    return None
