"""The build's side of the one store (``out/.cache/tasks``): its bound, and keeping it.

The bound is ``MANIFESTO_STORE_LIMIT`` (handed down from the entry point's settings), else
BUILD.yaml's ``store_limit``, else ``store.DEFAULT_LIMIT``. After a build that rendered, the
store's size and entry count are estimated from the last measure the manifest keeps
(``BuildState.tasks``, ``BuildState.store``) and what the renders since may have added; only
past the bound is the store measured and pruned. ``engine.Session`` holds one of these
(``session.bound``) beside the graph, the remote cache and the report.
"""

from __future__ import annotations

__all__ = ["StoreBound"]

#: What one render is assumed to add to the store before the store was ever measured.
_PER_RENDER = 32 * 1024


class StoreBound:
    """The bound of the store of workspace ``ws``, with the manifest ``state`` (a
    ``state.BuildState``) that remembers its last measure; ``ui`` says what is kept over it."""

    __slots__ = ("ws", "state", "ui")

    def __init__(self, ws, state, ui) -> None:
        self.ws, self.state, self.ui = ws, state, ui

    def limit(self, setting: str | None = None) -> int:
        """The store's bound in bytes: ``setting`` (``MANIFESTO_STORE_LIMIT``'s text, handed down
        from the entry point's settings), else BUILD.yaml's ``store_limit``, else
        ``store.DEFAULT_LIMIT``. Raises BuildError naming a bad variable."""
        from manifesto.store import DEFAULT_LIMIT, ENV_LIMIT, env_limit

        try:
            value = env_limit({ENV_LIMIT: setting} if setting else {})
        except ValueError as exc:
            from manifesto.errors import BuildError

            raise BuildError(f"{ENV_LIMIT}: {exc}") from None
        if value is not None:
            return value
        config = self.state.buildfile.config if self.state.buildfile else None
        declared = (config or {}).get("store_limit")
        return declared if type(declared) is int and declared >= 0 else DEFAULT_LIMIT

    def keep(self, store, renders: int, limit: int) -> None:
        """Keep ``store`` within ``limit`` bytes and KEEP_FACTOR x the pairs' entries after
        ``renders`` renders. Both are estimated from the last measure and what the renders
        since may have added; past either, the store is measured and its least recently used
        entries go, down to LOW_WATER of the bound, never an entry a pair's record names (nor
        its products and texts)."""
        from manifesto.store import KEEP_FACTOR

        pairs = self.state.pairs
        count = self.state.tasks
        count = (count if type(count) is int else 0) + 3 * renders  # a render stores its result, Plan and artifact
        size, per_render = _estimate(self.state.store)
        size += renders * per_render
        most = KEEP_FACTOR * max(len(pairs), 64)
        if count > most or size > limit:
            pruned = self.prune(store, {rec.key for rec in pairs.values()}, limit, most // 2)
            count, size = pruned.entries, pruned.bytes
            per_render = max(1024, pruned.live // max(1, len(pairs)))
        self.state.tasks = count
        self.state.store = (size, per_render)

    def prune(self, store, keep: set, limit: int, most: int | None = None):
        """Prune ``store`` to LOW_WATER of ``limit`` bytes (and ``most`` entries), keeping
        ``keep`` and what it holds; says so when the kept entries alone are over the bound."""
        from manifesto.store import ENV_LIMIT, LOW_WATER

        pruned = store.prune(keep, max_bytes=int(limit * LOW_WATER), max_entries=most)
        if pruned.live > limit:
            self.ui.warn(f"{self.ws.show(self.ws.tasks_dir)}: the entries of the last build take {_mib(pruned.live)}, "
                         f"over the store's bound of {_mib(limit)}; they are kept (raise store_limit in "
                         f"BUILD.yaml or {ENV_LIMIT})")
        return pruned


def _estimate(value) -> tuple[int, int]:
    """``(bytes, bytes per render)`` the manifest remembers of the store (a committed or
    planted manifest may hold anything: then nothing is known)."""
    if type(value) is tuple and len(value) == 2 and all(type(v) is int and v >= 0 for v in value):
        return value
    return 0, _PER_RENDER


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"
