"""The single commands as clients of the store (``manifesto.store``): ``render manifest``,
``render file``, ``config validate`` and ``explain`` skip the heavy path when nothing they
read has changed.

A command's request (its name, the spec, cluster and routing files it resolved, its options)
keys an index entry in the store naming the files its last render read, with their digests,
and the key of the result they produced (``store.task_key``: their digests, the options
as msgpack, the code fingerprint). A hit checks those digests and the code fingerprint
(remembered under the stat signature of the code files, so a hit stats them instead of
reading them all), reads the result and prints: it never imports pydantic, msgspec or the
YAML loader. The commands' store is ``$XDG_CACHE_HOME/llm-manifesto/render``
(``MANIFESTO_NO_CACHE=1`` turns it off).
"""

from __future__ import annotations

import json
import os
import time

from manifesto.load.digest import code_files, code_fingerprint, digest, file_digest
from manifesto.store import Store, folder_problem, request_key, task_key

__all__ = ["cache_dir", "cached"]


def cache_dir(env) -> str | None:
    """The single commands' store folder (None: ``MANIFESTO_NO_CACHE`` turns it off)."""
    if env.get("MANIFESTO_NO_CACHE"):
        return None
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "llm-manifesto", "render")


def _code(store: Store) -> str:
    """The code fingerprint (``manifesto.load.digest.code_fingerprint``), remembered in the store
    under the stat signature of the code files."""
    parts = []
    for path in code_files():
        st = os.stat(path)
        parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
    key = digest(("code\n" + "\n".join(parts)).encode())
    entry = store.load(key)
    if entry is not None and entry.get("kind") == "code" and isinstance(entry.get("fingerprint"), str):
        return entry["fingerprint"]
    value = code_fingerprint()
    if store.directory is not None:
        from manifesto.tasks.entries import Code, install

        install()
        try:
            store.put(Code(key, value))
        except OSError:
            pass  # said once, when the result cannot be written either
    return value


def _hit(store: Store, key: str, code: str):
    """The result entry (plain data) the index entry ``key`` names, while still valid."""
    index = store.load(key)
    if index is None or index.get("kind") != "request" or index.get("code") != code:
        return None
    try:
        for path, expected in zip(index["inputs"], index["digests"], strict=True):
            if file_digest(path) != expected:
                return None
    except (KeyError, TypeError, ValueError):
        return None
    result = store.load(str(index.get("result")))
    if result is None or result.get("kind") != "result" or result.get("status") != "ok":
        return None
    return result


class Query:
    """What a single command asks of a pair.

    ``spec``, ``cluster`` and ``routing`` are the resolved file paths and ``options`` the plain
    resolution options (:class:`manifesto.resolve.plan.Options` fields); together with
    ``command`` they key the index entry. ``task`` is the pair's task (a ``Task`` value,
    named so a hit imports nothing: "render", or "explain" with the Hugging Face cache
    ``hf_home``). ``refs``: the spec and cluster paths as the user named them, to load from
    (so errors name the files as the user does); by default ``spec`` and ``cluster``.
    A plain class: a cache hit imports no msgspec."""

    __slots__ = ("command", "spec", "cluster", "routing", "options", "task", "hf_home", "refs")

    def __init__(self, command: str, spec: str, cluster: str, routing: str | None, options: dict, *,
                 task: str = "render", hf_home: str | None = None, refs: tuple[str, str] | None = None) -> None:
        self.command, self.spec, self.cluster, self.routing = command, spec, cluster, routing
        self.options, self.task, self.hf_home, self.refs = options, task, hf_home, refs


