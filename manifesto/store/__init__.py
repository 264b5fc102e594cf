"""The one content-addressed store: every cached result of the renderer lives here.

The store is mechanism only: it keeps *entries* of kinds it does not know, each under a key,
and *blobs* (artifact texts) once by content. The owners of the entry kinds register a codec
for each (:func:`register`: the build's and commands' kinds do so in
``manifesto.tasks.entries``); this package imports nothing from ``resolve/``, ``render/``,
``schema/`` or ``tasks/`` (an import-linter contract in pyproject.toml keeps it so). One key
function (:func:`task_key`) and one code fingerprint (``manifesto.load.digest.code_fingerprint``)
serve the build graph (``manifesto build``) and the single commands (``render manifest``,
``render file``, ``config validate``); no other module keeps a cache of its own.

Layout of a store directory (the build's is ``out/.cache/tasks``, the commands' is
``$XDG_CACHE_HOME/llm-manifesto/render``; ``MANIFESTO_NO_CACHE=1`` turns the latter off)::

    <store>/<key[:2]>/<key>     one file: an envelope around one entry or blob

An envelope (read by ``manifesto.edge.entries.open_envelope``) is one header line, then the
body compressed with zlib::

    manifesto-store/4 <mac> <kind> [<field>=<blob digest> ...] [<key> ...]\n<zlib body>

``mac`` is the keyed BLAKE2b-128 (hex) of everything after it, under this user's cache key
(``manifesto.edge.trust``): a store may sit in a folder a repository commits, and a file
whose MAC does not verify was not written by this user's manifesto, so it is a miss, never
decoded.

``kind`` picks the codec that decodes the body; a ``field=digest`` word says the entry's
field ``field`` is the blob ``digest`` (an artifact text, kept once however many entries
hold it: a pair's result and its render product share one); a bare ``key`` is another entry
the entry refers to (a result's resolve and render products), which lives as long as it
does. A blob is an envelope of kind ``blob`` whose key is the digest of its inflated bytes.
The entry kinds (JSON written by msgspec, see ``manifesto.tasks.entries``): ``result`` (the
outcome of one render task), ``parsed``, ``resolved``, ``rendered`` (the parse, resolve and
render tasks' products, see ``manifesto.tasks.memo``), ``request`` (a command's index) and
``code`` (the code fingerprint under the stat signature of the code files).

A result's key is :func:`task_key` of the task's name, the digests of its inputs (the
files it read), its options (``msgspec.msgpack.encode`` of the options Struct) and the
code fingerprint, so equal keys mean equal work. Files are written atomically (a temporary
file beside it, then a rename). They are read through the edge (``manifesto.edge.entries``):
an entry that is too big (compressed or inflated), not an envelope of this format, of a kind
no codec is registered for, nested too deep, not UTF-8, does not decode, has a path-like
field outside its grammar, whose blob is missing or whose text does not match its digest is
a miss, never a write outside ``out/`` and never a crash. The body is JSON, readable with the
standard library (:meth:`Store.load`), so a command's cache hit never imports msgspec (nor
pydantic or a YAML parser); writers and the build decode with the registered codecs.

**Bound.** Reading an entry marks it used (its mtime). :meth:`Store.prune` deletes the least
recently used entries until the store is within a size, never one that is *live* (the
entries a caller names, those they refer to and their blobs), and then every blob no entry
holds. The build prunes to :data:`LOW_WATER` of its bound when it may have outgrown it, the
bound coming from ``MANIFESTO_STORE_LIMIT``, else BUILD.yaml's ``store_limit``, else
:data:`DEFAULT_LIMIT`; ``manifesto clean --gc`` prunes on request.
"""

from __future__ import annotations

import os

from manifesto.edge.fs import TMP_MARK  # temporary files of an atomic write end with it
from manifesto.util.hashing import blake2b_hex

__all__ = ["KEEP_FACTOR", "DEFAULT_LIMIT", "ENV_LIMIT", "LOW_WATER", "Codec", "Store", "Stored", "Pruned",
           "register", "task_key", "request_key", "folder_problem", "parse_limit", "env_limit", "seal"]

#: A build keeps unreferenced entries until they outnumber its pairs by this factor.
KEEP_FACTOR = 8  # a pair keeps up to three entries: its result, its Plan and its artifact

#: The size a store may grow to unless ``MANIFESTO_STORE_LIMIT`` or BUILD.yaml say otherwise.
DEFAULT_LIMIT = 1 << 30
#: The variable that sets the bound (a byte count in the Kubernetes quantity grammar: 2Gi, 500M).
ENV_LIMIT = "MANIFESTO_STORE_LIMIT"
#: A pruning store keeps this share of its bound (the rest is room for the next builds).
LOW_WATER = 0.8

