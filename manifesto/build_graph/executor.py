"""Run render jobs, in this process or in a pool of worker processes.

A job runs one pair's task (``manifesto.tasks.run``, or the test renderer's ``run``:
``run(task, request, store) -> Outcome``), hashes every file it read, stores the result
entry and, when building, writes the artifact; it returns a small ``JobResult`` so the parent
only keeps books. Each process of a build has one memo (``manifesto.tasks.memo.Tasks``: the
store, the code fingerprint, every file read once). The run function is injectable
(``render=``) for in-process use; worker processes load the renderer module by name.
"""

from __future__ import annotations

import os
import time
import traceback

import manifesto.build_graph.renderer as renderers
from manifesto.tasks.status import Status
from manifesto.edge.fs import TMP_MARK
from manifesto.edge.signatures import hash_file, holds, is_racy, signature
from manifesto.load.digest import digest

__all__ = ["Job", "JobResult", "JobSettings", "run_jobs", "write_artifact"]

# An input whose mtime is at or after the build started (less one clock tick)
# may have changed between the render reading it and the digest: not cached.
_EDIT_WINDOW_NS = 20_000_000


class _Slots:
    """Pickles a ``__slots__`` class as a plain tuple (jobs and results cross processes)."""

    __slots__ = ()

    def __getstate__(self):
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, values) -> None:
        for k, v in zip(self.__slots__, values):
            setattr(self, k, v)


class JobSettings(_Slots):
    """What every job of one build shares."""

    __slots__ = ("root", "renderer", "out_dir", "tasks_dir", "write", "started_ns", "code")

    def __init__(self, root, renderer, out_dir, tasks_dir, write, started_ns, code) -> None:
        self.root, self.renderer, self.out_dir, self.tasks_dir = root, renderer, out_dir, tasks_dir
        self.write, self.started_ns, self.code = write, started_ns, code


class Job(_Slots):
    """Run ``task`` (``manifesto.tasks.Task``: RENDER, or MONITORING for a monitoring target)
    on ``request`` (a ``PairRequest`` or ``MonitoringRequest``) for ``pair`` (target, cluster
    name), in ``context`` (code fingerprint, option values); the artifact goes to
    ``out_base`` + its suffix."""

    __slots__ = ("pair", "task", "request", "context", "out_base")

    def __init__(self, pair, task, request, context, out_base) -> None:
        self.pair, self.task, self.request = pair, task, request
        self.context, self.out_base = context, out_base


class JobResult(_Slots):
    """The outcome of one job: status "ok", "skipped" or "failed", and what it read.

    ``key`` is empty when the outcome cannot be cached (an error that did not say
    which files it read); ``digests`` is None when an input changed during the build.
    ``JobResult(pair, status, message)`` is a failure that read nothing; a job that ran
    comes from :meth:`of`.
    """

    __slots__ = ("pair", "status", "suffix", "art_digest", "message", "key",
                 "inputs", "digests", "stats", "out", "budget", "products", "warnings")

    def __init__(self, pair, status, message="") -> None:
        self.pair, self.status, self.message = pair, status, message
        self.suffix = self.art_digest = self.key = ""
        self.inputs, self.digests, self.stats, self.out = (), None, (), None
        self.budget = None  # the artifact's GPU budget (plain data), when the renderer gives one
        self.products = ()  # store keys of the pair's task products (manifesto.tasks.memo)
        self.warnings = ()  # the task's warnings (data): the build says each once, in its own process

    @classmethod
    def of(cls, pair, outcome, art_digest: str, key: str, read: tuple, out) -> JobResult:
        """The result of a task that ran: status, reason, suffix, budget and products from its
        ``outcome`` (a ``manifesto.tasks.Outcome``); ``read``: the input keys, their digests
        (None when one changed during the build) and stat entries; ``out``: what
        ``write_artifact`` returned (None when nothing was written)."""
        result = cls(pair, outcome.status, outcome.reason)
        result.suffix, result.art_digest, result.key = outcome.suffix, art_digest, key
        result.inputs, result.digests, result.stats = read
        result.out, result.budget, result.products = out, outcome.budget, tuple(outcome.products)
        result.warnings = tuple(getattr(outcome, "warnings", ()))
        return result


