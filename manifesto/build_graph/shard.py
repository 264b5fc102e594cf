"""``--shard I/N``: a deterministic split of a build's pairs between N runners.

Pairs are sorted by (model path, cluster) and dealt out in turn, so the shards differ in size
by at most one pair and every runner computes the same split from the same BUILD.yaml. The
union of the N shards is exactly the unsharded selection.
"""

from __future__ import annotations

import re

__all__ = ["parse_shard", "pick"]

_SHARD = re.compile(r"([0-9]{1,6})/([0-9]{1,6})\Z")


def parse_shard(text: str) -> tuple[int, int]:
    """``(i, n)`` of ``I/N`` with 1 <= I <= N (the spelling Pants uses, counted from 1)."""
    from manifesto.errors import BuildError

    m = _SHARD.fullmatch(text.strip()) if text.isascii() else None
    if m is None or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise BuildError(f"--shard: expected I/N with 1 <= I <= N (e.g. 1/4), got {text!r}")
    return int(m.group(1)), int(m.group(2))


def pick(pairs, shard: tuple[int, int] | None) -> list:
    """The pairs of shard ``(i, n)``: every n-th of the sorted pairs, starting at the i-th."""
    ordered = sorted(pairs)
    if shard is None:
        return ordered
    i, n = shard
    return ordered[i - 1::n]
