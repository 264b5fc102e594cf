"""The build manifest: what the last build saw and produced, in ``out/.cache/state``.

It holds the parsed BUILD.yaml (keyed by its digest), the source listing (keyed by
directory signatures), the code fingerprint, the stat cache and one record per
(model, cluster) pair. A no-op build reads only this file, so it is stored with the
stdlib ``marshal`` (builtin, ~1 ms for a thousand pairs) instead of msgspec, whose
import alone costs several interpreter start-ups. ``out/.cache`` may come with a clone, so
the file carries a MAC under this user's cache key (``manifesto.edge.trust``) beside its CRC:
a manifest this user's manifesto did not write (a clone's, another user's, planted) is never
decoded, and the build starts afresh without a word (it is not damaged, only not ours); one
whose CRC fails is damaged, and said so. A different Python version starts afresh too.
Even a verified manifest is read as data: every record and row is checked for the types and
grammar (names, paths, suffixes) a build acts on before it is used.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib
from collections import namedtuple

from manifesto.edge.fs import TMP_MARK, write_atomic
from manifesto.build_graph.outdir import SUFFIXES
from manifesto.tasks.status import Status

__all__ = ["FORMAT", "BuildState", "PairContext", "PairRecord", "BuildfileEntry", "ListingEntry", "CodeEntry", "StatTable",
           "load_state", "new_state", "save_state"]

# 6: what a build last wrote; every BUILD.yaml-settable render option (manifesto.resolve.options)
# 7: the GPU budget of each pair's artifact
# 8: a MAC under the user's cache key beside the CRC
# 9: the stat table as two tables of plain values (signatures, digests), not a tuple per file
FORMAT = 9
_MAGIC = b"manifesto-build\0"
_MAC = 16
_HEADER = len(_MAGIC) + 4 + 4 + _MAC
_STATUS = {s.value: s for s in Status}
#: The largest manifest read (about 1 KiB a pair: 10,000 pairs take some 10 MiB).
MAX_STATE = 256 * 1024 * 1024
_SUFFIXES = frozenset(("", *SUFFIXES))  # an artifact's suffixes, and "" for no artifact


class _Tag:
    """A key of the sharing table that no value read from a manifest can be equal to."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


_BUDGET, _BUDGETS_BY_ID = _Tag("budget"), _Tag("budgets by id")


class StatTable:
    """The stat cache's table (read and written by ``statcache.StatCache`` alone): for each
    file key its ``signatures`` entry (the packed signature, or 0 when it may not reveal a
    later change) and its ``digests`` entry, two tables with the same keys. Plain values in
    plain dicts: marshal writes them as they are, and a load makes no object per file (a
    10,000-pair workspace has a stat entry per artifact)."""

    __slots__ = ("signatures", "digests")

    def __init__(self, signatures: dict | None = None, digests: dict | None = None) -> None:
        self.signatures: dict[str, int] = {} if signatures is None else signatures
        self.digests: dict[str, str] = {} if digests is None else digests

    def __len__(self) -> int:
        return len(self.digests)

    def __contains__(self, key) -> bool:
        return key in self.digests

    def __iter__(self):
        return iter(self.digests)

    def __eq__(self, other) -> bool:
        return type(other) is StatTable and (self.signatures, self.digests) == (other.signatures, other.digests)

    __hash__ = None

    def __repr__(self) -> str:
        return f"StatTable({len(self)} files)"

    def set(self, key: str, signature: int, digest: str) -> bool:
        """Record ``key``'s entry; whether it differs from the one it had."""
        if self.signatures.get(key) == signature and self.digests.get(key) == digest:
            return False
        self.signatures[key], self.digests[key] = signature, digest
        return True

    def drop(self, key: str) -> bool:
        """Forget ``key``; whether it had an entry."""
        self.signatures.pop(key, None)
        return self.digests.pop(key, None) is not None

    def plain(self) -> dict:
        """The table as the manifest holds it."""
        return {"signatures": self.signatures, "digests": self.digests}