#: Shard folders a store keeps open for writing (a store has 256).
_OPEN_SHARDS = 256

_TASK = "manifesto-task/2"
_REQUEST = "manifesto-request/2"
_BLOB = "blob"
_MAX_LIMIT = 1 << 50


def digest(data: bytes) -> str:
    """BLAKE2b-128 of ``data`` in hex: ``manifesto.load.digest.digest``, the digest of every key and
    text (that module also finds the code files, through the catalog: not the store's business)."""
    return blake2b_hex(data, 16)


def task_key(task: str, names, digests, options: bytes, code: str) -> str:
    """The key of running ``task`` on the inputs ``names`` (with content ``digests``), with
    ``options`` (the msgpack bytes of an options Struct) and the renderer's ``code``."""
    lines = [_TASK, task, code, options.hex()]
    lines += sorted(f"{n}\0{d}" for n, d in zip(names, digests))
    return digest("\n".join(lines).encode())


def request_key(request: str) -> str:
    """The key of a command's index entry, from a canonical text of what it was asked."""
    return digest(f"{_REQUEST}\n{request}".encode())


def parse_limit(text) -> int:
    """A store bound in bytes from ``text``: a whole number of bytes or a Kubernetes quantity
    (``2Gi``, ``500M``); ValueError with the grammar otherwise."""
    from manifesto.util.quantity import FRACTIONAL, byte_count

    text = str(text).strip()
    try:
        value = byte_count(text) if text.isascii() else -1
    except ValueError as exc:
        value = -1
        if text.endswith(FRACTIONAL) and len(text) <= 50 and "a fraction of a byte" in str(exc):
            raise ValueError(str(exc)) from None  # 500m: half a byte, not 500 megabytes
    if not 0 <= value <= _MAX_LIMIT:
        from manifesto.errors import printable

        raise ValueError(f"expected a size such as 2Gi, 500M or 1000000 (bytes, at most 1Pi), got "
                         f"'{printable(text)[:50]}'")
    return value


def env_limit(environ) -> int | None:
    """The bound ``MANIFESTO_STORE_LIMIT`` sets in ``environ`` (None when it is unset or empty);
    ValueError (:func:`parse_limit`'s) for a value that is not a size."""
    text = environ.get(ENV_LIMIT, "")
    return parse_limit(text) if text else None


# -- codecs ---------------------------------------------------------------------------------

class Codec:
    """How one kind of entry is kept: ``encode(entry)`` gives ``(body bytes, {field: text
    bytes, or (text bytes, their digest)}, refs)`` (the fields kept apart as blobs, and the
    keys of entries it refers to);
    ``decode(body, {field: text}, key)`` gives ``(entry, None)`` or ``(None, why it is damaged)``."""

    __slots__ = ("kind", "type", "encode", "decode")

    def __init__(self, kind: str, type_: type, encode, decode) -> None:
        self.kind, self.type, self.encode, self.decode = kind, type_, encode, decode


_BY_KIND: dict[str, Codec] = {}
_BY_TYPE: dict[type, Codec] = {}


def register(kind: str, type_: type, encode, decode) -> None:
    """Keep entries of class ``type_`` as ``kind`` (see :class:`Codec`); called by the module
    that defines the entry, when it is imported. Registering a kind again replaces it."""
    import re

    if kind == _BLOB or not re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", kind):
        raise ValueError(f"not a kind an entry may have: {kind!r}")
    codec = Codec(kind, type_, encode, decode)
    _BY_KIND[kind] = _BY_TYPE[type_] = codec


def seal(kind: str, body: bytes, fields: dict | None = None, refs=()) -> bytes:
    """The envelope of ``body`` (see the module's text): ``fields`` maps blob fields to their
    digests, ``refs`` are keys of other entries; MAC'd under this user's key."""
    import zlib

    from manifesto.edge.entries import ENVELOPE
    from manifesto.edge.trust import mac

    words = [kind] + [f"{name}={value}" for name, value in sorted((fields or {}).items())] + list(refs)
    # Level 1: a cold build compresses every artifact text once, and level 6 costs about twice
    # the time for a fifth fewer bytes (YAML texts shrink to about a fifth either way).
    rest = b" " + " ".join(words).encode("ascii") + b"\n" + zlib.compress(body, 1)
    return ENVELOPE + b" " + mac(rest).hex().encode("ascii") + rest


