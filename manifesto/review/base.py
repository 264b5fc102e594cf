"""``diff --base REV``: what the rendered artifacts at a git revision become in the working
tree, read as a reviewer would (:mod:`manifesto.review.semdiff` says what each change means
for a running deployment). The build graph names the artifacts; git blobs come through
the edge (``manifesto.edge.git``)."""

from __future__ import annotations

import os

__all__ = ["semantic_diff"]


def semantic_diff(base: str, addresses=(), *, root=None, totals_when_unchanged: bool = True):
    """A ``semdiff.BuildDiff`` of ``out/`` at git revision ``base`` against the working tree,
    limited to the artifacts ``addresses`` produce (every artifact when none is given);
    ``totals_when_unchanged``: as ``semdiff.diff_builds``."""
    from manifesto.build_graph.workspace import find_workspace
    import manifesto.review.semdiff as semdiff

    ws = find_workspace(root)
    old = semdiff.git_artifacts(ws.root, base)
    new = semdiff.worktree_artifacts(ws.out_dir)
    if addresses:
        wanted = _artifacts_of(addresses, ws.root)
        old = {k: v for k, v in old.items() if _stem(k) in wanted}
        new = {k: v for k, v in new.items() if _stem(k) in wanted}
    return semdiff.diff_builds(base, old, new, totals_when_unchanged=totals_when_unchanged)


def _stem(path: str) -> str:
    return os.path.splitext(path)[0]


def _artifacts_of(addresses, root) -> set[str]:
    """Artifact paths (relative to out/, without suffix) that ``addresses`` produce."""
    from manifesto.build_graph.api import list_targets, matrix

    targets = list_targets(addresses, root=root)
    wanted = {f"deploy/{t.name}" for t in targets if t.kind == "deployment"}
    wanted |= {f"gitops/{t.name}" for t in targets if t.kind == "gitops"}
    models = [t.address for t in targets if t.kind == "model"]
    if models:
        for row in matrix(models, root=root):
            if "artifact" in row:
                wanted.add(_stem(row["artifact"].split("/", 1)[1]))
    return wanted
