"""What the build knows of a file without trusting it: stat signatures (whether a file may
have changed since it was digested), a file's digest read now, and whether a file already
holds given bytes. Atomic writes are :mod:`manifesto.edge.fs`'s (``write_atomic``).

Everything here is stdlib-only and cheap to import: a no-op build goes through it.
"""

from __future__ import annotations

import os
import time
from collections import namedtuple

from manifesto.util.hashing import digest

__all__ = [
    "dir_signature",
    "FileSignature",
    "hash_file",
    "holds",
    "is_racy",
    "dir_unchanged",
    "signature",
]

# A digest is trusted on a later run only if the file's mtime was older than the
# moment we read it by at least one timestamp tick: otherwise a second write in the
# same tick, with the same size, would keep the signature and go unnoticed. Linux
# file systems stamp with a coarse clock (<= 10 ms); whole-millisecond stamps
# hint at a coarse file system (FAT, some network mounts), which get two seconds.
_FINE_TICK_NS = 100_000_000
_COARSE_TICK_NS = 2_000_000_000

class FileSignature(namedtuple("_FileSignature", ("mtime_ns", "size", "inode", "ctime_ns"))):
    """What a file's ``stat`` says of its content: equal signatures, same bytes (unless racy)."""

    __slots__ = ()


def signature(path: str) -> FileSignature | None:
    """The :class:`FileSignature` of ``path``, or None when it does not exist.

    ctime is in it as in git's index: an edit that keeps the size and puts the old mtime
    back (``touch -r``, ``os.utime``, some editors and sync tools) still moves the ctime.
    As in git, only the mtime decides whether a signature is racy (``is_racy``).
    """
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return FileSignature(st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def is_racy(mtime_ns: int, read_ns: int) -> bool:
    """True when a file stamped ``mtime_ns`` and read at ``read_ns`` may change unseen."""
    tick = _COARSE_TICK_NS if mtime_ns % 1_000_000 == 0 else _FINE_TICK_NS
    return mtime_ns >= read_ns - tick


def dir_signature(path: str, listed_ns: int):
    """``(mtime_ns, inode, trusted)`` of a directory listed at ``listed_ns``, or None
    when it is gone. A directory's mtime moves when an entry is added or removed."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mtime_ns, st.st_ino, not is_racy(st.st_mtime_ns, listed_ns))


def dir_unchanged(path: str, recorded) -> bool:
    """Whether the directory ``path`` still has the entries it had when ``recorded`` (a
    :func:`dir_signature`, or None: it was gone) was taken: a signature taken while the
    directory could still change unseen (not trusted) never vouches for it."""
    now = dir_signature(path, 0)
    if recorded is None or now is None:
        return recorded is now
    mtime_ns, inode, trusted = recorded
    return bool(trusted) and (now[0], now[1]) == (mtime_ns, inode)


#: The largest file the build reads to digest it (an input is at most 16 MiB of YAML, an
#: artifact a few MiB; a bigger file is an error naming it, not an unbounded read).
MAX_DIGESTED = 256 * 1024 * 1024


def holds(path: str, data: bytes) -> bool:
    """Whether ``path`` is a regular file of exactly ``data`` (False when it is missing, not a
    regular file or over the bound: a FIFO is never opened for reading, so it cannot hang the
    build)."""
    from manifesto.edge.raw import TooLarge, read_regular
    from manifesto.edge.fs import UnsafePath

    if len(data) > MAX_DIGESTED:
        return False
    try:
        return read_regular(path, follow=True, limit=MAX_DIGESTED) == data
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, UnsafePath, TooLarge):
        return False


def hash_file(path: str) -> tuple[FileSignature, str, bool] | None:
    """``(signature, digest, trusted)`` of ``path`` read now, or None when missing.

    ``trusted`` is False when the signature may not reveal a later change (see
    ``is_racy``) or when the file changed while it was read.
    """
    from manifesto.edge.raw import read_regular
    from manifesto.edge.fs import UnsafePath

    read_ns = time.time_ns()
    stats: list = []
    try:
        data = read_regular(path, follow=True, limit=MAX_DIGESTED, stats=stats)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, UnsafePath):
        return None
    before, after = stats
    sig = FileSignature(after.st_mtime_ns, after.st_size, after.st_ino, after.st_ctime_ns)
    steady = (before.st_mtime_ns, before.st_size, before.st_ctime_ns) == (sig.mtime_ns, sig.size, sig.ctime_ns)
    return sig, digest(data), steady and not is_racy(sig.mtime_ns, read_ns)