class BuildState:
    """The build manifest in memory: one attribute per part, each of its own type.

    ``buildfile`` (a :class:`BuildfileEntry`), ``listing`` (a :class:`ListingEntry`) and
    ``code`` (a :class:`CodeEntry`) are None until a build makes them; ``stat`` is the stat
    cache's :class:`StatTable`;
    ``pairs`` maps (model path, cluster) to a :class:`PairRecord`; ``tasks`` is about how many
    entries the task store holds and ``store`` (bytes it holds, bytes one render adds) or
    None. ``saved`` is what the records were when last read or written (never written itself).

    On disk it is a plain dict of these names and ``format`` (marshal keeps no instances of
    classes of ours); :func:`load_state` checks every part before it becomes one of these."""

    __slots__ = ("buildfile", "listing", "code", "stat", "pairs", "tasks", "store", "saved")

    def __init__(self, buildfile=None, listing=None, code=None, stat=None, pairs=None, tasks: int = 0,
                 store=None) -> None:
        self.buildfile, self.listing, self.code = buildfile, listing, code
        self.stat = StatTable() if stat is None else stat
        self.pairs = {} if pairs is None else pairs
        self.tasks, self.store = tasks, store
        self.saved = None

    def _parts(self) -> tuple:
        return tuple(getattr(self, name) for name in _PARTS)

    def __eq__(self, other) -> bool:
        return type(other) is BuildState and self._parts() == other._parts()

    __hash__ = None

    def __repr__(self) -> str:
        return f"BuildState({len(self.pairs)} pairs, {len(self.stat)} stat entries)"

    def plain(self, pairs: dict | None = None) -> dict:
        """The manifest as marshal writes it: a dict of plain values (``pairs``: the records as
        plain tuples, when the caller made them so)."""
        plain = {"format": FORMAT, **{name: getattr(self, name) for name in _PARTS}}
        if pairs is not None:
            plain["pairs"] = pairs
        if type(self.stat) is StatTable:
            plain["stat"] = self.stat.plain()
        for name in _ENTRIES:  # marshal writes plain tuples only, not the entries' named ones
            if isinstance(plain[name], tuple):
                plain[name] = tuple(plain[name])
        return plain


#: The parts of a manifest, in the order it is written.
_PARTS = ("buildfile", "listing", "code", "stat", "pairs", "tasks", "store")


def new_state() -> BuildState:
    """An empty manifest."""
    return BuildState()


class BuildfileEntry(namedtuple("_BuildfileEntry", ("digest", "config", "locations"))):
    """The parsed BUILD.yaml: its file's ``digest``, its ``config`` (target generators as rows:
    ``generators.to_rows``) and the ``locations`` of its keys. Like every entry of the
    manifest, a ``collections.namedtuple`` (a plain tuple on disk): see :class:`PairRecord`."""

    __slots__ = ()


class ListingEntry(namedtuple("_ListingEntry", ("config_digest", "dirs", "files"))):
    """The source listing: the BUILD.yaml digest it was made for, ``dirs`` ({folder:
    (mtime_ns, inode, trusted) or None}) and ``files`` ({generator index: names or None})."""

    __slots__ = ()


class CodeEntry(namedtuple("_CodeEntry", ("renderer", "keys", "names", "dirs", "digests", "fingerprint"))):
    """The code fingerprint's sources: the ``renderer`` module, the stat cache ``keys`` and
    portable ``names`` of its files, the signatures of their ``dirs`` ({dir: (mtime_ns, inode,
    trusted)}), the files' ``digests`` and the ``fingerprint`` they give."""

    __slots__ = ()


#: The manifest's single entries: key -> their class (a plain tuple of its width on disk).
_ENTRIES = {"buildfile": BuildfileEntry, "listing": ListingEntry, "code": CodeEntry}


