"""Task results, msgspec-serialised under ``out/.cache/tasks/<k[:2]>/<k>``.

An entry is the outcome of one render, keyed by ``keys.task_key``: the artifact
text and suffix, or the reason the pair was skipped or failed, and the files it read. The
text carries its own digest, so a corrupt or truncated entry is detected, reported
as a warning and treated as a miss. Entries that no current pair refers to are kept
(a reverted edit is restored without rendering) until they outnumber the pairs by
``KEEP_FACTOR``; ``collect`` then drops the oldest of them.
"""

from __future__ import annotations

import os

import msgspec

from manifesto.build_graph.fsio import atomic_write, digest
from manifesto.fsutil import open_regular

__all__ = ["KEEP_FACTOR", "TaskEntry", "TaskCache"]

KEEP_FACTOR = 4


class TaskEntry(msgspec.Struct, frozen=True, array_like=True):
    """The outcome of rendering one pair."""

    key: str
    model: str
    cluster: str
    status: str  # "ok", "skipped" or "failed"
    suffix: str
    text: str
    text_digest: str
    reason: str
    inputs: tuple[str, ...]
    digests: tuple[str, ...]


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(TaskEntry)


class TaskCache:
    """Read and write task entries below ``directory``."""

    def __init__(self, directory: str, warn) -> None:
        self.directory = directory
        self.warn = warn

    def path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key)

    def get(self, key: str) -> TaskEntry | None:
        """The entry for ``key``; None (with a warning if it is damaged) otherwise."""
        path = self.path(key)
        try:
            with open(open_regular(path, root=os.sep), "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            return None
        try:
            entry = _decoder.decode(blob)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return self._damaged(path, str(exc))
        if entry.key != key or digest(entry.text.encode()) != entry.text_digest:
            return self._damaged(path, "content does not match its digest")
        return entry

    def _damaged(self, path: str, why: str) -> None:
        self.warn(f"{path}: corrupt cache entry ({why}); rebuilding it")
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return None

    def put(self, entry: TaskEntry) -> None:
        """Store ``entry`` atomically."""
        atomic_write(self.path(entry.key), _encoder.encode(entry))

    def collect(self, keep: set, limit: int) -> int:
        """Delete the oldest entries not in ``keep`` until at most ``limit`` remain.

        Returns how many entries remain.
        """
        entries = []
        for shard in _listdir(self.directory):
            for name in _listdir(os.path.join(self.directory, shard)):
                path = os.path.join(self.directory, shard, name)
                if name not in keep:
                    entries.append((_mtime(path), path))
        entries.sort()
        excess = max(0, len(keep) + len(entries) - limit)
        for _, path in entries[:excess]:
            _unlink(path)
        return len(keep) + len(entries) - min(excess, len(entries))


def _listdir(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return 0


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
