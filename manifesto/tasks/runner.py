"""``run(task, request, store)``: the one way to run a task (its requests and products are
in :mod:`manifesto.tasks.core`; the pair's work is :mod:`manifesto.tasks.pair`)."""

from __future__ import annotations

from manifesto.tasks.core import ParsedFile, Task

__all__ = ["run"]


def run(task: Task, request, store):
    """Run ``task`` on ``request``, memoised through ``store`` (a ``manifesto.tasks.memo.Tasks``:
    a store, the code fingerprint its products are keyed on, and this build's file reads).

    DIGEST (a :class:`FileRequest`) gives a :class:`FileDigest`; PARSE (a
    :class:`ParseRequest`) gives a :class:`ParsedFile` (a file that does not parse raises its
    YamlSyntaxError: it has no outcome to carry it); RESOLVE, RENDER and EXPLAIN (a
    :class:`PairRequest`, its spec and cluster by path or as the caller loaded them),
    MONITORING (a :class:`MonitoringRequest`) and GITOPS
    (a :class:`GitopsRequest`) give an :class:`Outcome`. A ManifestoError of the inputs is in
    the outcome, never raised."""
    if task is Task.DIGEST:
        return store.digest(request.path)
    if task is Task.PARSE:
        return ParsedFile(request.name, *store.parse_file(request.path, request.name, request.within))
    from manifesto.tasks import pair

    if task is Task.MONITORING:
        return pair.monitoring(request, store)
    if task is Task.GITOPS:
        return pair.gitops(request, store)
    return pair.pair(task, request, store)
