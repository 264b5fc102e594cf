"""The store's entries as msgspec Structs, tagged by ``kind`` (see ``manifesto.store``): the
products of the tasks (``manifesto.tasks.memo``) and the single commands' index entries.

Their codecs are registered with the store by an explicit call, :func:`install`, made by
whoever opens a store of these entries (the memo, the build's session, the commands' store),
never as a side effect of importing this module."""

from __future__ import annotations

import msgspec

from manifesto.load.digest import digest
from manifesto.tasks.status import Status
from manifesto.store import register

from manifesto.render.products import HeaderInputs, Refusal
from manifesto.resolve.plan import Plan

__all__ = ["Status", "ResultEntry", "Parsed", "Resolved", "Rendered", "RequestEntry", "Code", "KINDS", "decode", "encode",
           "install"]


class ResultEntry(msgspec.Struct, frozen=True, tag="result", tag_field="kind"):
    """The outcome of one render task: an artifact, or why the pair was skipped or failed."""

    key: str
    task: str  # what ran, e.g. "render models/qwen/a.yaml @ gpu"
    status: Status
    suffix: str
    text: str
    text_digest: str
    reason: str
    inputs: tuple[str, ...]  # the files it read ...
    digests: tuple[str, ...]  # ... and their digests then
    budget: dict | None = None  # the artifact's GPU budget (manifesto.resolve.budget, plain data)
    products: tuple[str, ...] = ()  # the keys of its resolve and render products (Resolved, Rendered)


class Parsed(msgspec.Struct, frozen=True, tag="parsed", tag_field="kind"):
    """The parse task's product: one YAML text's data and the positions of its keys and list
    items, as msgpack (``[data, [[path, line, col], ...]]``: a float such as ``.nan``, which
    JSON cannot hold, comes back as it was), keyed by the text alone."""

    key: str
    task: str
    data: bytes
    data_digest: str


class Resolved(msgspec.Struct, frozen=True, tag="resolved", tag_field="kind"):
    """The resolve task's product: the Plan and its header inputs, or why there is none
    (status "skipped": an incompatible pair, "failed": an error; ``reason`` is its text).
    ``plan_digest`` digests the Plan and header inputs: the render task's input."""

    key: str
    task: str
    status: Status
    reason: str = ""
    plan: Plan | None = None
    header: HeaderInputs | None = None
    plan_digest: str = ""


class Rendered(msgspec.Struct, frozen=True, tag="rendered", tag_field="kind"):
    """The render task's product: the artifact text of one Plan, or the refusal."""

    key: str
    task: str
    status: Status
    suffix: str = ""
    text: str = ""
    text_digest: str = ""
    refusal: Refusal | None = None


class RequestEntry(msgspec.Struct, frozen=True, tag="request", tag_field="kind"):
    """A command's index: what its last render read, and the result that came of it."""

    key: str
    code: str
    inputs: tuple[str, ...]
    digests: tuple[str, ...]
    result: str


class Code(msgspec.Struct, frozen=True, tag="code", tag_field="kind"):
    """The code fingerprint under a stat signature of the code files."""

    key: str
    fingerprint: str


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ResultEntry | Parsed | Resolved | Rendered | RequestEntry | Code)


def encode(entry) -> bytes:
    return _encoder.encode(entry)


def decode(blob: bytes, key: str, blobs: dict | None = None):
    """``(entry, None)``, or ``(None, why it is damaged)``: the bytes are checked by the edge
    first (size, UTF-8, nesting), then decoded, then the path-like fields checked. ``blobs``:
    the fields the store kept apart (``{"text": bytes}``), put back before the checks."""
    from manifesto.edge.entries import BadEntry, check_store_entry, precheck
    from manifesto.edge.escape import terminal

    try:
        entry = _decoder.decode(precheck(blob))
        check_store_entry(entry)
        if blobs:
            if set(blobs) - set(_BLOB_FIELDS.get(type(entry), ())):
                raise BadEntry("a blob field this kind does not have")
            entry = msgspec.structs.replace(entry, **{f: data.decode("utf-8") for f, data in blobs.items()})
    except BadEntry as exc:
        return None, str(exc)
    except UnicodeDecodeError:
        return None, "a blob that is not UTF-8"
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, MemoryError, ValueError) as exc:
        return None, terminal(str(exc) or type(exc).__name__, 160)
    if isinstance(entry, Rendered) and entry.status == Status.OK and not entry.suffix:
        return None, "an artifact without a suffix"
    if entry.key != key:
        return None, "its key does not match its name"
    if isinstance(entry, (ResultEntry, Rendered)) and digest(entry.text.encode()) != entry.text_digest:
        return None, "content does not match its digest"
    if isinstance(entry, Parsed) and digest(entry.data) != entry.data_digest:
        return None, "content does not match its digest"
    return entry, None


# -- the store's codecs (manifesto.store.register) -------------------------------------------

#: The fields each kind keeps apart, once by content: the artifact texts (a pair's result and
#: its render product hold the same one).
_BLOB_FIELDS = {ResultEntry: ("text",), Rendered: ("text",)}


def _codec(cls):
    """``(encode, decode)`` of ``cls`` for the store: JSON by msgspec, the blob fields apart,
    and as references the keys the entry names (a result's products, a request's result)."""
    fields = _BLOB_FIELDS.get(cls, ())

    def pack(entry):
        # with the digest the entry carries (``text_digest``): the store need not hash the text again
        texts = {f: (getattr(entry, f).encode(), getattr(entry, f + "_digest")) for f in fields if getattr(entry, f)}
        body = encode(msgspec.structs.replace(entry, **dict.fromkeys(texts, "")) if texts else entry)
        refs = tuple(getattr(entry, "products", ())) + ((entry.result,) if cls is RequestEntry else ())
        return body, texts, refs

    def unpack(body: bytes, blobs: dict, key: str):
        entry, problem = decode(body, key, blobs)
        if entry is not None and type(entry) is not cls:
            return None, "its kind does not match its envelope"
        return entry, problem

    return pack, unpack


#: The entry classes this module defines, each kept under its tag as its kind.
KINDS = (ResultEntry, Parsed, Resolved, Rendered, RequestEntry, Code)
_installed = False


def install() -> None:
    """Register the codec of every class of :data:`KINDS` with the store
    (``manifesto.store.register``); calling it again changes nothing."""
    global _installed
    if _installed:
        return
    for cls in KINDS:
        register(cls.__struct_config__.tag, cls, *_codec(cls))
    _installed = True
