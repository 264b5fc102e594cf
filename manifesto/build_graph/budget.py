"""GPU budget of built artifacts, for the build report (text totals per cluster and JSON).

The budget is a pure function of an artifact's inputs (``manifesto.resolve.budget`` on the
Plan), so it is cached by artifact digest under ``out/.cache/budgets/``: a build that renders
nothing reads these small JSON files and never imports the renderer. A missing entry (first
build after a render, or a cache from an older version) is computed by the renderer's optional
``budget_pair(model, cluster, options)`` and written atomically; a renderer without that hook
(the engine tests' fakes) gives no budget.
"""

from __future__ import annotations

import json
import os

__all__ = ["pair_budgets", "budget_lines"]


def _cached(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None  # missing or corrupt: compute it again
    return value if isinstance(value, dict) and isinstance(value.get("gpus"), int) else None


def _compute(session, item) -> dict | None:
    from manifesto.build_graph import renderer as renderers
    from manifesto.errors import ManifestoError

    module = renderers.load(session.renderer)
    hook = getattr(module, "budget_pair", None)
    if hook is None:
        return None
    job = session._job(item)
    options = dict(job.options)
    if options.get("routing_profile"):
        options["routing_profile"] = os.path.join(session.ws.root, options["routing_profile"])
    try:
        return hook(job.model, job.cluster, module.RenderOptions(**options))
    except (ManifestoError, OSError):  # the inputs changed since the render: no budget this time
        return None


def pair_budgets(session, items) -> dict:
    """pair -> budget dict (gpus, nodes, pods, accelerator, roles, hourly cost) of each built pair."""
    from manifesto.fsutil import write_atomic

    folder = os.path.join(session.ws.cache_dir, "budgets")
    out = {}
    for item in items:
        if item.status != "ok" or not item.art_digest:
            continue
        path = os.path.join(folder, item.art_digest.replace(":", "-") + ".json")
        budget = _cached(path)
        if budget is None:
            budget = _compute(session, item)
            if budget is None:
                continue
            try:
                os.makedirs(folder, exist_ok=True)
                write_atomic(path, json.dumps(budget, sort_keys=True), durable=False)
            except OSError:
                pass  # a read-only cache only costs the next build a recompute
        out[item.pair] = budget
    return out


def budget_lines(rows: list[dict]) -> list[str]:
    """One line per cluster: the GPUs, nodes and pods its built artifacts ask for, and their
    hourly cost when every priced artifact's accelerator has a price."""
    totals: dict[str, dict] = {}
    for row in rows:
        b = row.get("budget")
        if not b:
            continue
        t = totals.setdefault(row["cluster"], {"gpus": 0, "nodes": 0, "pods": 0, "artifacts": 0, "cost": 0.0,
                                               "priced": True})
        for key in ("gpus", "nodes", "pods"):
            t[key] += b[key]
        t["artifacts"] += 1
        if b.get("hourly_cost") is None:
            t["priced"] = False
        else:
            t["cost"] += b["hourly_cost"]
    lines = []
    for cluster in sorted(totals):
        t = totals[cluster]
        cost = f", {round(t['cost'], 4):g} per hour" if t["priced"] else ""
        lines.append(f"budget      {cluster}: {t['gpus']} GPUs, {t['nodes']} nodes, {t['pods']} pods over "
                     f"{t['artifacts']} artifact{'' if t['artifacts'] == 1 else 's'}{cost}")
    return lines