def _init_worker(renderer: str, cache_key: bytes) -> None:
    """A pool worker's start: end with the build process, take its cache key (the entries a
    worker stores must verify in the parent, even when the key is one process's own), load
    the renderer once. The settings travel with each batch (``execute_batch``), not in a
    module global."""
    from manifesto.edge.trust import adopt

    _exit_with_parent(os.getppid())
    adopt(cache_key)
    renderers.load(renderer)


def _exit_with_parent(parent: int) -> None:
    """End this worker when the build process dies (say, killed with SIGKILL).

    A pool worker otherwise waits for work forever, holding the inherited build
    lock. Leaving mid-write is safe: artifacts only appear through ``os.replace``.
    """
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


#: From this many jobs on, a build hashes with OpenSSL (its import costs about what hashing
#: seven artifacts with the builtin SHA-256 does).
_MANY = 8


def run_jobs(jobs: list, settings: JobSettings, n_jobs: int, on_result, render=None) -> None:
    """Run ``jobs``, calling ``on_result(result)`` as each one finishes; ``render`` is an
    injected run function (default: the renderer module's ``run``)."""
    if len(jobs) >= _MANY:
        from manifesto.util.hashing import for_many

        for_many()  # worth OpenSSL's import: every artifact is hashed (before the pool forks)
    if n_jobs <= 1 or len(jobs) <= 1 or render is not None:
        run = render or renderers.load(settings.renderer).run
        memo, outs = _memo(settings), Outs(settings.out_dir)
        try:
            for job in jobs:
                on_result(execute(job, settings, run, memo, outs))
        finally:
            outs.close()
        return
    _run_pool(jobs, settings, min(n_jobs, len(jobs)), on_result)


def _run_pool(jobs: list, settings: JobSettings, n_jobs: int, on_result) -> None:
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    import gc

    method = "fork" if sys.platform == "linux" and sys.version_info < (3, 12) else "forkserver"
    prepare = getattr(renderers.load(settings.renderer), "prepare", None)
    if method == "fork" and prepare is not None:
        prepare()  # the workers inherit the imports and validators instead of each making them
    gc.freeze()  # inherited objects stay out of the workers' collections: no copy-on-write of them
    context = multiprocessing.get_context(method)
    from manifesto.edge.trust import key as cache_key

    with ProcessPoolExecutor(n_jobs, mp_context=context, initializer=_init_worker,
                             initargs=(settings.renderer, cache_key())) as pool:
        try:
            futures = {pool.submit(execute_batch, settings, batch): batch for batch in _batches(jobs, n_jobs)}
        finally:
            gc.unfreeze()  # the workers are forked (at the first submit): the parent collects as before
        for future in as_completed(futures):
            try:
                results = future.result()
            except BrokenProcessPool as exc:
                results = [JobResult(job.pair, Status.FAILED, f"a worker process died: {exc}") for job in futures[future]]
            except Exception as exc:  # pickling trouble and the like: still one failure per pair
                results = [JobResult(job.pair, Status.FAILED, f"internal error: {exc!r}") for job in futures[future]]
            for result in results:
                on_result(result)


