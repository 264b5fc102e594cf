"""``--shard I/N`` and ``matrix --shards N``: one deterministic split of a build's pairs
between N runners.

Pairs are sorted by (model path, cluster) and dealt out in turn, so the shards differ in size
by at most one pair and every runner computes the same split from the same BUILD.yaml. The
union of the N shards is exactly the unsharded selection. ``build --shard`` and ``matrix
--shards`` both go through :func:`split`, and both accept N up to :data:`MAX_SHARDS`, so
every shard the matrix prints is one the build takes.
"""

from __future__ import annotations

import re

__all__ = ["MAX_SHARDS", "parse_shard", "parse_count", "split", "pick", "label"]

#: The most shards a build is split into: GitHub Actions runs at most 256 jobs of one matrix,
#: and more runners than that would each get a handful of pairs.
MAX_SHARDS = 256

_SHARD = re.compile(r"([0-9]{1,30})/([0-9]{1,30})\Z")  # bounded: int() of 4,300 digits raises
_COUNT = re.compile(r"[0-9]{1,30}\Z")


def parse_shard(text: str) -> tuple[int, int]:
    """``(i, n)`` of ``I/N`` with 1 <= I <= N <= MAX_SHARDS (the spelling Pants uses, counted from 1)."""
    from manifesto.errors import BuildError, printable

    m = _SHARD.fullmatch(text.strip()) if text.isascii() else None
    if m is None or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise BuildError(f"--shard: expected I/N with 1 <= I <= N (e.g. 1/4), got '{printable(text)[:40]}'")
    if int(m.group(2)) > MAX_SHARDS:
        raise BuildError(f"--shard: {text.strip()} asks for {int(m.group(2))} shards; at most {MAX_SHARDS} "
                         f"(N <= {MAX_SHARDS})")
    return int(m.group(1)), int(m.group(2))


def parse_count(text: str) -> int:
    """N of ``matrix --shards N``: 1 <= N <= MAX_SHARDS, the shards ``build --shard`` takes."""
    from manifesto.errors import BuildError, printable

    m = _COUNT.fullmatch(text.strip()) if text.isascii() else None
    if m is None or int(m.group(0)) < 1:
        raise BuildError(f"--shards: expected a number of shards from 1 to {MAX_SHARDS}, got "
                         f"'{printable(text)[:40]}'")
    count = int(m.group(0))
    if count > MAX_SHARDS:
        raise BuildError(f"--shards: {count} shards asked for; at most {MAX_SHARDS} (`build --shard I/N` takes "
                         f"N <= {MAX_SHARDS}; GitHub Actions runs at most 256 jobs of one matrix)")
    return count


def split(pairs, n: int) -> list[list]:
    """The sorted ``pairs`` dealt out to ``n`` shards: ``split(pairs, n)[i - 1]`` is shard
    ``i/n``. One pass over the pairs, whatever ``n``."""
    if not 1 <= n <= MAX_SHARDS:
        raise ValueError(f"shard count {n} out of range 1..{MAX_SHARDS}")
    shards: list[list] = [[] for _ in range(n)]
    for k, pair in enumerate(sorted(pairs)):
        shards[k % n].append(pair)
    return shards


def pick(pairs, shard: tuple[int, int] | None) -> list:
    """The pairs of shard ``(i, n)`` (all of them, sorted, without a shard)."""
    if shard is None:
        return sorted(pairs)
    i, n = shard
    return split(pairs, n)[i - 1]


def label(i: int, n: int) -> str:
    """How ``build --shard`` is told shard ``i`` of ``n``."""
    return f"{i}/{n}"