class PairContext(namedtuple("_PairContext", ("code", "options"))):
    """What a pair is rendered in besides its files: the ``code`` fingerprint and the render
    ``options`` (their values in ``renderer.OPTION_FIELDS`` order). A plain tuple on disk; a
    record read back whose context is not two values keeps it as read (the pair is rendered
    again: it cannot equal a current context)."""

    __slots__ = ()


class PairRecord(namedtuple("_PairRecord", ("context", "inputs", "digests", "key", "status", "suffix",
                                             "art_digest", "reason", "written", "budget"))):
    """What one pair's last render read and produced (a plain tuple on disk).

    ``context`` is a :class:`PairContext` (code digest, options); ``inputs`` the files it read and
    ``digests`` their digests then (None when one changed during the build, which
    forces a re-render); ``status`` is a :class:`manifesto.tasks.status.Status` (FAILED: an error that
    listed the files it read, so it is as reproducible as an artifact). ``art_digest`` is
    the digest of the artifact the inputs render to now; ``written`` the digest of the
    artifact a build last wrote to out/ ("" when none), which ``build --check`` leaves
    alone: an out/ file equal to it is stale, any other one hand-edited, on every run.
    ``budget`` is the artifact's GPU budget as plain data (None when the renderer gives none),
    so a build that renders nothing still reports it. ``key`` is the store key of the pair's
    result (``manifesto.tasks.memo.plan_of(store, key)`` gives its Plan).

    A ``collections.namedtuple`` with annotations rather than a ``typing.NamedTuple`` or a
    msgspec Struct: a no-op build reads only the manifest, and importing ``typing`` (or
    msgspec, several interpreter start-ups) would be most of its cost.
    """

    __slots__ = ()

    context: PairContext
    inputs: tuple  # tuple[str, ...]: root-relative paths
    digests: tuple | None  # tuple[str, ...]
    key: str
    status: Status
    suffix: str  # ".yaml", ".sbatch", or "" without an artifact
    art_digest: str
    reason: str
    written: str
    budget: dict | None


def load_state(path: str, warn) -> BuildState:
    """The manifest at ``path``; a fresh one (with a warning if corrupt) otherwise."""
    from manifesto.edge.raw import TooLarge, read_regular

    try:
        blob = read_regular(path, root=os.sep, limit=MAX_STATE)
    except FileNotFoundError:
        return new_state()
    except TooLarge:
        blob = b""  # over any real manifest: corrupt
    state = _decode(blob)
    if state is None:
        warn(f"{path}: corrupt build cache, ignoring it (this build re-checks every pair)")
        return new_state()
    if state is False:
        return new_state()
    return state


def save_state(path: str, state: BuildState) -> None:
    """Write the manifest atomically (under the build lock).

    Only the records the build changed are made plain again: the others keep the plain tuple
    the last load or save of this state gave them (at 10,000 pairs making every record plain
    cost a build that re-rendered three pairs some 30 ms, more than writing the file)."""
    saved = state.saved
    if type(saved) is not _Saved:
        saved = _Saved({}, {}, {})
    records, before, shared = saved.records, saved.plain, saved.shared
    pairs = {}
    for k, rec in state.pairs.items():
        if records.get(k) is rec:
            pairs[k] = before[k]
            continue
        old = before.get(k)
        if old is not None:
            _seed(old, shared)
        pairs[_share(k, shared)] = _compact(rec, shared)
    payload = marshal.dumps(state.plain(pairs))
    header = header_for(payload)
    # never through a symlink: build paths are real paths, so a link on the way was planted
    write_atomic(path, header + payload, suffix=TMP_MARK, durable=False, root=os.sep)
    state.saved = _Saved(dict(state.pairs), pairs, shared)