def _batches(jobs: list, n_jobs: int) -> list[list]:
    """Jobs in batches: few enough to save round trips, many enough to balance load.

    A monitoring job reads every spec its cluster runs, so it takes as long as dozens of
    pairs: each one is a batch of its own, sent first, so the other workers render pairs
    meanwhile instead of waiting for it at the end. Pair batches shrink towards the end
    (an eighth of what is left per worker, 16 at most): the last ones are single pairs, so
    no worker finishes a long batch while the others have nothing left to take."""
    from manifesto.tasks import Task

    heavy = [[job] for job in jobs if job.task in (Task.MONITORING, Task.GITOPS)]
    pairs = [job for job in jobs if job.task not in (Task.MONITORING, Task.GITOPS)]
    batches, start = [], 0
    while start < len(pairs):
        size = max(1, min(16, (len(pairs) - start) // (n_jobs * 8)))
        batches.append(pairs[start:start + size])
        start += size
    return heavy + batches


def execute_batch(settings: JobSettings, jobs: list) -> list:
    """``execute`` each job of a batch (the unit sent to a worker process, with its settings),
    with one memo: a file the batch's pairs share is read once."""
    run, memo, outs = renderers.load(settings.renderer).run, _memo(settings), Outs(settings.out_dir)
    try:
        return [execute(job, settings, run, memo, outs) for job in jobs]
    finally:
        outs.close()


def _memo(settings: JobSettings):
    """The memo of this build in this process: the build's store (a product that cannot be
    written, or a damaged one, is a miss: the pair's own result entry, written next, reports
    a store that is in the way), its code fingerprint, the process's parse products."""
    from manifesto.store import Store
    from manifesto.tasks import pair
    from manifesto.tasks.memo import Tasks

    store = Store(settings.tasks_dir, warn=_ignore, root=settings.root)
    return Tasks(store, settings.code, settings.started_ns - _EDIT_WINDOW_NS, pair.PRODUCTS, hash_file)


def execute(job: Job, settings: JobSettings, run, memo, outs=None) -> JobResult:
    """Run one job's task (in a worker or in-process) through ``run`` and the build's
    ``memo``, and store its outcome; its artifact is written through ``outs`` (an
    :class:`Outs`), else by ``write_artifact``."""
    from manifesto.tasks import Outcome

    try:
        outcome = run(job.task, job.request, memo)
    except Exception:  # a bug in the renderer: report it with the pair, keep going
        return JobResult(job.pair, Status.FAILED, "internal error in the renderer:\n" + traceback.format_exc())
    if not isinstance(outcome, Outcome):
        return JobResult(job.pair, Status.FAILED, f"internal error in the renderer: it returned a "
                                               f"{type(outcome).__name__}, not an Outcome")
    inputs = outcome.inputs
    if not inputs and outcome.status != Status.OK:
        if outcome.status == Status.FAILED:  # without the files it read, the error cannot be cached
            return JobResult(job.pair, Status.FAILED, outcome.reason)
        inputs = _named_files(job)  # an incompatible pair that did not say: the files it was given
    try:
        return _finish(job, settings, memo, outcome, inputs, outs)
    except OSError as exc:  # a full disk, a read-only out/: this pair fails, the others go on
        return JobResult(job.pair, Status.FAILED, _store_error(settings, job.out_base + outcome.suffix, exc))


def _ignore(message: str) -> None:
    """A store's ``warn`` that says nothing (see ``_memo``)."""


def _named_files(job: Job) -> list[str]:
    """The files ``job``'s request names: its spec (or specs), cluster and routing profile; a
    gitops target's BUILD.yaml and each covered deployment's."""
    from manifesto.tasks import Task

    request = job.request
    if job.task == Task.GITOPS:
        named = [request.buildfile]
        for dep in request.deployments:
            routing = dep.options.routing_profile
            named += [dep.spec, dep.cluster, *([routing] if routing else [])]
        return named
    specs = list(request.specs) if job.task == Task.MONITORING else [request.spec]
    routing = request.options.routing_profile
    return [*specs, request.cluster, *([routing] if routing else [])]


def _finish(job, settings, memo, outcome, inputs, outs=None) -> JobResult:
    from manifesto.build_graph.keys import pair_key
    from manifesto.store import Store
    from manifesto.tasks.entries import ResultEntry

    status, suffix, text, reason = outcome.status, outcome.suffix, outcome.text, outcome.reason
    keys, digests, stats, steady = _hash_inputs(job, settings, memo, inputs)
    data = text.encode()
    text_digest = outcome.text_digest or digest(data)  # the render product's, when it has one
    art_digest = text_digest if status == Status.OK else ""
    key = pair_key(settings.renderer, job.pair, job.context, keys, digests)
    if steady:
        entry = ResultEntry(key, f"render {job.pair[0]} @ {job.pair[1]}", status, suffix, text, text_digest, reason,
                            keys, digests, outcome.budget, tuple(outcome.products))
        # Through the memo's store (its shard folders stay open: never through a symlink in
        # out/); when it cannot write, a store that raises says why.
        if not memo.store.put(entry):
            Store(settings.tasks_dir, root=settings.root).put(entry)
    out = None
    if settings.write and status == Status.OK:
        rel = job.out_base + suffix
        out = outs.write(rel, data) if outs is not None else write_artifact(settings.out_dir, rel, data)
    return JobResult.of(job.pair, outcome, art_digest, key, (keys, digests if steady else None, stats), out)


def _hash_inputs(job: Job, settings: JobSettings, memo, inputs):
    """Root-relative input keys, their digests (the memo's digest task: each file read once
    per build), stat entries, and whether all held still."""
    root = settings.root
    prefix = os.path.join(root, "")
    paths = {os.path.abspath(p) for p in (*inputs, *_named_files(job))}
    keys, digests, stats, steady = [], [], [], True
    for path in sorted(paths):
        key = path[len(prefix):] if path.startswith(prefix) else path
        hashed = memo.digest(path)
        if hashed.digest is None:
            keys.append(key), digests.append("-")
            steady = False
            continue
        sig, value, trusted = hashed.signature, hashed.digest, hashed.trusted
        steady = steady and sig.mtime_ns < settings.started_ns - _EDIT_WINDOW_NS
        keys.append(key), digests.append(value), stats.append((key, sig, value, trusted))
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return tuple(keys[i] for i in order), tuple(digests[i] for i in order), stats, steady


def _store_error(settings: JobSettings, rel: str, exc: OSError) -> str:
    """Why the result could not be stored: the path in the way, else the system's reason."""
    from manifesto.build_graph.workspace import wrong_type

    out = os.path.dirname(settings.out_dir)
    tasks = os.path.relpath(settings.tasks_dir, out)
    for base, parts, leaf_is_dir in ((out, tasks.split(os.sep), True), (out, ["out", *rel.split("/")], False)):
        for i in range(1, len(parts) + 1):
            is_dir = leaf_is_dir or i < len(parts)
            problem = wrong_type(os.path.join(base, *parts[:i]), is_dir)
            if problem:
                return f"cannot store the result: {'/'.join(parts[:i])} {problem}; remove it"
    from manifesto.edge.fs import UnsafePath

    if isinstance(exc, UnsafePath) and exc.filename:  # deeper in the store: a shard planted as a link
        from manifesto.edge.escape import terminal

        shown = os.path.relpath(exc.filename, out)
        shown = exc.filename if shown.startswith("..") else shown
        return f"cannot store the result: {terminal(shown)} {terminal(exc.strerror)}; remove it (or run `manifesto clean`)"
    return f"cannot store the result in out/{rel}: {exc.strerror or exc}"


def write_artifact(out_dir: str, rel: str, data: bytes):
    """Make ``out_dir/rel`` hold ``data``, writing only when the bytes differ.

    Returns ``(rel, signature, trusted, wrote)`` for the stat cache.
    """
    outs = Outs(out_dir)
    try:
        return outs.write(rel, data)
    finally:
        outs.close()


class Outs:
    """The artifact writer of one run of jobs (a build's, or a worker's batch): each out/
    folder they write into is walked to once, every component opened without following a
    symlink (``edge.fs.write_atomic``'s confinement), and kept open until :meth:`close` (a build
    writes thousands of artifacts into a few folders; the walk from ``/`` is an open and a
    close per path component). The artifact file itself is checked on every write."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self._dirs: dict = {}  # folder path -> descriptor

    def write(self, rel: str, data: bytes):
        """``write_artifact``: ``out_dir/rel`` made to hold ``data``, written only when the bytes
        differ; ``(rel, signature, trusted, wrote)`` for the stat cache."""
        from manifesto.edge.fs import write_in

        path = os.path.join(self.out_dir, rel)
        read_ns = time.time_ns()
        if holds(path, data):
            sig = signature(path)
            return rel, sig, not is_racy(sig.mtime_ns, read_ns), False
        folder, name = os.path.split(path)
        fd = self._folder(folder)
        try:
            write_in(fd, name, data, path, suffix=TMP_MARK, durable=False)
        except FileNotFoundError:  # the folder went since it was opened: walk to it again
            os.close(self._dirs.pop(folder))
            write_in(self._folder(folder), name, data, path, suffix=TMP_MARK, durable=False)
        return rel, signature(path), True, True

    def _folder(self, folder: str) -> int:
        from manifesto.edge.fs import open_dir_below

        fd = self._dirs.get(folder)
        if fd is None:
            if len(self._dirs) >= 64:  # never many descriptors at once
                self.close()
            fd = self._dirs[folder] = open_dir_below(os.sep, folder)
        return fd

    def close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()
