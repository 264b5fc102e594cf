"""The parse, resolve and render tasks' products in the store (``manifesto.store``).

A pair's render is three tasks: parse (each input file once per process,
``build_renderer.Products``), resolve and render. They keep their products, failures of
the last two included, in the one store:

- **parse** (``Parsed``): one YAML text's plain data and positions, keyed by the text's
  digest and the code fingerprint. A build's workers share it: the file a worker parsed is
  read back by the others, about twenty times faster than parsing it again. A text that
  does not parse is not stored (the error is made again, with its position).
- **resolve** (``Resolved``): the Plan and the :class:`~manifesto.render.products.HeaderInputs`,
  or the error; keyed by :func:`~manifesto.store.task_key` of the files it read (names and
  digests), the options (msgpack) and the code fingerprint.
- **render** (``Rendered``): the artifact text, or the :class:`~manifesto.render.products.Refusal`;
  keyed by the digest of the Plan and header inputs (``plan_digest``) and the code
  fingerprint only. So an edit whose Plan and header inputs are equal (a comment in a spec,
  which the header's expanded YAML drops too) reuses the render product; an edit that
  changes the expanded YAML re-renders, since the header shows it.

The pair's result (``entries.Result``) lists both keys in ``products``: :func:`plan_of` gets a
built pair's Plan from its record's key.
"""

from __future__ import annotations

from manifesto.load.digest import digest
from manifesto.store import Store, task_key

__all__ = ["Tasks", "plan_of", "plan_digest"]


def plan_digest(plan, header) -> str:
    """The digest of a render task's input: the Plan and its header inputs (msgpack)."""
    import msgspec

    encode = msgspec.msgpack.Encoder(order="deterministic").encode
    return digest(encode(plan) + b"\0" + encode(header))


class Tasks:
    """The resolve and render tasks of one code fingerprint on one store."""

    def __init__(self, store: Store, code: str, settled_ns: int | None = None) -> None:
        self.store, self.code = store, code
        self.settled_ns = settled_ns  # inputs modified at or after this may not be stored against their digest

    def settled(self, paths) -> bool:
        """True when no file of ``paths`` was modified at or after ``settled_ns``: an edit
        then may have come between reading a file and digesting it."""
        import os

        if self.settled_ns is None:
            return True
        try:
            return all(os.stat(p).st_mtime_ns < self.settled_ns for p in paths)
        except OSError:
            return False

    def parse(self, text: str, name: str, run):
        """``(data, locations)`` of the YAML ``text`` (positions in file ``name``): the stored
        product, else ``run()``'s, then stored when msgpack holds it exactly (it holds every
        value a YAML file gives but integers of over 64 bits)."""
        import msgspec

        from manifesto.errors import Origin
        from manifesto.store.entries import Parsed
        from manifesto.load.yamlio import Locations

        key = task_key("parse", ("yaml",), (digest(text.encode()),), b"", self.code)
        entry = self.store.get(key)
        if isinstance(entry, Parsed):
            try:
                data, table = msgspec.msgpack.decode(entry.data)
                return data, Locations(name, {tuple(path): Origin(name, line, col) for path, line, col in table})
            except (msgspec.DecodeError, ValueError, TypeError, RecursionError, MemoryError):
                pass  # not the layout this code writes: parsed again, and written over
        data, locs = run()
        try:
            blob = msgspec.msgpack.encode((data, [(k, o.line, o.col) for k, o in locs.table.items()]))
        except (OverflowError, TypeError):
            return data, locs
        self.store.put(Parsed(key, f"parse {name}", blob, digest(blob)))
        return data, locs

    def resolve(self, task: str, names, digests, options: bytes, run, keep: bool = True):
        """``(plan, header, key, plan digest)``: the stored product, else ``run()``'s (then
        stored, unless not ``keep``). A stored or new failure is raised as the ManifestoError
        it was (its text)."""
        from manifesto.errors import IncompatiblePairError, ManifestoError
        from manifesto.util.status import Status
        from manifesto.store.entries import Resolved

        key = task_key("resolve", names, digests, options, self.code)
        entry = self.store.get(key)
        if isinstance(entry, Resolved) and entry.status == Status.OK and entry.plan is not None:
            return entry.plan, entry.header, key, entry.plan_digest
        if isinstance(entry, Resolved) and entry.status != Status.OK:
            raise _replayed(IncompatiblePairError if entry.status == Status.SKIPPED else ManifestoError,
                            entry.reason, key)
        try:
            plan, header = run()
        except ManifestoError as exc:
            status = Status.SKIPPED if isinstance(exc, IncompatiblePairError) else Status.FAILED
            if keep:
                self.store.put(Resolved(key, f"resolve {task}", status, str(exc)))
                exc.products = (key,)
            raise
        pd = plan_digest(plan, header)
        if keep:
            self.store.put(Resolved(key, f"resolve {task}", Status.OK, "", plan, header, pd))
        return plan, header, (key if keep else ""), pd

    def render(self, task: str, plan, header, pd: str, run):
        """``(text, suffix, key)`` of rendering ``plan``: the stored product, else ``run(plan,
        header)``'s (then stored). A refusal is raised as ``render.Refused`` (stored or new)."""
        from manifesto.render import Refused
        from manifesto.util.status import Status
        from manifesto.store.entries import Rendered

        key = task_key("render", (), (), pd.encode(), self.code)
        entry = self.store.get(key)
        if isinstance(entry, Rendered):
            if entry.refusal is not None:
                refused = Refused(entry.refusal)
                refused.products = (key,)
                raise refused
            return entry.text, entry.suffix, key
        try:
            text, suffix = run(plan, header)
        except Refused as exc:
            self.store.put(Rendered(key, f"render {task}", Status.FAILED, refusal=exc.refusal))
            exc.products = (key,)
            raise
        self.store.put(Rendered(key, f"render {task}", Status.OK, suffix, text, digest(text.encode())))
        return text, suffix, key


def _replayed(cls, text: str, key: str):
    """An exception of ``cls`` whose text is ``text`` (a stored failure, already formatted)."""
    exc = cls.__new__(cls)
    Exception.__init__(exc, text)
    exc.message, exc.origin, exc.path, exc.products = text, None, "", (key,)
    return exc


def plan_of(store: Store, result_key: str):
    """The Plan of a built pair: ``result_key`` is its record's key (``PairRecord.key``, the
    key of its result entry). None when the pair has no Plan (skipped, failed) or the store
    no longer holds it."""
    from manifesto.store.entries import Resolved, Result

    result = store.get(result_key)
    if not isinstance(result, Result):
        return None
    for key in result.products:
        entry = store.get(key)
        if isinstance(entry, Resolved) and entry.plan is not None:
            return entry.plan
    return None
