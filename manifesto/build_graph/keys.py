"""Cache keys: a digest of exactly what a task read and was told.

A pair's key covers the pair itself, its context (the code fingerprint and the
render options) and the path and digest of every file the render read. Paths are
root-relative where possible, so two checkouts of one commit share keys.
"""

from __future__ import annotations

from manifesto.digest import digest

__all__ = ["task_key"]

_TASK = "manifesto-build-task/1"


def task_key(pair: tuple[str, str], context: tuple, inputs, digests) -> str:
    """The key of rendering ``pair`` in ``context`` from ``inputs`` with ``digests``."""
    lines = [_TASK, pair[0], pair[1], repr(context)]
    lines += sorted(f"{p}\0{d}" for p, d in zip(inputs, digests))
    return digest("\n".join(lines).encode())