class _Saved:
    """What a state's records were when it was last loaded or saved, so that the next save
    makes plain only the records changed since: ``records`` maps each pair to its PairRecord
    then, ``plain`` to that record's plain tuple, and ``shared`` holds the one object of each
    value those tuples share (see ``_compact``). Kept in the state as ``saved``, never
    written."""

    __slots__ = ("records", "plain", "shared")

    def __init__(self, records: dict, plain: dict, shared: dict) -> None:
        self.records, self.plain, self.shared = records, plain, shared


def _share(value, shared: dict):
    """One object per distinct value, so marshal writes repeats as references."""
    return shared.setdefault(value, value)


def _seed(old: tuple, shared: dict) -> None:
    """Make the parts of a pair's last saved record the shared objects of their values: its
    new record mostly repeats them (its cluster, its base specs, its context, its budget), and
    in the manifest as read they are the objects every other record holds too. A record read
    from disk is checked for the fields a build acts on only, so parts that are not values
    to share (a list where a tuple belongs) are passed over."""
    try:
        for part in (old[0], *old[1], *(old[2] or ()), old[2], old[6], old[8]):
            shared.setdefault(part, part)
    except TypeError:  # unhashable: a damaged or planted record; its new record is shared afresh
        pass
    budget = old[9]
    if type(budget) is dict:
        shared.setdefault((_BUDGET, marshal.dumps(budget)), budget)


def _compact(rec, shared: dict) -> tuple:
    """A record as a plain tuple whose repeated parts are shared: paths, contexts, the input
    digests (a cluster's or a base spec's is in hundreds of records), the artifact digest it
    repeats as ``written``, and the budget. At 10,000 pairs sharing halves what the no-op's
    ``marshal.loads`` builds: a budget is a dozen objects, and a few dozen distinct ones serve
    every record (they are read, never changed, so one object may serve many records)."""
    inputs = tuple([_share(p, shared) for p in rec[1]])
    digests = rec[2] if rec[2] is None else _share(tuple([_share(d, shared) for d in rec[2]]), shared)
    art, written, budget = _share(rec[6], shared), _share(rec[8], shared), rec[9]
    if type(budget) is dict:  # unhashable: shared by its marshalled form, once per object (the
        # table keeps the object, so its id cannot come back as another budget's while it is used)
        seen = shared.setdefault(_BUDGETS_BY_ID, {})
        hit = seen.get(id(budget))
        if hit is None or hit[0] is not budget:
            hit = seen[id(budget)] = (budget, shared.setdefault((_BUDGET, marshal.dumps(budget)), budget))
        budget = hit[1]
    context = tuple(rec[0]) if type(rec[0]) is PairContext else rec[0]  # marshal writes plain tuples only
    return (_share(context, shared), inputs, digests, rec[3], rec[4].value, rec[5], art, rec[7], written, budget)


def header_for(payload: bytes) -> bytes:
    """The manifest's header for ``payload``: magic, version, CRC and this user's MAC."""
    from manifesto.edge.trust import mac

    return _MAGIC + _version_tag() + zlib.crc32(payload).to_bytes(4, "little") + mac(payload)


def _version_tag() -> bytes:
    return bytes((sys.version_info[0], sys.version_info[1], FORMAT, 0))


