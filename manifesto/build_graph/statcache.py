"""The stat cache: path -> signature and digest (a ``state.StatTable``).

A file whose signature matches its entry is not read again; any other file is
hashed, and the entry refreshed. The signature packs (mtime_ns, size, inode, ctime_ns) into
one int (one object to load, one comparison to make), with the ctime as git keeps it, so
an edit that restores the old mtime at the same size is still seen; an entry that may not reveal
a later change (``edge.signatures.is_racy``) stores 0 and is re-hashed next time. Paths inside
the build root are stored relative to it, so the cache does not care where a
checkout lives.
"""

from __future__ import annotations

import os

from manifesto.edge.signatures import hash_file

__all__ = ["StatCache", "pack"]

_UNKNOWN = object()


def pack(mtime_ns: int, size: int, inode: int, ctime_ns: int) -> int:
    """One int for a file signature."""
    return mtime_ns | size << 64 | inode << 128 | ctime_ns << 192


class StatCache:
    """Digests of files for one build, backed by the manifest's ``stat`` table."""

    def __init__(self, root: str, table) -> None:
        self.root = root
        self.prefix = os.path.join(root, "")
        self.table = table  # a state.StatTable
        self.signatures, self.digests = table.signatures, table.digests
        self.memo: dict[str, str | None] = {}
        self.changed = False

    def key(self, path: str) -> str:
        """The cache key of an absolute or root-relative path."""
        if not os.path.isabs(path):
            return path
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel

    def abspath(self, key: str) -> str:
        """The absolute path of a cache key."""
        return key if key.startswith("/") else self.prefix + key

    def digest(self, key: str) -> str | None:
        """The current digest of the file at ``key`` (None when it does not exist)."""
        value = self.memo.get(key, _UNKNOWN)
        if value is _UNKNOWN:
            value = self.memo[key] = self._lookup(key)
        return value

    def _lookup(self, key: str) -> str | None:
        path = self.abspath(key)
        known = self.signatures.get(key)
        if known:
            try:
                st = os.stat(path)
            except OSError:
                st = None
            if st is not None and known == st.st_mtime_ns | st.st_size << 64 | st.st_ino << 128 | st.st_ctime_ns << 192:
                return self.digests[key]
        hashed = hash_file(path)
        if hashed is None:
            self.forget(key)
            return None
        sig, digest, trusted = hashed
        self.record(key, sig, digest, trusted)
        return digest

    def record(self, key: str, sig, digest: str, trusted: bool) -> None:
        """Remember that the file at ``key`` had ``sig`` (a signature tuple) and ``digest``."""
        if self.table.set(key, pack(*sig) if trusted else 0, digest):
            self.changed = True
        self.memo[key] = digest

    def forget(self, key: str) -> None:
        """Drop what is known about ``key`` (a file this build removed)."""
        self.memo.pop(key, None)
        if self.table.drop(key):
            self.changed = True

    def keep_only(self, keys) -> None:
        """Drop entries for files no longer referenced by the manifest."""
        keys = set(keys)
        for k in [k for k in self.table if k not in keys]:
            self.table.drop(k)
            self.changed = True