def cached(directory: str | None, query: Query, store_limit: str | None = None,
           roots: tuple[str, ...] = ()) -> tuple[str, str, str]:
    """``(text, suffix, label)`` of ``query`` (a :class:`Query`), from the store while valid;
    ``store_limit``: MANIFESTO_STORE_LIMIT's text from the caller's settings (the store's bound).
    ``roots``: folders every file the pair reads must resolve below (``PairRequest.roots``:
    ``regen`` confines a render to its private folder, so an ``extends`` or a
    ``model.config_json`` in a header cannot read a file elsewhere); none by default.

    On a miss the pair's task runs (``manifesto.tasks.run``), its error is raised, and its
    text is stored unless an input file changed while it ran (``label`` is the cluster's
    name, handed back with a hit)."""
    command, spec, cluster, routing = query.command, query.spec, query.cluster, query.routing
    options, task, hf_home, refs = query.options, query.task, query.hf_home, query.refs
    started = time.time()
    if not all(p is None or os.path.isfile(p) for p in (spec, cluster, routing)):
        directory = None  # a pipe (`<(...)`, `-`) can be read once and has no stable identity
    if directory is not None:
        problem = folder_problem(str(directory))
        if problem:  # XDG_CACHE_HOME is a file, a FIFO, a device...: no cache, one warning
            _warn(f"the render cache is off for this command: {problem}")
            directory = None
    store = Store(None if directory is None else str(directory))
    request = json.dumps([command, spec, cluster, routing, options, *roots], sort_keys=True)
    key = request_key(request)
    code = _code(store) if directory is not None else ""
    if directory is not None:
        hit = _hit(store, key, code)
        if hit is not None:
            return hit["text"], hit["suffix"], hit["reason"]

    import msgspec

    from manifesto.resolve.plan import Options
    from manifesto.tasks.core import PairRequest, Task
    from manifesto.tasks.runner import run
    from manifesto.tasks.memo import Tasks

    opts = msgspec.convert(options, Options)
    spec_ref, cluster_ref = refs or (spec, cluster)
    # The store keeps this command's index and result below; the pair's own products are
    # made afresh (Store(None)), as the index already answers for unchanged inputs.
    roots = tuple(roots)
    from manifesto.errors import say_warnings

    outcome = say_warnings(run(Task(task), PairRequest(spec_ref, cluster_ref, opts, roots=roots, catalogs=not roots,
                                                       hf_home=hf_home), Tasks(Store(None), code))).ok()
    text, suffix, inputs, label = outcome.text, outcome.suffix, outcome.inputs, outcome.cluster_name
    # A file edited while we ran must not be remembered with the old text.
    if directory is not None and all(os.stat(p).st_mtime < started for p in inputs):
        try:
            _remember(store, key, command, code, opts, outcome, store_limit)
        except OSError as exc:  # a read-only or full cache folder: the command still answers
            from manifesto.edge.escape import terminal

            _warn(f"cannot write the render cache in {terminal(str(directory))}: {terminal(exc.strerror or exc)}")
    return text, suffix, label


def _warn(message: str) -> None:
    import sys

    print(f"manifesto: warning: {message}", file=sys.stderr)


def _remember(store: Store, key: str, command: str, code: str, options, outcome, limit: str | None = None) -> None:
    """Keep ``outcome`` (an OK ``Outcome``) as the result of ``command`` and index it under
    the request ``key``, against the digests of the files it read."""
    import msgspec

    from manifesto.tasks.status import Status
    from manifesto.tasks.entries import RequestEntry, ResultEntry, install

    install()

    inputs, text, suffix, label = sorted(set(outcome.inputs)), outcome.text, outcome.suffix, outcome.cluster_name
    digests = tuple(file_digest(p) or "-" for p in inputs)
    result = task_key(command, inputs, digests, msgspec.msgpack.encode(options), code)
    store.put(ResultEntry(result, command, Status.OK, suffix, text, digest(text.encode()), label, tuple(inputs), digests))
    store.put(RequestEntry(key, code, tuple(inputs), digests, result))
    if int(result[:4], 16) % PRUNE_EVERY == 0:
        bound(store, (key, result), limit)


#: About one command write in this many measures the store (its key decides: which writes
#: cannot be foreseen, and a scan of a large store costs more than a render).
PRUNE_EVERY = 64


def bound(store: Store, keep, setting: str | None = None) -> None:
    """Keep the commands' store within its bound (``setting``: ``MANIFESTO_STORE_LIMIT``'s text as
    the command's settings give it, else ``store.DEFAULT_LIMIT``): measured from the files' sizes,
    and past the bound pruned of its least recently used entries down to ``store.LOW_WATER`` of
    it, never those of ``keep`` (the entries this command just wrote). A bad variable is a
    warning: the command answers."""
    from manifesto.store import DEFAULT_LIMIT, ENV_LIMIT, LOW_WATER, env_limit

    try:
        limit = env_limit({ENV_LIMIT: setting} if setting else {})
    except ValueError as exc:
        from manifesto.edge.escape import terminal

        _warn(f"{ENV_LIMIT}: {terminal(str(exc))}; the render cache keeps to {DEFAULT_LIMIT >> 20} MiB")
        limit = None
    limit = DEFAULT_LIMIT if limit is None else limit
    if sum(f.size for f in store.scan(headers=False)) > limit:
        store.prune(keep, max_bytes=int(limit * LOW_WATER))
