"""``--shard I/N`` and ``matrix --shards N``: one deterministic split of a build's pairs
between N runners.

Pairs are sorted by (model path, cluster) and dealt out in turn, the pairs that will render
first and the pairs that will be skipped after them, so the shards' renderable pairs differ in
number by at most one (a skipped pair is no work, and one shard must not get the work of two).
Which pairs will be skipped is judged from the files alone, the way resolve judges it
(:func:`likely_renderable`), so every runner computes the same split from the same tree before
it renders anything. The union of the N shards is exactly the unsharded selection.
``build --shard`` and ``matrix --shards`` both go through :func:`split`, and both accept N up
to :data:`MAX_SHARDS`, so every shard the matrix prints is one the build takes.
"""

from __future__ import annotations

import re

__all__ = ["MAX_SHARDS", "parse_shard", "parse_count", "split", "pick", "label", "likely_renderable"]

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


def split(pairs, n: int, renderable=None) -> list[list]:
    """The sorted ``pairs`` dealt out to ``n`` shards: ``split(pairs, n)[i - 1]`` is shard
    ``i/n``. With ``renderable`` (a pair -> bool), the pairs it accepts are dealt first and the
    others after them. One pass over the pairs, whatever ``n``."""
    if not 1 <= n <= MAX_SHARDS:
        raise ValueError(f"shard count {n} out of range 1..{MAX_SHARDS}")
    ordered = sorted(pairs)
    if renderable is not None:
        flags = [bool(renderable(p)) for p in ordered]
        ordered = [p for p, ok in zip(ordered, flags) if ok] + [p for p, ok in zip(ordered, flags) if not ok]
    shards: list[list] = [[] for _ in range(n)]
    for k, pair in enumerate(ordered):
        shards[k % n].append(pair)
    return [sorted(part) for part in shards]


def pick(pairs, shard: tuple[int, int] | None, renderable=None) -> list:
    """The pairs of shard ``(i, n)`` (all of them, sorted, without a shard)."""
    if shard is None:
        return sorted(pairs)
    i, n = shard
    return split(pairs, n, renderable)[i - 1]


def likely_renderable(graph):
    """pair -> whether it will render rather than be skipped, judged as resolve judges it: the
    accelerator the pair's options, else its spec (with its extends), else the cluster's default
    names must be a profile of the cluster. Read from the files (each once, confined to the
    workspace and the bundled catalog, under the loader's limits); a file that cannot be read
    counts as renderable, and the render then says what is wrong with it. Only the split
    depends on this guess: a wrong one costs balance, never a pair."""
    import os

    from manifesto.load.catalog import bundled_dir
    from manifesto.errors import ManifestoError, say_warnings
    from manifesto.load.inputs import load_model_data
    from manifesto.load.yamlio import confinement, load_yaml

    within = confinement([graph.root, bundled_dir()])
    specs: dict[str, object] = {}
    clusters: dict[str, tuple | None] = {}

    def spec_accelerator(model: str):
        if model not in specs:
            try:
                loaded = load_model_data(os.path.join(graph.root, model), within=within)
                say_warnings(loaded)  # loading's warnings are data: said here, once in the run
                data = loaded.data
                specs[model] = data.get("accelerator") if isinstance(data, dict) else None
            except ManifestoError as exc:
                say_warnings(exc)  # the ones found before the error, as the render would say them
                specs[model] = None
            except (OSError, RecursionError):
                specs[model] = None
        return specs[model]

    def cluster_profiles(name: str):
        if name not in clusters:
            clusters[name] = None
            target = graph.clusters.get(name)
            try:
                data, _ = load_yaml(os.path.join(graph.root, target.path), within=within) if target else (None, None)
            except (ManifestoError, OSError, RecursionError):
                data = None
            acc = data.get("accelerators") if isinstance(data, dict) else None
            profiles = acc.get("profiles") if isinstance(acc, dict) else None
            if isinstance(profiles, dict):
                clusters[name] = (frozenset(str(k) for k in profiles), acc.get("default"))
        return clusters[name]

    def judge(pair) -> bool:
        unit, cluster = pair
        if unit in graph.monitors or unit in graph.gitops:
            return True
        known = cluster_profiles(cluster)
        if known is None:
            return True
        profiles, default = known
        options = graph.options(unit) if unit in graph.model_options else {}
        name = options.get("accelerator") or spec_accelerator(graph.source(unit)) or default
        return not isinstance(name, str) or name in profiles

    return judge


def label(i: int, n: int) -> str:
    """How ``build --shard`` is told shard ``i`` of ``n``."""
    return f"{i}/{n}"
