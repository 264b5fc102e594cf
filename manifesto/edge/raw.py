"""Bounded reads of regular files for callers on the fast paths (a no-op build reads its
manifest, the store its entries, the build its digests): the descriptor checks of
``edge.fs.open_regular`` and a size bound, and nothing else imported. ``manifesto.edge.files``
re-exports them beside its decoding readers."""

from __future__ import annotations

import os

from manifesto.errors import InputError, Origin

__all__ = ["TooLarge", "read_regular", "read_fd", "read_lenient"]

#: read_lenient's default bound (the edge's text bound, ``limits.MAX_TEXT_BYTES``).
LENIENT_LIMIT = 16 * 1024 * 1024


class TooLarge(InputError):
    """A file over the size a reader allows; ``head`` holds its first limit + 1 bytes (a
    caller that reports an oversized entry as damaged decodes those)."""

    def __init__(self, name: str, limit: int, head: bytes = b"") -> None:
        super().__init__(f"larger than {limit} bytes; refusing to read it", Origin(name))
        self.limit = limit
        self.head = head


def read_regular(path, *, root=None, follow: bool = False, limit: int = LENIENT_LIMIT,
                 stats: list | None = None) -> bytes:
    """The bytes of a regular file for callers that word their own errors (the build's cache,
    artifacts and digests): ``edge.fs.open_regular`` semantics (never a FIFO, device or
    directory; no symlink unless ``follow``; with ``root``, none below it), its OSError
    subclasses raised as they are, and at most ``limit`` bytes (else :class:`TooLarge`).
    ``stats``, when given, receives the descriptor's stat before and after the read."""
    from manifesto.edge.fs import open_regular

    fd = open_regular(path, root=root, follow=follow)
    with os.fdopen(fd, "rb") as fh:
        if stats is not None:
            stats.append(os.fstat(fd))
        raw = fh.read(limit + 1)
        if stats is not None:
            stats.append(os.fstat(fd))
    if len(raw) > limit:
        raise TooLarge(os.fspath(path), limit, raw)
    return raw


def read_fd(fd: int, limit: int) -> bytes:
    """Up to ``limit`` + 1 bytes of the open descriptor ``fd`` (closed afterwards), read in
    pieces of at most 1 MiB: more than ``limit`` bytes means the file is over its bound.
    OSError is the caller's to word."""
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_lenient(path, *, limit: int = LENIENT_LIMIT) -> str | None:
    """The text of a small regular file that is only looked at, not trusted (a settings line,
    a git ref, the first lines of a manifest): a link is followed, bytes that are not UTF-8
    become U+FFFD, and None when it is missing, special, unreadable or over ``limit``."""
    try:
        return read_regular(path, follow=True, limit=limit).decode("utf-8", "replace")
    except (OSError, ValueError, TooLarge):
        return None