def _decode(blob: bytes):
    """The manifest (a :class:`BuildState`), None when corrupt, False when written by another
    version or under another key (a clone's or another user's: not damaged, only not ours)."""
    if len(blob) < _HEADER or not blob.startswith(_MAGIC):
        return None
    if blob[len(_MAGIC):len(_MAGIC) + 4] != _version_tag():
        return False
    from manifesto.edge.trust import verify

    payload = memoryview(blob)[_HEADER:]
    if zlib.crc32(payload).to_bytes(4, "little") != blob[_HEADER - _MAC - 4:_HEADER - _MAC]:
        return None
    if not verify(payload, blob[_HEADER - _MAC:_HEADER]):
        return False
    try:
        plain = marshal.loads(payload)
    except (EOFError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    if not _well_formed(plain):
        return None
    entries = {}
    for name, cls in _ENTRIES.items():  # an entry not of its width is absent: made afresh
        value = plain.get(name)
        entries[name] = cls._make(value) if type(value) is tuple and len(value) == len(cls._fields) else None
    pairs = _records(plain["pairs"])
    if pairs is None:
        return None
    stat = plain["stat"]
    built = BuildState(stat=StatTable(stat["signatures"], stat["digests"]), pairs=pairs, tasks=_count(plain.get("tasks")), store=plain.get("store"),
                       **entries)
    built.saved = _Saved(dict(pairs), plain["pairs"], {})
    return built


def _count(value) -> int:
    """The store's entry count a manifest remembers (anything but a count: none known)."""
    return value if type(value) is int and value >= 0 else 0


def _well_formed(plain) -> bool:
    """The manifest's tables of the types a build acts on: the stat table's signatures ints
    and digests text, for the same keys, all text; the code entry ``(renderer, keys, names,
    dirs, digests, fingerprint)`` with paths in text."""
    if type(plain) is not dict or plain.get("format") != FORMAT:
        return False
    stat, pairs, code = plain.get("stat"), plain.get("pairs"), plain.get("code")
    if type(stat) is not dict or type(pairs) is not dict or stat.keys() != {"signatures", "digests"}:
        return False
    signatures, digests = stat["signatures"], stat["digests"]
    if type(signatures) is not dict or type(digests) is not dict or signatures.keys() != digests.keys():
        return False
    # every key text, every signature an int (not a bool), every digest text: by type sets, in C
    if not (set(map(type, digests)) <= {str} and set(map(type, signatures.values())) <= {int}
            and set(map(type, digests.values())) <= {str}):
        return False
    if code is not None and not (type(code) is tuple and len(code) == 6 and type(code[0]) is str
                                 and type(code[1]) is tuple and all(type(k) is str for k in code[1])
                                 and type(code[3]) is dict and all(type(d) is str and type(v) is tuple and len(v) == 3
                                                                   for d, v in code[3].items())):
        return False
    return True


def _records(plain: dict) -> dict | None:
    """The manifest's records as PairRecords, or None when one is not well formed.

    The manifest is a cache, and a committed or planted out/.cache is data from outside:
    every field a build acts on has its type, and the suffix that names the artifact it
    writes is one of the build's own, so no record can aim a write anywhere else. (One plain
    loop checks and converts each record, str.join over the inputs: a no-op build reads every
    record, and at 10,000 pairs a second pass over them cost about a tenth of it.)"""
    width, statuses, suffixes, join = len(PairRecord._fields), _STATUS, _SUFFIXES, "".join
    make, context_of = PairRecord._make, PairContext._make
    contexts: dict = {}  # id of a context as read -> its PairContext (records share a few contexts)
    pairs = {}
    try:
        for k, v in plain.items():
            if not (type(v) is tuple and len(v) == width and v[4] in statuses and v[5] in suffixes
                    and type(v[1]) is tuple and type(v[3]) is str and type(v[6]) is str and type(v[7]) is str
                    and type(v[8]) is str and (v[2] is None or type(v[2]) is tuple)
                    and (v[9] is None or type(v[9]) is dict) and type(k) is tuple and len(k) == 2):
                return None
            join(v[1])  # every input a path in text: anything else raises TypeError
            context = v[0]
            if type(context) is tuple and len(context) == 2:
                named = contexts.get(id(context))
                if named is None:
                    named = contexts[id(context)] = context_of(context)
                context = named
            pairs[k] = make((context, v[1], v[2], v[3], statuses[v[4]], v[5], v[6], v[7], v[8], v[9]))
    except TypeError:
        return None
    return pairs


def state_path(cache_dir: str) -> str:
    """Where the manifest lives inside ``out/.cache``."""
    return os.path.join(cache_dir, "state")
