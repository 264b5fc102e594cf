"""The build engine: plan the selected pairs, take the lock, execute, report and save.

A build first plans without the lock (``planning.plan``): when every selected pair's
inputs, context and artifact match the manifest, it reports and returns, having imported
neither msgspec nor the renderer nor a YAML parser. Otherwise it takes the lock, plans
again (another build may just have finished), restores what the task cache holds, renders
the rest (each pair's job: ``jobs.job``), prunes ``out/`` and saves the manifest
(``saving``).

Modes: "write" (``build``), "check" (``build --check``: compare, write no artifact)
and "plan" (``matrix``/``deps``/``dependents``: just know every pair's outcome).
"""

from __future__ import annotations

import gc
import os
import time

import manifesto.build_graph.outdir as outdir
import manifesto.build_graph.saving as saving
from manifesto.build_graph.fingerprint import code_digest
from manifesto.build_graph.planning import Item, artifact_key, artifact_rel, needs_lock, plan
from manifesto.edge.signatures import signature
from manifesto.build_graph.sources import load_graph
from manifesto.build_graph.store_bound import StoreBound
from manifesto.build_graph.state import PairRecord, load_state
from manifesto.build_graph.statcache import StatCache
from manifesto.tasks.status import Need, Source, Status

__all__ = ["BuildRequest", "Session", "run"]


class BuildRequest:
    """What to build: addresses, an optional cluster filter and changed-since rev, the shard
    ``(i, n)`` of the selection this runner takes, and the shared cache to use (``remote``:
    a ``remote.RemoteSettings``, or None for BUILD.yaml's ``remote_cache``, if any) and
    ``store_limit``, ``MANIFESTO_STORE_LIMIT``'s text as the entry point's settings give it."""

    __slots__ = ("addresses", "clusters", "changed_since", "mode", "jobs", "shard", "remote", "store_limit")

    def __init__(self, addresses, clusters=(), changed_since=None, mode="write", jobs=None, shard=None,
                 remote=None, store_limit=None) -> None:
        self.addresses, self.clusters, self.changed_since = tuple(addresses), tuple(clusters), changed_since
        self.mode, self.jobs, self.shard, self.remote = mode, jobs, shard, remote
        self.store_limit = store_limit  # MANIFESTO_STORE_LIMIT's text, as the caller's settings give it


def run(request: BuildRequest, ws, renderer: str, ui, render=None):
    """Carry out ``request`` in workspace ``ws``; returns ``(report, session)``.

    A file or directory in ``out/`` of the wrong type (or one the build may not touch) is
    one BuildError naming it, not a traceback.
    """
    try:
        return _run(request, ws, renderer, ui, render)
    except OSError as exc:
        from manifesto.build_graph.workspace import os_error

        raise os_error(ws, exc) from None


def _run(request: BuildRequest, ws, renderer: str, ui, render=None):
    """Plan, lock, execute, report, save."""
    from manifesto.build_graph.report import Report

    session, items = _look(request, ws, renderer, ui)
    if not needs_lock(items, request.mode, ws, session.graph, session.graph_changed):
        if request.mode == "check":
            session.sweep()
        saving.save_opportunistically(ws, session.state, session.state_sig, session.stat.changed or session.refreshed)
        return Report(session, items, request.mode, request.addresses), session
    with outdir.BuildLock(ws.lock_path, ui.wait) as lock:
        if signature(ws.state_path) != session.state_sig:  # another build finished meanwhile
            session, items = _look(request, ws, renderer, ui)
        session.unfinished = lock.begin_writes()
        session.execute(items, request, render)
        report = Report(session, items, request.mode, request.addresses)
        saving.save(ws, session.state, session.stat, session.graph, session.untidy)
        if session.cleaned or not session.unfinished:  # a check keeps a killed build's mark
            lock.end_writes()
    return report, session


def _look(request: BuildRequest, ws, renderer: str, ui):
    """``(session, items)``: one look at the workspace and the plan of ``request`` over it."""
    with _no_gc():  # a plan allocates many small tuples and no cycles
        session = Session(ws, renderer, ui)
        return session, plan(request, ws, session.graph, session.state, session.stat, lambda: session.code)


