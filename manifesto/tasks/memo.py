"""The tasks' memo: what one build (or one command) has read, and the parse, resolve and
render products it keeps in the store (``manifesto.store``).

A pair's render is the tasks of ``manifesto.tasks.core``: digest and parse (each input
file read once per build: :meth:`Tasks.digest`, :meth:`Tasks.text`, and parsed once per
process, ``manifesto.tasks.pair.Products``), resolve and render. Their products, failures
of the last two included, go to the one store:

- **parse** (``Parsed``): one YAML text's plain data and positions, keyed by the text's
  digest and the code fingerprint. A build's workers share it: the file a worker parsed is
  read back by the others, about twenty times faster than parsing it again. A text that
  does not parse is not stored (the error is made again, with its position).
- **resolve** (``Resolved``): the Plan and the :class:`~manifesto.render.products.HeaderInputs`,
  or the error's text (not for an incompatible pair: its result says so, and the resolve's
  first check finds it again); keyed by :func:`~manifesto.store.task_key` of the files it read
  (names and digests), the options (msgpack) and the code fingerprint.
- **render** (``Rendered``): the artifact text, or the :class:`~manifesto.render.products.Refusal`;
  keyed by the digest of the Plan and header inputs (``plan_digest``) and the code
  fingerprint only. So an edit whose Plan and header inputs are equal (a comment in a spec,
  which the header's expanded YAML drops too) reuses the render product; an edit that
  changes the expanded YAML re-renders, since the header shows it.

The pair's result (``entries.ResultEntry``) lists both keys in ``products``: :func:`plan_of` gets a
built pair's Plan from its record's key. Every method returns its product as a value: a
failure is a ``Resolved`` or ``Rendered`` with its status, never an exception.
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
    """The memo of one build in one process (or of one command): the ``store`` its
    products go to, the ``code`` fingerprint they are keyed on, when its inputs count as
    settled, the process's parse products (``products``, a ``manifesto.tasks.pair.Products``;
    None: the loaders read and parse every file themselves, as a single command does), and
    every file it read and digested, so each input is read and hashed once. ``hash_file``
    reads one file for the digest task (``edge.signatures.hash_file``: ``(signature,
    digest, trusted)`` or None); by default only the digest is taken."""

    def __init__(self, store: Store, code: str, settled_ns: int | None = None, products=None,
                 hash_file=None) -> None:
        from manifesto.tasks.entries import install

        install()  # the codecs of the products it keeps
        self.store, self.code = store, code
        self.settled_ns = settled_ns  # inputs modified at or after this may not be stored against their digest
        self.products = products
        self.hash_file = hash_file or _digest_only
        self._digests: dict = {}  # path -> FileDigest
        self._texts: dict = {}  # (path, within) -> text
        self._real: dict = {}  # path -> os.path.realpath(path)
        self._once: dict = {}  # key -> value made once per memo (see once)

    def realpath(self, path: str) -> str:
        """``os.path.realpath(path)``, resolved once per memo (a build's pairs name the same
        cluster and image catalog thousands of times; each resolution is an lstat per path
        component). Only for naming the files read: the reads themselves check their paths."""
        real = self._real.get(path)
        if real is None:
            import os

            real = self._real[path] = os.path.realpath(path)
        return real

    def once(self, key, make):
        """``make()``, made once per memo under ``key``: what a build's pairs share and cannot
        change while it runs (the search path of its roots, whose real paths it holds)."""
        try:
            return self._once[key]
        except KeyError:
            value = self._once[key] = make()
            return value

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

    def digest(self, path: str):
        """The digest task: a :class:`~manifesto.tasks.core.FileDigest` of ``path``, read and
        hashed on first use only. A file edited later in the build keeps its first digest
        here; its mtime, after ``settled_ns``, keeps the outcome from being stored."""
        hit = self._digests.get(path)
        if hit is not None:
            return hit
        from manifesto.tasks.core import FileDigest

        hashed = self.hash_file(path)
        made = FileDigest(path, None, None) if hashed is None else FileDigest(path, *hashed)
        self._digests[path] = made
        return made

    def file_digest(self, path: str) -> str | None:
        """The digest of ``path``'s bytes (``digest.file_digest``), once per build."""
        return self.digest(path).digest

    def text(self, path: str, name: str, within: tuple[str, ...] = ()) -> str:
        """The UTF-8 text of the YAML file ``path`` (``yamlio.read_text``'s checks), read on
        first use only; an error is raised each time (nothing is kept of it)."""
        key = (path, within)
        hit = self._texts.get(key)
        if hit is None:
            from manifesto.load import yamlio

            hit = self._texts[key] = yamlio.read_text(path, name, within)
        return hit

    def parse_file(self, path: str, name: str, within: tuple[str, ...] = ()):
        """The parse task on a file: ``(data, locations)`` through the process's products."""
        if self.products is None:
            from manifesto.load.yamlio import load_yaml

            return load_yaml(path, name, within)
        return self.products.parse(path, name, within, self)

    def parse(self, text: str, name: str, run):
        """``(data, locations)`` of the YAML ``text`` (positions in file ``name``): the stored
        product, else ``run()``'s, then stored when msgpack holds it exactly (it holds every
        value a YAML file gives but integers of over 64 bits)."""
        import msgspec

        from manifesto.errors import Origin
        from manifesto.tasks.entries import Parsed
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
        """``(Resolved, key, error)``: the stored product, else ``run()``'s ``(plan, header)``
        (then stored, unless not ``keep``; the key is then empty). A ManifestoError from
        ``run`` becomes a SKIPPED (incompatible pair) or FAILED product with its text, and is
        handed back as ``error``; a failure read back from the store has no ``error``."""
        from manifesto.errors import IncompatiblePairError, ManifestoError
        from manifesto.tasks.status import Status
        from manifesto.tasks.entries import Resolved

        key = task_key("resolve", names, digests, options, self.code)
        entry = self.store.get(key)
        if isinstance(entry, Resolved) and (entry.status != Status.OK or entry.plan is not None):
            return entry, key, None
        try:
            plan, header = run()
        except ManifestoError as exc:
            status = Status.SKIPPED if isinstance(exc, IncompatiblePairError) else Status.FAILED
            made = Resolved(key, f"resolve {task}", status, str(exc))
            # An incompatible pair is not stored: its result entry says so already, and
            # finding out again is the first check of a resolve. (In a fleet most pairs are
            # such: a spec for one accelerator on every cluster.)
            keep = keep and status != Status.SKIPPED
            if keep:
                self.store.put(made)
            return made, (key if keep else ""), exc
        made = Resolved(key, f"resolve {task}", Status.OK, "", plan, header, plan_digest(plan, header))
        if keep:
            self.store.put(made)
        return made, (key if keep else ""), None

    def render(self, task: str, plan, header, pd: str, run):
        """``(Rendered, key)`` of rendering ``plan``: the stored product, else ``run(plan,
        header)``'s (then stored): ``((text, suffix), None)``, or ``(None, refusal)`` for a
        refusal (a :class:`~manifesto.render.products.Refusal`), kept as a FAILED product."""
        from manifesto.tasks.status import Status
        from manifesto.tasks.entries import Rendered

        key = task_key("render", (), (), pd.encode(), self.code)
        entry = self.store.get(key)
        if isinstance(entry, Rendered):
            return entry, key
        made, refusal = run(plan, header)
        if refusal is not None:
            made = Rendered(key, f"render {task}", Status.FAILED, refusal=refusal)
        else:
            text, suffix = made
            made = Rendered(key, f"render {task}", Status.OK, suffix, text, digest(text.encode()))
        self.store.put(made)
        return made, key


def _digest_only(path: str):
    """``(None, digest, False)`` of ``path`` (no signature taken), or None when unreadable."""
    from manifesto.load.digest import file_digest

    value = file_digest(path)
    return None if value is None else (None, value, False)


def plan_of(store: Store, result_key: str):
    """The Plan of a built pair: ``result_key`` is its record's key (``PairRecord.key``, the
    key of its result entry). None when the pair has no Plan (skipped, failed) or the store
    no longer holds it."""
    from manifesto.tasks.entries import Resolved, ResultEntry, install

    install()

    result = store.get(result_key)
    if not isinstance(result, ResultEntry):
        return None
    for key in result.products:
        entry = store.get(key)
        if isinstance(entry, Resolved) and entry.plan is not None:
            return entry.plan
    return None
