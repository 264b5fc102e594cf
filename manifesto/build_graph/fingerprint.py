"""The code fingerprint (``manifesto.load.digest.fingerprint``, the one definition) through the stat cache.

The renderer names the files (``code_fingerprint_paths``); their list is cached in
the manifest with the signatures of their directories, so while no file is added
or removed there the fingerprint is rebuilt from the stat cache alone, without
importing the renderer.
"""

from __future__ import annotations

import os
import time

from manifesto.edge.signatures import dir_signature, dir_unchanged
from manifesto.build_graph.state import BuildState, CodeEntry
from manifesto.load.digest import code_names, fingerprint

__all__ = ["code_digest"]


def code_digest(state: BuildState, stat, renderer: str) -> str:
    """The current code fingerprint; refreshes ``state.code`` (a ``state.CodeEntry``) when needed."""
    cached = state.code
    if cached and cached.renderer == renderer and _dirs_unchanged(cached.dirs):
        digests = tuple(stat.digest(k) for k in cached.keys)
        if digests == cached.digests:
            return cached.fingerprint
        if None not in digests:
            value = fingerprint(cached.names, digests, renderer)
            state.code = cached._replace(digests=digests, fingerprint=value)
            return value
    return _refresh(state, stat, renderer)


def _dirs_unchanged(dirs: dict) -> bool:
    return all(sig is not None and dir_unchanged(path, sig) for path, sig in dirs.items())


def _refresh(state: BuildState, stat, renderer: str) -> str:
    import manifesto.build_graph.renderer as renderers

    paths = sorted({os.path.abspath(p) for p in renderers.load(renderer).code_fingerprint_paths()})
    now = time.time_ns()
    dirs = {d: dir_signature(d, now) for d in sorted({os.path.dirname(p) for p in paths})}
    names = code_names(paths)
    keys = tuple(stat.key(p) for p in paths)
    digests = tuple(stat.digest(k) or "-" for k in keys)
    value = fingerprint(names, digests, renderer)
    state.code = CodeEntry(renderer, keys, names, {d: s for d, s in dirs.items() if s}, digests, value)
    return value
