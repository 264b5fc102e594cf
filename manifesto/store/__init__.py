"""The one content-addressed store: every cached result of the renderer lives here.

One key function (:func:`task_key`), one code fingerprint (``manifesto.load.digest.code_fingerprint``)
and one entry format (:mod:`manifesto.store.entries`, msgspec Structs) serve the build graph
(``manifesto build``) and the single commands (``render manifest``, ``render file``,
``config validate``); no other module keeps a cache of its own (an import-linter contract in
pyproject.toml keeps it so).

Layout of a store directory (the build's is ``out/.cache/tasks``, the commands' is
``$XDG_CACHE_HOME/llm-manifesto/render``; ``MANIFESTO_NO_CACHE=1`` turns the latter off)::

    <store>/<key[:2]>/<key>     one entry: JSON written by msgspec, tagged by "kind":
        "result"   the outcome of one render task, failures included: status, suffix,
                   text and its digest, reason, the files it read with their digests,
                   and the keys of its resolve and render products
        "parsed"   the parse task's product: one YAML text's plain data and key positions
                   (msgpack, with its digest); keyed by the text's digest and the code
        "resolved" the resolve task's product: the Plan and its header inputs, or the error
                   (skipped or failed) as text; keyed by the files it read, options, code
        "rendered" the render task's product: artifact text and digest, or the refusal
                   (message and input field, no positions); keyed by the digest of the
                   Plan and header inputs and the code (see ``manifesto.store.tasks``)
        "request"  a command's index: the files its last render read (with digests),
                   the code fingerprint then, and the key of the result they produced
        "code"     the code fingerprint, remembered under the stat signature of the code files

A result's key is :func:`task_key` of the task's name, the digests of its inputs (the
files it read), its options (``msgspec.msgpack.encode`` of the options Struct) and the
code fingerprint, so equal keys mean equal work. Entries are written atomically (a
temporary file beside it, then a rename). Entries are read through the edge
(``manifesto.edge.entries``): an entry that is too big, nested too deep, not UTF-8, does
not decode, has a path-like field outside its grammar (a suffix that is not ``.yaml`` or
``.sbatch``, a key that is not a digest) or whose text does not match its digest is a miss,
never a write outside ``out/`` and never a crash. The JSON is readable with the
standard library, so a command's cache hit never imports msgspec (nor pydantic or a
YAML parser); writers and the build decode with msgspec's typed decoder.
"""

from __future__ import annotations

import os

from manifesto.load.digest import digest

__all__ = ["KEEP_FACTOR", "Store", "task_key", "request_key", "folder_problem"]

#: A build keeps unreferenced entries until they outnumber its pairs by this factor.
KEEP_FACTOR = 8  # a pair keeps up to three entries: its result, its Plan and its artifact

#: Temporary files of an atomic write end with this (``build_graph.fsio.TMP_MARK`` too).
TMP_MARK = ".tmp~"

_TASK = "manifesto-task/2"
_REQUEST = "manifesto-request/2"


def task_key(task: str, names, digests, options: bytes, code: str) -> str:
    """The key of running ``task`` on the inputs ``names`` (with content ``digests``), with
    ``options`` (the msgpack bytes of an options Struct) and the renderer's ``code``."""
    lines = [_TASK, task, code, options.hex()]
    lines += sorted(f"{n}\0{d}" for n, d in zip(names, digests))
    return digest("\n".join(lines).encode())


def request_key(request: str) -> str:
    """The key of a command's index entry, from a canonical text of what it was asked."""
    return digest(f"{_REQUEST}\n{request}".encode())


class Store:
    """Entries below ``directory`` (None: a store that holds nothing and keeps nothing)."""

    def __init__(self, directory: str | None, warn=None, root: str | None = None) -> None:
        self.directory = None if directory is None else os.fspath(directory)
        self.warn = warn
        self.root = root  # writes are confined below it: no symlink on the way (the build's workspace)
        self.warned = False  # a damaged entry was reported (the first one only)

    def path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key)

    def read(self, key: str) -> bytes | None:
        """The raw bytes of entry ``key`` (None when absent or unreadable)."""
        if self.directory is None:
            return None
        from manifesto.edge.entries import MAX_ENTRY
        from manifesto.edge.raw import TooLarge, read_regular

        try:  # a regular file only: a FIFO planted in the store must not hang a build
            return read_regular(self.path(key), limit=MAX_ENTRY)
        except TooLarge as exc:
            return exc.head  # one byte more than an entry may hold: the decoder's "damaged"
        except (OSError, ValueError):
            return None

    def load(self, key: str) -> dict | None:
        """Entry ``key`` as plain JSON data, without msgspec: the commands' fast path."""
        from manifesto.edge.entries import load_plain

        blob = self.read(key)
        return None if blob is None else load_plain(blob, key, digest)

    def get(self, key: str):
        """Entry ``key`` decoded and checked (msgspec), or None; a damaged one is deleted."""
        blob = self.read(key)
        if blob is None:
            return None
        from manifesto.store.entries import decode

        entry, problem = decode(blob, key)
        if problem:
            if self.warn is not None and not self.warned:  # one line, however many are damaged
                self.warned = True
                self.warn(f"{self.path(key)}: corrupt cache entry ({problem}); rebuilding it")
            _unlink(self.path(key))
            return None
        return entry

    def put(self, entry) -> bool:
        """Store ``entry`` atomically under ``entry.key``; False when it cannot be written."""
        if self.directory is None:
            return False
        from manifesto.util.fsutil import write_atomic
        from manifesto.store.entries import encode

        try:
            write_atomic(self.path(entry.key), encode(entry), suffix=TMP_MARK, durable=False, root=self.root)
        except OSError:
            if self.warn is None:
                raise
            return False
        return True

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


def folder_problem(directory: str) -> str | None:
    """Why ``directory`` cannot hold a store (None when it can, or can be made): the first
    part of its path that exists but is not a folder (a file, FIFO, device or socket), or
    cannot be looked at. Nothing is opened, so a FIFO cannot hang the check."""
    import stat

    path = os.path.abspath(directory)
    parts = path.split(os.sep)
    for i in range(2, len(parts) + 1):
        prefix = os.sep.join(parts[:i]) or os.sep
        try:
            st = os.stat(prefix)
        except FileNotFoundError:
            return None  # made when the first entry is written
        except OSError as exc:
            from manifesto.edge.escape import terminal

            return f"{terminal(prefix)}: {terminal(exc.strerror or exc)}"
        if not stat.S_ISDIR(st.st_mode):
            from manifesto.edge.escape import terminal

            kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                    or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a file")
            return f"{terminal(prefix)} is {kind}, not a folder"
    return None


def _listdir(path: str | None) -> list[str]:
    if path is None:
        return []
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
