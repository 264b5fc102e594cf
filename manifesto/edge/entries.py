"""Store and remote-cache entries: bounded, checked before any decoder runs, decoded strictly.

An entry comes from a file in a store folder (``out/.cache/tasks``, which a repository may
commit, or ``$XDG_CACHE_HOME``) or from a remote cache's reply, so every byte of it is
hostile until checked. An entry that fails any check is a *miss*: the caller renders
instead. Nothing an entry holds picks a path by itself: its path-like fields obey a grammar
(:func:`suffix_ok`, :func:`rel_path_ok`, :func:`input_ok`) before a caller sees them.

The checks, in order, all before a (recursive) JSON decoder sees the bytes:

1. size: at most ``limit`` bytes (:data:`MAX_ENTRY` for a store entry, :data:`MAX_ACTION`
   for a remote action record);
2. text: strict UTF-8;
3. nesting: at most :data:`MAX_DEPTH` open brackets at any point, counted without recursion
   (strings are skipped first, so a ``[`` inside a string does not count).

A store file is an *envelope* around its entry (:func:`open_envelope`): one header line
(the format, the entry's kind, the blob fields it left out and the keys it refers to), then
the entry compressed with zlib. The header is checked against its grammar and the body
inflated with a bound (a small file cannot inflate past :data:`MAX_ENTRY`), so a truncated,
foreign or hostile file is a miss like any other bad entry.

This module imports only the standard library at the top: a command's cache hit reads its
entries with :func:`load_plain` without msgspec. The remote records' msgspec Structs are built
on first use (:func:`decode_remote_index`, :func:`decode_remote_record`).
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_ENTRY", "MAX_ACTION", "MAX_DEPTH", "MAX_INPUTS", "SUFFIXES", "BadEntry", "precheck", "suffix_ok",
    "rel_path_ok", "shared_input_ok", "input_ok", "key_ok", "load_plain", "check_store_entry", "decode_remote_index",
    "decode_remote_record", "check_budget", "MAX_COUNT", "ENVELOPE", "MAX_HEADER", "Envelope", "read_header", "open_envelope",
]

#: The largest store entry read (an artifact's text, JSON-escaped, with its Plan).
MAX_ENTRY = 64 << 20
#: The largest remote action record read (an index of inputs, or a result's small record).
MAX_ACTION = 1 << 20
#: The deepest nesting of brackets an entry may hold (a Plan is about ten levels deep).
MAX_DEPTH = 64
#: The most input files one entry may list.
MAX_INPUTS = 100_000
#: The artifact suffixes a result may name ("" for a skipped or failed pair).
SUFFIXES = ("", ".yaml", ".sbatch")

_MAX_PATH = 4096
_MAX_PART = 255
_KEY = re.compile(r"[0-9a-f]{32}|[0-9a-f]{64}")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = bytes(range(256)).translate(None, b"[]{}")  # every byte but the brackets (to delete)
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class BadEntry(ValueError):
    """Why an entry is a miss (one short line, never the entry's own bytes)."""


class ForeignEntry(BadEntry):
    """An entry of this format whose MAC does not verify under this user's key: written by
    another user's manifesto, committed with a clone, planted, or damaged. A quiet miss."""


def precheck(blob, limit: int = MAX_ENTRY, depth: int = MAX_DEPTH) -> str:
    """``blob`` as text once it passes the size, UTF-8 and nesting checks (see the module's
    text); raises :class:`BadEntry`. Runs in time linear in ``len(blob)``, without recursion."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise BadEntry(f"expected bytes, got {type(blob).__name__}")
    if len(blob) > limit:
        raise BadEntry(f"{len(blob)} bytes, over the {limit}-byte limit")
    blob = bytes(blob)
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadEntry(f"not UTF-8 (byte {exc.start})") from None
    if _too_deep(blob, depth):
        raise BadEntry(f"nested deeper than {depth} levels")
    return text


def _too_deep(blob: bytes, depth: int) -> bool:
    from itertools import accumulate

    brackets = _STRING.sub(b"", blob).translate(None, _BRACKETS)
    if len(brackets) <= 2 * depth:
        return len(brackets) > 0 and max(accumulate(_STEP[b] for b in brackets)) > depth
    return max(accumulate(map(_STEP.__getitem__, brackets))) > depth


def key_ok(value) -> bool:
    """A store key (BLAKE2b-128 hex) or a blob's SHA-256 (hex)."""
    return isinstance(value, str) and _KEY.fullmatch(value) is not None


def suffix_ok(value, status: str | None = None) -> bool:
    """One of :data:`SUFFIXES`. With ``status`` (a build's pair result) "ok" needs a non-empty
    one (a command's result, such as ``explain``'s text, has none)."""
    return isinstance(value, str) and value in SUFFIXES and (status != "ok" or value != "")


def rel_path_ok(value) -> bool:
    """A relative POSIX path in normal form below its root: no empty, ``.`` or ``..`` part, no
    leading ``/``, no backslash, no control or format character, bounded length."""
    if not isinstance(value, str) or not value or len(value) > _MAX_PATH or value.startswith("/"):
        return False
    if not value.isprintable() or "\\" in value:
        return False
    return all(part not in ("", ".", "..") and len(part) <= _MAX_PART for part in value.split("/"))


_SHARED_KINDS = (".yaml", ".yml", ".json")


def shared_input_ok(value, roots: tuple[str, ...] = (), within: tuple[str, ...] | None = None) -> bool:
    """An input file as a remote record lists it: a YAML or JSON file, workspace-relative
    (:func:`rel_path_ok`) outside ``out/`` and hidden folders (``.git``, ``out/.cache``), or
    an absolute path in normal form below one of ``roots`` (the installed manifesto's bundled
    catalog: the caller names it; none by default). Nothing else is ever digested for a
    server: an absolute path elsewhere would tell it whether a file exists and let it test
    guesses of its content. With ``within`` (the files and folders the build graph knows:
    an entry ending in ``/`` is a folder, any other a file), a workspace-relative input must
    be one of them or below one: a YAML file at the workspace's top (a secret's?) is not."""
    if not isinstance(value, str) or not value.endswith(_SHARED_KINDS):
        return False
    if value.startswith("/"):
        return rel_path_ok(value[1:]) and any(value.startswith(root.rstrip("/") + "/") for root in roots)
    parts = value.split("/")
    if not rel_path_ok(value) or parts[0] == "out" or any(part.startswith(".") for part in parts):
        return False
    return within is None or any(value == w or (w.endswith("/") and value.startswith(w)) for w in within)


def input_ok(value) -> bool:
    """An input file as a local store lists it: a path a command was given or the build found
    (workspace-relative, absolute, or relative to where a command ran, ``..`` included). It
    is only ever digested, never written, so it needs no confinement: printable (no control
    character, NUL included) and of bounded length."""
    return isinstance(value, str) and 0 < len(value) <= _MAX_PATH and value.isprintable()


def _inputs_ok(inputs, digests) -> bool:
    return (len(inputs) <= MAX_INPUTS and len(digests) == len(inputs)
            and all(input_ok(p) for p in inputs) and all(d == "-" or key_ok(d) for d in digests))


def load_plain(blob, key: str, text_digest=None, blobs: dict | None = None):
    """A store entry as plain JSON data (standard library only: a command's cache-hit path),
    or None when it is a miss: over the limits, not a JSON object, another key, fields of
    the wrong type or grammar, or (with ``text_digest``, the store's digest function) a
    result whose text does not match its digest. ``blobs``: the texts of the fields the
    envelope kept apart (``{"text": ...}``), each one a field the body holds empty, put back
    before the other checks."""
    import json

    try:
        entry = json.loads(precheck(blob))
    except (BadEntry, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key or not key_ok(key):
        return None
    if blobs:  # only fields the body holds empty: a blob never stands in for the key or the kind
        if not all(entry.get(field) == "" for field in blobs):
            return None
        entry.update(blobs)
    kind = entry.get("kind")
    if kind == "result":
        strings = ("task", "status", "suffix", "text", "text_digest", "reason")
        if not all(isinstance(entry.get(f), str) for f in strings):
            return None
        if entry["status"] not in ("ok", "skipped", "failed") or not suffix_ok(entry["suffix"]):
            return None
        if not _plain_inputs(entry):
            return None
        if text_digest is not None and text_digest(entry["text"].encode()) != entry["text_digest"]:
            return None
    elif kind == "request":
        if not (isinstance(entry.get("code"), str) and key_ok(entry.get("result")) and _plain_inputs(entry)):
            return None
    elif kind == "code":
        if not isinstance(entry.get("fingerprint"), str):
            return None
    elif kind not in ("parsed", "resolved", "rendered"):
        return None
    if "suffix" in entry and not suffix_ok(entry["suffix"]):
        return None
    products = entry.get("products", [])
    if not (isinstance(products, list) and all(key_ok(k) for k in products)):
        return None
    return entry


def _plain_inputs(entry: dict) -> bool:
    inputs, digests = entry.get("inputs"), entry.get("digests")
    return (isinstance(inputs, list) and isinstance(digests, list)
            and all(isinstance(x, str) for x in inputs + digests) and _inputs_ok(inputs, digests))


# -- the remote cache's action records -----------------------------------------------------

_TYPES = None


def _types():
    """``(RemoteIndex, RemoteRecord, index decoder, record decoder)``, built on first use."""
    global _TYPES
    if _TYPES is None:
        import msgspec

        class RemoteIndex(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
            """The input files (workspace-relative) a pair's render read."""

            inputs: tuple[str, ...]

        class RemoteRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
            """A pair's result as the remote cache shares it; the text is the blob ``text_sha256``."""

            task: str
            status: str  # "ok", "skipped" or "failed"
            suffix: str
            reason: str
            text_sha256: str
            budget: dict | None = None

        class RemoteRoleBudget(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
            """``manifesto.resolve.plan.RoleBudget``'s fields, in its order (a test holds them equal)."""

            role: str
            gpus: int
            nodes: int
            pods: int
            hourly_cost: float | None = None

        # ``manifesto.resolve.plan.Budget``'s fields, in its order (the edge sits below resolve; a
        # test holds them equal). Made with defstruct: a local class's string annotation naming
        # RemoteRoleBudget would not resolve.
        RemoteBudget = msgspec.defstruct(
            "RemoteBudget", [("roles", tuple[RemoteRoleBudget, ...]), ("gpus", int), ("nodes", int), ("pods", int),
                             ("accelerator", str), ("hourly_price", float | None, None),
                             ("hourly_cost", float | None, None)],
            frozen=True, forbid_unknown_fields=True)

        _TYPES = (RemoteIndex, RemoteRecord, msgspec.json.Decoder(RemoteIndex), msgspec.json.Decoder(RemoteRecord),
                  RemoteBudget, RemoteRoleBudget)
    return _TYPES


def _decode(decoder, raw):
    import msgspec

    text = precheck(raw, MAX_ACTION)
    try:
        return decoder.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, MemoryError, ValueError) as exc:
        raise BadEntry(_short(exc)) from None


def _short(exc: BaseException) -> str:
    from manifesto.edge.escape import terminal

    return terminal(str(exc) or type(exc).__name__, 120)


def decode_remote_index(raw, roots: tuple[str, ...] = (), known: tuple[str, ...] = (),
                        within: tuple[str, ...] | None = None):
    """The ``RemoteIndex`` in ``raw`` (an action record's body); raises :class:`BadEntry`.
    Every input obeys :func:`shared_input_ok` (absolute ones below ``roots``), none repeats,
    and the files of ``known`` (the pair's own spec and cluster, which the build names
    itself) are all listed: an index cannot leave out what the build knows it reads. ``within``:
    see :func:`shared_input_ok`."""
    index = _decode(_types()[2], raw)
    if len(index.inputs) > MAX_INPUTS or not all(shared_input_ok(p, roots, within) for p in index.inputs):
        raise BadEntry("an input is not a normal path to a workspace or catalog file")
    if len(set(index.inputs)) != len(index.inputs) or not set(known) <= set(index.inputs):
        raise BadEntry("its inputs are not the files the build knows the pair reads")
    return index


def decode_remote_record(raw, suffix: str | None = None):
    """The ``RemoteRecord`` in ``raw``; raises :class:`BadEntry`. A record only ever supplies an
    artifact's text: its status must be "ok" with no reason (a server never decides that a
    pair failed or is skipped, nor what a report says about it), its suffix the one the build
    expects (``suffix``, from the pair's cluster profile; any artifact suffix when None), its
    budget one :func:`check_budget` accepts (given back as plain data of that one shape)."""
    record = _decode(_types()[3], raw)
    if record.status != "ok":
        raise BadEntry("its status is not ok (only artifacts are shared)")
    if record.reason != "":
        raise BadEntry("an artifact's record has a reason")
    if not suffix_ok(record.suffix, record.status) or (suffix is not None and record.suffix != suffix):
        raise BadEntry("its suffix is not the one of the pair's platform")
    if not (len(record.text_sha256) == 64 and key_ok(record.text_sha256)):
        raise BadEntry("its text digest is not a SHA-256")
    if record.budget is not None:
        import msgspec

        record = msgspec.structs.replace(record, budget=check_budget(record.budget))
    return record


#: The largest count a budget may hold (Kubernetes counts are 32-bit).
MAX_COUNT = (1 << 31) - 1
#: The largest hourly price or cost a budget may hold.
MAX_MONEY = 1e12
#: The most roles a budget may list.
MAX_ROLES = 64
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", re.ASCII)  # an accelerator or role name


def check_budget(value) -> dict:
    """``value`` (a budget as a record holds it) as the plain data ``manifesto.resolve.budget``
    makes, once it has that shape exactly (every field, of its type, no other), counts in
    ``0..MAX_COUNT``, money finite in ``0..MAX_MONEY`` (or null), names of the name grammar,
    and totals that are the sums of the roles'; raises :class:`BadEntry`."""
    import math

    import msgspec

    try:
        budget = msgspec.convert(value, _types()[4], strict=True)
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        raise BadEntry(f"its budget is not a budget ({_short(exc)})") from None

    def count(n) -> bool:
        return type(n) is int and 0 <= n <= MAX_COUNT

    def money(x) -> bool:
        return x is None or (isinstance(x, float) and math.isfinite(x) and 0 <= x <= MAX_MONEY)

    roles = budget.roles
    ok = (0 < len(roles) <= MAX_ROLES and _NAME.fullmatch(budget.accelerator) is not None
          and all(count(n) for n in (budget.gpus, budget.nodes, budget.pods))
          and money(budget.hourly_price) and money(budget.hourly_cost)
          and all(_NAME.fullmatch(r.role) and count(r.gpus) and count(r.nodes) and count(r.pods)
                  and money(r.hourly_cost) for r in roles)
          and len({r.role for r in roles}) == len(roles)
          and budget.gpus == sum(r.gpus for r in roles) and budget.nodes == sum(r.nodes for r in roles)
          and budget.pods == sum(r.pods for r in roles)
          and (budget.hourly_price is None) == (budget.hourly_cost is None)
          and all((r.hourly_cost is None) == (budget.hourly_price is None) for r in roles))
    if not ok:
        raise BadEntry("its budget is out of bounds or does not add up")
    return msgspec.to_builtins(budget)


def check_store_entry(entry) -> None:
    """Raise :class:`BadEntry` when a decoded store entry (``manifesto.tasks.entries``) has a
    path-like field outside its grammar: the key, a result's suffix, its inputs and digests."""
    if not key_ok(getattr(entry, "key", None)):
        raise BadEntry("its key is not a store key")
    suffix = getattr(entry, "suffix", None)
    if suffix is not None and not suffix_ok(suffix):
        raise BadEntry("its suffix is not an artifact suffix")
    inputs = getattr(entry, "inputs", None)
    if inputs is not None and not _inputs_ok(inputs, getattr(entry, "digests", ())):
        raise BadEntry("an input is not a normal path")
    if not all(key_ok(k) for k in getattr(entry, "products", ())):
        raise BadEntry("a product is not a store key")
    result = getattr(entry, "result", None)
    if result is not None and not key_ok(result):
        raise BadEntry("its result is not a store key")


# -- the store's envelope ------------------------------------------------------------------

#: The first word of every store file (its format).
ENVELOPE = b"manifesto-store/4"
#: The longest header line read (the format, the kind, blob fields and references).
MAX_HEADER = 4096
#: The most blob fields and references one header may name.
MAX_REFS = 64
_WORD = re.compile(r"[a-z][a-z0-9_-]{0,31}")


class Envelope(tuple):
    """``(kind, fields, refs, body)``: the entry's kind, the blob fields it left out
    (``{field: digest}``), the keys of other entries it refers to, and its body (compressed
    by :func:`read_header`, inflated by :func:`open_envelope`)."""

    __slots__ = ()

    kind = property(lambda self: self[0])
    fields = property(lambda self: self[1])
    refs = property(lambda self: self[2])
    body = property(lambda self: self[3])


def read_header(raw) -> Envelope:
    """The header of a store file (its first bytes are enough) with the still compressed body;
    raises :class:`BadEntry` when it is not a store file of this format, or its header breaks
    the grammar: a MAC, a kind and field names of lower-case words, digests as keys
    (:func:`key_ok`). The MAC is not checked here (a scan reads only the first bytes):
    :func:`open_envelope` checks it."""
    return _header(bytes(raw))[0]


_MAC_HEX = 32


def _header(raw: bytes):
    end = raw.find(b"\n", 0, MAX_HEADER)
    if not raw.startswith(ENVELOPE + b" ") or end < 0:
        raise BadEntry("not a store entry of this format")
    start = len(ENVELOPE) + 1
    tag, rest = raw[start:start + _MAC_HEX], start + _MAC_HEX
    try:
        words = raw[rest:end].decode("ascii").split(" ")
        mac = bytes.fromhex(tag.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise BadEntry("a damaged header") from None
    if len(mac) != _MAC_HEX // 2 or words[0] != "":
        raise BadEntry("a damaged header")
    words = words[1:]
    kind, fields, refs = words[0], {}, []
    if _WORD.fullmatch(kind) is None or len(words) > MAX_REFS + 1:
        raise BadEntry("a damaged header")
    for word in words[1:]:
        name, eq, value = word.rpartition("=")
        if eq and _WORD.fullmatch(name) is not None and key_ok(value) and name not in fields:
            fields[name] = value
        elif not eq and key_ok(word):
            refs.append(word)
        else:
            raise BadEntry("a damaged header")
    return Envelope((kind, fields, tuple(refs), raw[end + 1:])), mac, rest


def sealed_here(raw) -> bool:
    """Whether ``raw`` is a store file of this format whose MAC verifies under this user's key
    (nothing inflated or decoded: a writer's check that a file it would keep is its own)."""
    from manifesto.edge.trust import verify

    try:
        raw = bytes(raw)
        _, mac, rest = _header(raw)
    except BadEntry:
        return False
    return verify(memoryview(raw)[rest:], mac)


def open_envelope(raw, limit: int = MAX_ENTRY) -> Envelope:
    """A store file's header and its body inflated: at most ``limit`` bytes, the whole zlib
    stream and nothing after it, under a MAC of this user's key
    (``manifesto.edge.trust``); raises :class:`BadEntry`."""
    import zlib

    from manifesto.edge.trust import verify

    raw = bytes(raw)
    head, mac, rest = _header(raw)
    if not verify(memoryview(raw)[rest:], mac):
        raise ForeignEntry("not written by this user's manifesto (its MAC does not verify)")
    inflate = zlib.decompressobj()
    try:
        body = inflate.decompress(head.body, limit + 1)
    except zlib.error as exc:
        raise BadEntry(f"damaged compressed data ({_short(exc)})") from None
    if len(body) > limit:
        raise BadEntry(f"over the {limit}-byte limit once inflated")
    if not inflate.eof:
        raise BadEntry("Input data was truncated")
    if inflate.unused_data:
        raise BadEntry("bytes after the compressed data")
    return Envelope((head.kind, head.fields, head.refs, body))