class Session:
    """One look at the workspace: the manifest (``state``), the stat cache (``stat``), the
    graph and the code fingerprint, and the execution of a plan over them: restoring from
    the store or the remote cache, rendering, recording each result. Planning is
    ``planning``, each pair's job ``jobs``, saving the manifest ``saving``. The store's bound
    is ``bound`` (``store_bound.StoreBound``), the remote cache ``shared``
    (``remote.SharedCache``, made by ``remote.shared_cache``) and the report of what happened
    ``report.Report`` over this session."""

    def __init__(self, ws, renderer: str, ui) -> None:
        self.ws, self.renderer, self.ui = ws, renderer, ui
        self.started_ns = time.time_ns()
        self.state_sig = signature(ws.state_path)
        self.state = load_state(ws.state_path, ui.warn)
        self.stat = StatCache(ws.root, self.state.stat)
        self.bound = StoreBound(ws, self.state, ui)
        loaded = load_graph(ws, self.state, self.stat)
        self.graph = loaded.graph
        self.graph_changed = loaded.changed  # targets or options may differ from the manifest's
        self.refreshed = loaded.refreshed  # cached listings were re-read (worth saving after a no-op)
        self._code = None
        self.problems: list[tuple[str, str]] = []
        self.pruned: list[str] = []
        self.progress = 0
        self.write = False
        self.shared = None  # the remote cache, when one is configured and there is work
        self.unfinished = False  # the last build that wrote out/ was killed (see outdir.BuildLock)
        self.cleaned = False  # what a killed build may have left is gone
        self.references_changed = False  # a record now names other files or artifacts than before

    @property
    def code(self) -> str:
        """The code fingerprint (computed on first use: ``list`` never needs it)."""
        if self._code is None:
            cached = self.state.code
            self._code = code_digest(self.state, self.stat, self.renderer)
            # New directory signatures (a __pycache__ or an editor's backup appeared) give the
            # same fingerprint; unsaved, every later no-op would import the renderer again.
            self.refreshed = self.refreshed or self.state.code is not cached
        return self._code

    @property
    def untidy(self) -> bool:
        """Whether the manifest may hold records or stat entries nothing refers to: the
        targets, their files or the code changed, or a record now names other inputs or
        another artifact than before (``saving.save`` then drops them)."""
        return self.graph_changed or self.refreshed or self.references_changed

    # -- execution ---------------------------------------------------------

    def execute(self, items: list[Item], request: BuildRequest, render=None) -> None:
        """Evaluate every stale pair, then prune (write) or inspect (check) ``out/``."""
        from manifesto.build_graph.jobs import job
        from manifesto.build_graph.remote import shared_cache
        from manifesto.store import Store
        from manifesto.tasks import entries

        entries.install()  # the codecs of the entries it reads and writes

        limit = self.bound.limit(request.store_limit)  # a bad MANIFESTO_STORE_LIMIT stops the build before it renders
        self.tasks = Store(self.ws.tasks_dir, self.ui.warn, root=self.ws.root)
        self.write = request.mode == "write"
        pending = [i for i in items if i.kind in (Need.STALE, Need.RESTORE) and not self._from_cache(i)]
        jobs, by_pair = [], {i.pair: i for i in pending}  # a job's result finds its item
        self.shared = shared_cache(self, request.remote) if pending else None
        for item in pending:
            if self.shared is None or not self.shared.fetch(item):
                jobs.append(job(item, self.ws, self.graph, self.renderer))
        if jobs:
            self._render(jobs, by_pair, request.jobs, render)
        if pending:
            self.bound.keep(self.tasks, len(pending), limit)
        if request.mode != "plan":
            self.sweep()

    def _from_cache(self, item: Item) -> bool:
        key = item.old.key if item.kind == Need.RESTORE else self._current_key(item)
        entry = self.tasks.get(key) if key else None
        if entry is None or getattr(entry, "digests", None) is None:  # absent, or not a pair's result
            return False
        if entry.status == Status.OK and not entry.suffix:  # a command's result, not an artifact
            return False
        self.apply_entry(item, entry)
        return True

    def _current_key(self, item: Item) -> str | None:
        from manifesto.build_graph.keys import pair_key

        rec = item.old
        if rec is None:
            return None
        digests = [self.stat.digest(p) for p in rec.inputs]
        if None in digests:
            return None
        return pair_key(self.renderer, item.pair, item.context, rec.inputs, digests)

    def apply_entry(self, item: Item, entry) -> None:
        """Settle ``item`` from a stored result ``entry`` (this store's, or the remote cache's
        made local): its record, and its artifact written to out/ when the build writes."""
        from manifesto.load.digest import digest

        art_digest = digest(entry.text.encode()) if entry.status == Status.OK else ""
        self._record(item, PairRecord(item.context, entry.inputs, entry.digests, entry.key,
                                      entry.status, entry.suffix, art_digest, entry.reason,
                                      self._written(item, entry.status, entry.suffix, art_digest),
                                      entry.budget))
        item.settle(entry.status, entry.suffix, art_digest, entry.reason, Source.STORE)
        if self.write and entry.status == Status.OK:
            self._store_artifact(item, entry.text.encode())

    def _store_artifact(self, item: Item, data: bytes) -> None:
        from manifesto.build_graph.executor import write_artifact

        if self.stat.digest(artifact_key(self.ws, self.graph, item.pair, item.suffix)) == item.art_digest:
            return
        out = write_artifact(self.ws.out_dir, artifact_rel(self.graph, item.pair, item.suffix), data)
        self._record_out(item, out)

    def _record_out(self, item: Item, out) -> None:
        rel, sig, trusted, wrote = out
        self.stat.record(self.ws.out_key(rel), sig, item.art_digest, trusted)
        item.wrote = item.wrote or wrote

    def _written(self, item: Item, status: str, suffix: str, art_digest: str) -> str:
        """The digest of what out/ holds for the pair by the build's hand after this one:
        a build writes the new artifact (or prunes it when the pair is skipped), a failed
        render leaves the last good one and ``--check`` writes nothing."""
        if self.write and status != Status.FAILED:
            return art_digest if status == Status.OK else ""
        if status == Status.OK and self.stat.digest(artifact_key(self.ws, self.graph, item.pair, suffix)) == art_digest:
            return art_digest  # out/ holds just what the build produces, whoever wrote it
        return item.old.written if item.old is not None else ""

    def _record(self, item: Item, rec: PairRecord) -> None:
        old = self.state.pairs.get(item.pair)
        if old is None or old.inputs != rec.inputs or old.status != rec.status or old.suffix != rec.suffix:
            self.references_changed = True  # a file or an artifact the manifest named may be named no more
        self.state.pairs[item.pair] = rec

    def _render(self, jobs: list, by_pair: dict, n_jobs, render) -> None:
        from manifesto.build_graph.executor import JobSettings, run_jobs

        settings = JobSettings(self.ws.root, self.renderer, self.ws.out_dir, self.ws.tasks_dir,
                            self.write, self.started_ns, self.code)
        total = len(jobs)
        autosave = saving.Autosave(self.ws.state_path, self.state)

        def on_result(result) -> None:
            self._apply_result(by_pair[result.pair], result)
            self.progress += 1
            self.ui.progress(self.progress, total, self.graph.address(result.pair[0]) + " @ " + result.pair[1])
            autosave.now_and_then()

        run_jobs(jobs, settings, n_jobs or _default_jobs(jobs), on_result, render)
        self.ui.progress_done()

    def _apply_result(self, item: Item, result) -> None:
        if result.warnings:  # found by the task (in a worker, maybe), said here once in the run
            from manifesto.errors import say_warnings

            say_warnings(result)
        for key, sig, value, trusted in result.stats:
            self.stat.record(key, sig, value, trusted)
        if result.status == Status.FAILED and not result.key:  # not cacheable: the old record stays
            self.references_changed = self.references_changed or bool(result.stats)
            item.settle(Status.FAILED, message=result.message, how=Source.RENDER)
            return
        self._record(item, PairRecord(item.context, result.inputs, result.digests, result.key,
                                      result.status, result.suffix, result.art_digest, result.message,
                                      self._written(item, result.status, result.suffix, result.art_digest),
                                      result.budget))
        item.settle(result.status, result.suffix, result.art_digest, result.message, Source.RENDER)
        if result.out is not None:
            self._record_out(item, result.out)
        if self.shared is not None and result.key and result.digests is not None:
            self.shared.publish(item, result)

    # -- out/ --------------------------------------------------------------

    def sweep(self) -> None:
        """Prune (write) or report (check) artifacts that no current pair produces
        (``build_graph.sweep``)."""
        from manifesto.build_graph.sweep import sweep

        sweep(self)


#: Without ``--jobs``, fewer pairs than this render in the build's own process: starting a pool
#: costs about what a dozen renders do (an edited spec re-renders a few).
_POOL_FROM = 16


def _default_jobs(jobs: list) -> int:
    """Processes for ``jobs`` when ``--jobs`` is not given: one per CPU, or only this one for a
    few pairs (a monitoring or gitops job, which reads many specs, still gets the pool)."""
    from manifesto.tasks import Task

    if len(jobs) < _POOL_FROM and all(job.task not in (Task.MONITORING, Task.GITOPS) for job in jobs):
        return 1
    return os.cpu_count() or 1


class _no_gc:
    """Pause the cyclic garbage collector: loading the manifest would trigger it
    dozens of times for nothing (its tuples hold no cycles)."""

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc) -> None:
        if self.was_enabled:
            gc.enable()
