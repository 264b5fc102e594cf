"""A local cache of single renders, so repeating ``render manifest`` skips the heavy path.

An entry is found by what the command was asked (spec and cluster paths, options,
command) and is valid only while every file the render read has the same bytes and
the renderer's code is unchanged. A hit reads a few small files and prints; it never
imports pydantic or the YAML loader. Entries live under
``$XDG_CACHE_HOME/llm-manifesto/render`` (``MANIFESTO_NO_CACHE=1`` turns the cache off)
and are written atomically; a corrupt entry is simply a miss.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from manifesto.digest import code_files, code_fingerprint, digest, file_digest

__all__ = ["cache_dir", "lookup", "store", "render_cached"]

_VERSION = 1


def cache_dir(env) -> Path | None:
    if env.get("MANIFESTO_NO_CACHE"):
        return None
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "llm-manifesto" / "render"


def _code(directory: Path) -> str:
    """The code fingerprint (``manifesto.digest.code_fingerprint``), remembered under the
    stat signature of the code files, so a hit stats them instead of reading them all."""
    files = code_files()
    parts = []
    for path in files:
        st = os.stat(path)
        parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
    memo = directory / "code" / digest("\n".join(parts).encode())
    try:
        return memo.read_text(encoding="utf-8")
    except OSError:
        pass
    value = code_fingerprint()
    try:
        from manifesto.fsutil import write_atomic

        write_atomic(memo, value)
    except OSError:
        pass
    return value


def _entry_path(directory: Path, request: dict) -> Path:
    key = digest(json.dumps([_VERSION, request], sort_keys=True).encode())
    return directory / key[:2] / f"{key}.json"


def lookup(directory: Path | None, request: dict) -> str | None:
    """The cached artifact text for ``request``, or None."""
    if directory is None:
        return None
    try:
        entry = json.loads(_entry_path(directory, request).read_text(encoding="utf-8"))
        if entry["code"] != _code(directory):
            return None
        for path, expected in entry["inputs"]:
            if file_digest(path) != expected:
                return None
        return entry["text"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(directory: Path | None, request: dict, inputs: list[str], text: str) -> None:
    """Remember ``text`` for ``request`` with the digests of ``inputs`` (best effort)."""
    if directory is None:
        return
    from manifesto.fsutil import write_atomic

    entry = {"code": _code(directory), "inputs": [[p, file_digest(p)] for p in sorted(set(inputs))], "text": text}
    try:
        write_atomic(_entry_path(directory, request), json.dumps(entry))
    except OSError:
        pass  # a cache that cannot be written is only slower


def render_cached(directory: Path | None, *, command: str, spec: str, cluster: str, routing: str | None,
                  options: dict) -> tuple[str, str]:
    """(text, suffix) of rendering ``spec`` for ``cluster``, from the cache when it is still valid.

    ``spec``, ``cluster`` and ``routing`` are the resolved file paths and ``options`` the plain
    resolution options (:class:`manifesto.resolve.plan.Options` fields); together with
    ``command`` they are the cache key. A miss renders and stores the result, unless an input
    file changed while it rendered.
    """
    started = time.time()
    if not all(p is None or os.path.isfile(p) for p in (spec, cluster, routing)):
        directory = None  # a pipe (`<(...)`, `-`) can be read once and has no stable identity
    request = {"command": command, "spec": spec, "cluster": cluster, "routing": routing, "options": options}
    hit = lookup(directory, request)
    if hit is not None:
        suffix, _, text = hit.partition("\n")
        return text, suffix

    import msgspec

    from manifesto.cluster import load_cluster
    from manifesto.resolve.plan import Options
    from manifesto.service import render_text
    from manifesto.spec import load_spec

    loaded_cluster = load_cluster(cluster)
    text, suffix, inputs = render_text(load_spec(spec, loaded_cluster), loaded_cluster,
                                       msgspec.convert(options, Options))
    # A file edited while we rendered must not be remembered with the old text.
    if directory is not None and all(os.stat(p).st_mtime < started for p in inputs):
        store(directory, request, inputs, f"{suffix}\n{text}")
    return text, suffix
