"""Source globs and the directory walk that feeds them.

Patterns are relative to a target generator's ``path``: ``*`` and ``?`` stay inside
one path segment, ``**`` (a whole segment) spans any number of directories,
``[abc]``/``[!abc]`` are character classes, and a leading ``!`` excludes. Dot files
and dot directories are never sources. The walk records every directory's
signature so a later build can tell, without listing, that nothing was added or
removed.
"""

from __future__ import annotations

import os
import time

from manifesto.edge.signatures import dir_signature

__all__ = ["GlobError", "compile_glob", "select", "walk"]


class GlobError(ValueError):
    """A malformed pattern; the message says what is wrong with it."""


def compile_glob(pattern: str):
    """A compiled regular expression matching root-relative paths for ``pattern``."""
    import re

    if not pattern or pattern == "!":
        raise GlobError("empty pattern")
    if pattern.startswith("/"):
        raise GlobError("patterns are relative to the target's path; drop the leading '/'")
    parts = pattern.split("/")
    out = []
    for i, seg in enumerate(parts):
        last = i == len(parts) - 1
        if seg in ("", ".", ".."):
            raise GlobError(f"'{seg or '//'}' is not allowed in a pattern")
        if seg == "**":
            out.append("(?:[^/]+/)*[^/]+" if last else "(?:[^/]+/)*")
            continue
        out.append(_segment(seg) + ("" if last else "/"))
    return re.compile("".join(out) + r"\Z")


def _segment(seg: str) -> str:
    import re

    if "**" in seg:
        raise GlobError("'**' must be a whole path segment, as in 'a/**/b.yaml'")
    out, i = [], 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = seg.find("]", i + 2)
            if end < 0:
                raise GlobError("unclosed '[' character class")
            body = seg[i + 1:end]
            neg = body.startswith("!")
            body = re.escape(body[1:] if neg else body).replace(r"\-", "-")
            out.append(f"[{'^' if neg else ''}{body}]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def select(files, includes, excludes) -> list[str]:
    """The paths (relative to the generator path) matched by ``includes`` minus ``excludes``."""
    inc = [compile_glob(p) for p in includes]
    exc = [compile_glob(p) for p in excludes]
    return [f for f in files if any(r.match(f) for r in inc) and not any(r.match(f) for r in exc)]


def walk(root: str, base: str, dirs: dict) -> list[str]:
    """Files below ``root/base`` (relative to ``base``), sorted; fills ``dirs``.

    ``dirs`` maps every visited directory (root-relative) to its ``dir_signature``.
    Symlinked directories are listed as files would be: not descended into.
    """
    files: list[str] = []
    _walk(root, base, "", files, dirs, time.time_ns())
    files.sort()
    return files


def _walk(root: str, base: str, sub: str, files: list, dirs: dict, now: int) -> None:
    rel = os.path.normpath(os.path.join(base, sub))
    path = os.path.join(root, rel)
    dirs[rel] = dir_signature(path, now)
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        name = f"{sub}/{entry.name}" if sub else entry.name
        if entry.is_dir(follow_symlinks=False):
            _walk(root, base, name, files, dirs, now)
        elif entry.is_file():
            files.append(name)
