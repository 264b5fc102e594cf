"""Saving the build manifest (out/.cache/state): at the end of a build, now and then during a
long one, and after a no-op that refreshed the stat cache when no other build interferes.

A save writes the whole manifest (``state.save_state``). Only a build that may have left
records or stat entries nothing refers to goes over them first (``tidy``).
"""

from __future__ import annotations

import os
import time

import manifesto.build_graph.outdir as outdir
from manifesto.build_graph.planning import artifact_key
from manifesto.build_graph.state import save_state
from manifesto.build_graph.workspace import BUILD_FILE
from manifesto.edge.signatures import signature
from manifesto.tasks.status import Status

__all__ = ["Autosave", "save", "save_opportunistically"]

_SAVE_EVERY_NS = 2_000_000_000  # a long build saves its manifest this often, at least
_SAVE_SHARE = 50  # ... and waits at least this many times what the last save took


def save(ws, state, stat, graph, tidy: bool) -> None:
    """Save the manifest ``state`` of workspace ``ws``. With ``tidy`` (the targets, their
    files or the code changed, or a record names other inputs or another artifact than
    before), first drop the records of pairs ``graph`` no longer has and the ``stat`` entries
    nothing refers to: a build that re-renders a few pairs of 10,000 does not go over every
    record for nothing."""
    if tidy:
        pairs = set(graph.pairs())
        state.pairs = {p: r for p, r in state.pairs.items() if p in pairs}
        stat.keep_only(_referenced(ws, state, graph))
    save_state(ws.state_path, state)


def _referenced(ws, state, graph) -> set:
    """The stat-cache keys the manifest refers to: BUILD.yaml, the code's files, every
    record's inputs and every artifact a pair's record says it rendered."""
    keys = {BUILD_FILE}
    if state.code:
        keys.update(state.code.keys)
    for pair, rec in state.pairs.items():
        keys.update(rec.inputs)
        if rec.status == Status.OK:
            keys.add(artifact_key(ws, graph, pair, rec.suffix))
    return keys


def save_opportunistically(ws, state, state_sig, worth: bool) -> None:
    """After a no-op, keep refreshed cache entries (``worth``: the stat cache or cached
    listings changed) if no other build interferes: out/ exists, the lock is free and the
    manifest on disk still has the signature ``state_sig`` it had when it was read."""
    if not worth or not os.path.isdir(ws.out_dir):
        return
    lock = outdir.BuildLock(ws.lock_path)
    if not lock.acquire(blocking=False):
        return
    try:
        if signature(ws.state_path) == state_sig:
            save_state(ws.state_path, state)
    finally:
        lock.release()


class Autosave:
    """A long build's saves of the manifest ``state`` to ``path``, every few seconds: a killed
    build keeps its work. A save costs about what the manifest holds (the records rendered
    since the last one are made plain, the whole is written), so the interval grows with it:
    saves take at most about 2% of the build (at 10,000 pairs a save takes some 15 ms, every
    2 s). The interval starts when the object is made."""

    __slots__ = ("path", "state", "every_ns", "saved_ns")

    def __init__(self, path: str, state) -> None:
        self.path, self.state = path, state
        self.every_ns = _SAVE_EVERY_NS
        self.saved_ns = time.monotonic_ns()

    def now_and_then(self) -> None:
        """Save when the interval since the last save has passed."""
        if time.monotonic_ns() - self.saved_ns > self.every_ns:
            start = time.monotonic_ns()
            save_state(self.path, self.state)
            self.saved_ns = time.monotonic_ns()
            self.every_ns = max(_SAVE_EVERY_NS, _SAVE_SHARE * (self.saved_ns - start))