class Stored(tuple):
    """One file of a store as :meth:`Store.scan` sees it: ``(key, size, mtime_ns, kind,
    refs)``; ``kind`` is None for a file that is not an envelope of this format, and ``refs``
    holds its blob digests and the keys it refers to."""

    __slots__ = ()

    key = property(lambda self: self[0])
    size = property(lambda self: self[1])
    mtime = property(lambda self: self[2])
    kind = property(lambda self: self[3])
    refs = property(lambda self: self[4])


class Pruned(tuple):
    """What :meth:`Store.prune` did: ``(entries, bytes, removed, freed, live)``: the entries
    (not blobs) and bytes the store holds after it, the files it deleted and their bytes, and
    the bytes of the live entries and their blobs."""

    __slots__ = ()

    entries = property(lambda self: self[0])
    bytes = property(lambda self: self[1])
    removed = property(lambda self: self[2])
    freed = property(lambda self: self[3])
    live = property(lambda self: self[4])


class Store:
    """Entries below ``directory`` (None: a store that holds nothing and keeps nothing).

    Every change it makes, and every read, happens in a shard folder opened without following
    links, walked to from ``root`` (the build's workspace; without one, the store's own
    folder), on the file a scan found or a key names in its own shard: a shard planted as a
    link to a folder elsewhere is never entered, so nothing outside the store is read,
    touched or deleted."""

    def __init__(self, directory: str | None, warn=None, root: str | None = None) -> None:
        self.directory = None if directory is None else os.fspath(directory)
        self.warn = warn
        self.root = root if root is not None or directory is None else self.directory
        self.warned = False  # a damaged entry was reported (the first one only)
        self._shards: dict[str, int] = {}  # shard -> descriptor, walked to from root once

    def close(self) -> None:
        """Close the shard folders kept open (the store stays usable)."""
        shards, self._shards = self._shards, {}
        for fd in shards.values():
            os.close(fd)

    def __del__(self) -> None:
        if getattr(self, "_shards", None):
            self.close()

    def path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key)

    def _shard(self, key: str, create: bool = False) -> int | None:
        """The descriptor of ``key``'s shard (None when it is absent, a link, or not a folder,
        and not ``create``d)."""
        shard = key[:2]
        fd = self._shards.get(shard)
        if fd is not None:
            return fd
        from manifesto.edge.fs import UnsafePath, make_dirs, open_dir_below

        if create and self.root == self.directory:  # a store of its own (the commands'): made on first write
            make_dirs(self.directory)
        try:
            fd = open_dir_below(self.root, os.path.join(self.directory, shard), create=create)
        except (FileNotFoundError, NotADirectoryError, UnsafePath):
            if create:
                raise
            return None
        if len(self._shards) >= _OPEN_SHARDS:  # never more descriptors than a store has shards
            self.close()
        self._shards[shard] = fd
        return fd

    def _in_shard(self, key: str, act, create: bool = False):
        """``act(shard descriptor)``; a write (``create``) walks to the shard again once if it
        went since it was opened (a clean). A read's FileNotFoundError is an absent file."""
        fd = self._shard(key, create)
        if fd is None:
            raise FileNotFoundError(self.path(key))
        try:
            return act(fd)
        except FileNotFoundError:
            if not create:
                raise
            os.close(self._shards.pop(key[:2]))
            fd = self._shard(key, create)
            if fd is None:
                raise
            return act(fd)

    def read(self, key: str) -> bytes | None:
        """The raw bytes of file ``key`` (None when absent or unreadable)."""
        if self.directory is None or not _name_ok(key):
            return None
        from manifesto.edge.entries import MAX_ENTRY
        from manifesto.edge.raw import read_fd
        from manifesto.edge.fs import open_in

        try:  # a regular file only: a FIFO planted in the store must not hang a build
            raw = read_fd(self._in_shard(key, lambda fd: open_in(fd, key)), MAX_ENTRY)
        except (OSError, ValueError):
            return None
        return raw  # one byte more than an entry may hold reads as damaged

    def _open(self, key: str):
        """``(envelope, {field: blob bytes}, None)`` of entry ``key``, ``(None, None, why it
        is damaged, the damaged file's key)`` or ``(None, None, None, "")`` when absent."""
        from manifesto.edge.entries import BadEntry, ForeignEntry, open_envelope

        raw = self.read(key)
        if raw is None:
            return None, None, None, ""
        try:
            envelope = open_envelope(raw)
        except ForeignEntry:
            return None, None, None, ""  # not ours (a clone's, another user's): a quiet miss, overwritten on write
        except BadEntry as exc:
            return None, None, str(exc), key
        if envelope.kind == _BLOB:
            return None, None, "a blob where an entry belongs", key
        blobs = {}
        for field, value in envelope.fields.items():
            blob, problem = self._blob(value)
            if blob is None:
                return None, None, problem, (value if problem else "")
            blobs[field] = blob
        return envelope, blobs, None, ""

    def _blob(self, key: str):
        """``(bytes, None)`` of blob ``key``; ``(None, why)`` when damaged, ``(None, None)``
        when absent."""
        from manifesto.edge.entries import BadEntry, ForeignEntry, open_envelope

        raw = self.read(key)
        if raw is None:
            return None, None
        try:
            envelope = open_envelope(raw)
        except ForeignEntry:
            return None, None  # not ours: as if absent
        except BadEntry as exc:
            return None, str(exc)
        if envelope.kind != _BLOB or digest(envelope.body) != key:
            return None, "content does not match its digest"
        return envelope.body, None

    def load(self, key: str) -> dict | None:
        """Entry ``key`` as plain JSON data, without msgspec: the commands' fast path."""
        from manifesto.edge.entries import load_plain

        envelope, blobs, _, _ = self._open(key)
        if envelope is None:
            return None
        try:
            texts = {field: data.decode("utf-8") for field, data in blobs.items()}
        except UnicodeDecodeError:
            return None
        entry = load_plain(envelope.body, key, digest, texts)
        if entry is not None and entry.get("kind") == envelope.kind:
            self._touch(key)
            return entry
        return None

    def get(self, key: str):
        """Entry ``key`` decoded by its kind's codec and checked, or None: absent, of a kind
        no codec is registered for, or damaged (then deleted, and the first one reported)."""
        envelope, blobs, problem, damaged = self._open(key)
        if envelope is not None:
            codec = _BY_KIND.get(envelope.kind)
            if codec is None:
                return None  # a kind this process does not keep: a miss, left for its owner
            entry, problem = codec.decode(envelope.body, blobs, key)
            if problem is None:
                self._touch(key)
                return entry
            damaged = key
        if problem:
            if self.warn is not None and not self.warned:  # one line, however many are damaged
                from manifesto.edge.escape import terminal

                self.warned = True
                self.warn(f"{terminal(self.path(damaged))}: corrupt cache entry ({terminal(problem)}); rebuilding it")
            self._remove(damaged)
            if damaged != key:
                self._remove(key)
        return None

    def put(self, entry) -> bool:
        """Store ``entry`` atomically under ``entry.key``, its blob fields first (each once by
        content); False when it cannot be written. Its class must have a registered codec."""
        if self.directory is None:
            return False
        codec = _BY_TYPE.get(type(entry))
        if codec is None:
            raise TypeError(f"no codec is registered for {type(entry).__name__}")
        body, texts, refs = codec.encode(entry)
        try:
            fields = {field: self._put_blob(data) for field, data in texts.items()}
            self._write(entry.key, seal(codec.kind, body, fields, refs))
        except OSError:
            if self.warn is None:
                raise
            return False
        return True

    def _put_blob(self, data) -> str:
        """Keep ``data`` (bytes, or ``(bytes, its digest)`` from a codec whose entry carries the
        digest already: a cold build's artifact texts are hashed once, not once per entry
        that holds them; a wrong digest reads back as a damaged blob) once by content."""
        if type(data) is tuple:
            data, key = data
        else:
            key = digest(data)
        if not self._has(key):  # a damaged one is deleted by the reader that finds it
            self._write(key, seal(_BLOB, data))
        return key

    def _has(self, key: str) -> bool:
        """Whether the shard holds file ``key`` sealed under this user's key (a clone's blob of
        the same text is replaced by ours, or every entry holding it would be a miss)."""
        from manifesto.edge.entries import sealed_here

        raw = self.read(key)
        return raw is not None and sealed_here(raw)

    def _write(self, key: str, data: bytes) -> None:
        from manifesto.edge.fs import write_in

        # Confined: the walk from root to the shard, one O_NOFOLLOW open per component, is
        # made once per shard and store (a cold build writes tens of thousands of entries
        # into 256 shards); the entry file itself is checked on every write.
        path = self.path(key)
        self._in_shard(key, lambda fd: write_in(fd, key, data, path, suffix=TMP_MARK, durable=False), create=True)

    def _touch(self, key: str) -> None:
        """Mark entry ``key`` used now (its mtime), for :meth:`prune`'s least-recently-used order."""
        from manifesto.edge.fs import touch_in

        try:
            self._in_shard(key, lambda fd: touch_in(fd, key))
        except OSError:
            pass  # a read-only store is still read

    def _remove(self, key: str) -> None:
        """Delete file ``key`` from its own shard (never a folder, never through a link)."""
        from manifesto.edge.fs import unlink_in

        if not _name_ok(key):
            return
        try:
            self._in_shard(key, lambda fd: unlink_in(fd, key))
        except OSError:
            pass

    # -- size ------------------------------------------------------------------------------

    def scan(self, headers: bool = True) -> list[Stored]:
        """Every entry file of the store: a regular file in the shard its name starts with
        (temporary files, folders, links and anything else aside); with ``headers``, each
        one's kind and references read from its header (the first bytes only)."""
        import stat

        from manifesto.edge.entries import MAX_HEADER, BadEntry, read_header
        from manifesto.edge.fs import UnsafePath, open_dir_below, open_in

        found = []
        if self.directory is None:
            return found
        try:
            top = open_dir_below(self.root, self.directory, create=False)
        except (OSError, UnsafePath):
            return found  # absent, or a link on the way: nothing of it is listed, nothing deleted
        try:
            for shard in sorted(os.listdir(top)):
                if len(shard) != 2 or not shard.isalnum():
                    continue
                fd = self._shard(shard)  # opened without following: a linked shard is None
                if fd is None:
                    continue
                for name in sorted(os.listdir(fd)):
                    if not _name_ok(name) or name[:2] != shard:
                        continue
                    try:
                        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    kind, refs = None, ()
                    if headers:
                        try:
                            efd = open_in(fd, name)
                            try:
                                start = os.read(efd, MAX_HEADER + 64)  # the header is all a scan reads
                            finally:
                                os.close(efd)
                            head = read_header(start)
                            kind, refs = head.kind, tuple(head.fields.values()) + head.refs
                        except (OSError, ValueError, BadEntry):
                            pass
                    found.append(Stored((name, st.st_size, st.st_mtime_ns, kind, refs)))
        finally:
            os.close(top)
        return found

    def prune(self, keep, max_bytes: int | None = None, max_entries: int | None = None) -> Pruned:
        """Delete the least recently used entries that are not live until the store holds at
        most ``max_bytes`` bytes and ``max_entries`` entries (blobs count towards the bytes,
        not the entries), then every blob no remaining entry holds. Live: the entries of
        ``keep``, the entries and blobs they refer to, and so on. Files that are not entries
        of this format are entries without references (the oldest first, like the others).
        Only files the scan found are deleted, each in the shard it was found in."""
        files = {f.key: f for f in self.scan()}
        live, todo = set(), [k for k in keep if k in files]
        while todo:
            key = todo.pop()
            if key not in live:
                live.add(key)
                todo.extend(r for r in files[key].refs if r in files)
        holders: dict[str, int] = {}
        for f in files.values():
            for ref in f.refs:
                holders[ref] = holders.get(ref, 0) + 1
        total = sum(f.size for f in files.values())
        count = sum(f.kind != _BLOB for f in files.values())
        removed = freed = 0

        def drop(first) -> None:
            nonlocal total, count, removed, freed
            stack = [first]  # a loop, not recursion: a planted chain of blobs cannot exhaust the stack
            while stack:
                f = stack.pop()
                if files.get(f.key) is not f:
                    continue
                self._remove(f.key)
                total, removed, freed = total - f.size, removed + 1, freed + f.size
                count -= f.kind != _BLOB
                del files[f.key]
                for ref in f.refs:
                    holders[ref] -= 1
                    if holders[ref] == 0 and ref in files and ref not in live and files[ref].kind == _BLOB:
                        stack.append(files[ref])

        for f in [f for f in files.values() if f.kind == _BLOB and not holders.get(f.key) and f.key not in live]:
            drop(f)  # a blob that no entry holds (its entries went, or a write stopped half-way)
        for f in sorted((f for f in files.values() if f.kind != _BLOB and f.key not in live), key=_age):
            if (max_bytes is None or total <= max_bytes) and (max_entries is None or count <= max_entries):
                break
            if f.key in files:
                drop(f)
        live_bytes = sum(files[k].size for k in live if k in files)
        return Pruned((count, total, removed, freed, live_bytes))

    def collect(self, keep: set, limit: int) -> int:
        """Delete the least recently used entries not in ``keep`` until at most ``limit``
        remain (:meth:`prune` by count); returns how many remain."""
        return self.prune(keep, max_entries=limit).entries


def _name_ok(name: str) -> bool:
    """A file name the store writes: a key (lower-case hex), nothing else."""
    return 16 <= len(name) <= 128 and name.isalnum() and name.isascii() and name == name.lower()


def _age(f: Stored):
    return f.mtime, f.key


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
