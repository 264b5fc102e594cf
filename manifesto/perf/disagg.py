"""Prefill/decode (xPyD) layouts for ``plan``: where serving prefill and decode on separate
workers beats every aggregated layout of the same cluster and accelerator at the targets.

Every figure is AIConfigurator's disaggregated estimate (``aiconfigurator`` 0.12.0,
``cli/api.py cli_estimate(mode="disagg")``, what its ``cli estimate --estimate-mode disagg``
runs: a static prefill run and a static decode run, rate-matched over the workers);
``Engine.disagg`` makes the call. Nothing of that model is repeated here. What this module
decides is which layouts to ask about, and the memory fit decides which may be asked:

* role layouts: the aggregated proposals of the cluster and accelerator without pipeline
  parallelism (each fits and starts as one engine), up to twice the GPUs of the smallest, and
  without expert parallelism wider than one of AIConfigurator's nodes (wide EP: resolving its
  communication loads the system's whole MoE tables, seconds each, and the search keeps
  ``plan`` within its time budget);
* decode: 1, 2 or 4 workers holding the requests in flight (``--concurrency``), each DP rank
  a batch of ``ceil(concurrency / (workers x dp))``; a worker count whose KV caches cannot hold
  them (the memory fit's sequences per engine) is not asked;
* prefill: one request at a time per worker (batch 1: the shortest time to first token),
  and as many workers as the decode side's request rate needs
  (``ceil(decode workers x decode requests/s / prefill requests/s)``, then one fewer and one
  more, the best kept); prefill and decode TP sizes must divide one another (vLLM's NIXL
  connector, ``manifesto.resolve.pd_set.check_tp_ratios``);
* per cluster and accelerator, the ``PROBES`` best combinations by the two probes' figures are
  estimated as a whole, the ``KEEP`` best of those resolved as a P/D spec (the gate: the same
  resolution and memory fit as ``render``), and each compared with the best aggregated layout
  there by plan's ranking (meets the targets, then cost per output token).
"""

from __future__ import annotations

import copy
import math
import re

__all__ = ["RoleWorkers", "PDOutcome", "PDReport", "search", "spec_data", "spec_text", "MAX_WORKERS", "DECODE_WORKERS"]

#: The most prefill workers one xPyD set is given.
MAX_WORKERS = 8
#: Decode worker counts asked about.
DECODE_WORKERS = (1, 2, 4)
#: Combinations per cluster and accelerator estimated as a whole, and resolved as a spec.
PROBES = 6
KEEP = 3
#: Role layouts: the aggregated proposals of at most SPAN times the smallest one's GPUs.
SPAN = 2
#: vLLM's KV connector for P/D, as the bundled P/D specs and ``plan --topology pd`` set it.
KV_TRANSFER = {"kv_connector": "NixlConnector", "kv_role": "kv_both"}


class RoleWorkers:
    """One side of an xPyD set: an engine layout (a ``capacity.Candidate``, pp 1), its worker
    count (the role's replicas) and the batch per DP rank the estimate assumes."""

    __slots__ = ("layout", "workers", "batch")

    def __init__(self, layout, workers: int, batch: int) -> None:
        self.layout, self.workers, self.batch = layout, workers, batch

    @property
    def key(self) -> tuple:
        lay = self.layout
        return lay.tp, lay.pp, lay.dp, lay.ep, self.workers, self.batch

    @property
    def gpus(self) -> int:
        return self.layout.engine_gpus * self.workers

    def layout_text(self) -> str:
        lay = self.layout
        return f"tp{lay.tp} dp{lay.dp} ep {'on' if lay.ep else 'off'}"

    def text(self) -> str:
        return f"{self.layout_text()} x{self.workers}"

    def to_dict(self) -> dict:
        lay = self.layout
        return {"tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "ep": lay.ep, "nodes_per_worker": lay.nodes,
                "workers": self.workers, "batch_per_rank": self.batch}


class PDOutcome:
    """One xPyD set on one cluster's accelerator, estimated and resolved as a spec (``plan``:
    the resolved ``Plan``; ``against``: the best aggregated proposal there, None when none)."""

    __slots__ = ("cluster", "accelerator", "prefill", "decode", "performance", "data", "plan", "against", "beats")

    def __init__(self, cluster: str, accelerator: str, prefill: RoleWorkers, decode: RoleWorkers, performance) -> None:
        self.cluster, self.accelerator, self.prefill, self.decode = cluster, accelerator, prefill, decode
        self.performance = performance
        self.data: dict | None = None
        self.plan = None
        self.against = None
        self.beats = False

    @property
    def ratio(self) -> str:
        return f"{self.prefill.workers}P{self.decode.workers}D"

    @property
    def budget(self):
        return self.plan.budget

    def text(self) -> str:
        return f"{self.ratio}: prefill {self.prefill.text()}, decode {self.decode.text()}"

    def rank_key(self) -> tuple:
        b = self.budget
        return (rank_head(self.performance), b.gpus, self.cluster, self.accelerator, self.prefill.key, self.decode.key)

    def to_dict(self) -> dict:
        b = self.budget
        against = None
        if self.against is not None:
            lay = self.against.candidate
            against = {"layout": lay.to_dict(), "performance": self.against.performance.to_dict()}
        return {"cluster": self.cluster, "accelerator": self.accelerator, "ratio": self.ratio,
                "prefill": self.prefill.to_dict(), "decode": self.decode.to_dict(), "gpus": b.gpus,
                "nodes": b.nodes, "pods": b.pods, "hourly_price_per_gpu": b.hourly_price, "hourly_cost": b.hourly_cost,
                "beats_aggregated": self.beats, "best_aggregated": against,
                "performance": self.performance.to_dict()}


class PDReport:
    """The search's outcome: ``proposed`` (the sets that beat the aggregated layouts, ranked),
    ``estimated`` (every set estimated and resolved, ranked), ``skipped`` (cluster/accelerator
    -> why none was estimated there) and ``refused`` (a set the resolver refused, with why)."""

    __slots__ = ("proposed", "estimated", "skipped", "refused")

    def __init__(self) -> None:
        self.proposed: list[PDOutcome] = []
        self.estimated: list[PDOutcome] = []
        self.skipped: dict[str, str] = {}
        self.refused: list[tuple[str, str]] = []

    def to_dict(self) -> dict:
        return {"proposed": [{"rank": i, **o.to_dict()} for i, o in enumerate(self.proposed, 1)],
                "estimated": [o.to_dict() for o in self.estimated],
                "not_estimated": [{"where": k, "reason": v} for k, v in sorted(self.skipped.items())],
                "refused": [{"set": k, "reason": v} for k, v in self.refused],
                "search": {"decode_workers": list(DECODE_WORKERS), "max_prefill_workers": MAX_WORKERS,
                           "prefill_batch": 1, "role_layouts": "the aggregated proposals without pipeline "
                           f"parallelism, up to {SPAN} times the GPUs of the smallest, without expert parallelism "
                           "wider than one of AIConfigurator's nodes"}}


def rank_head(p) -> tuple:
    """The part of plan's performance ranking (``LayoutOutcome.perf_rank_key``) an aggregated
    layout and an xPyD set share: meeting the targets, then cost per output token (GPUs per
    output token/s where unpriced); a miss by its margin."""
    if not p.meets:
        return (1, p.worst_margin, 0.0, 0.0)
    priced = p.cost_per_mtok is not None
    return (0, 0.0 if priced else 1.0, p.cost_per_mtok if priced else 0.0,
            1.0 / p.gpu_tokens_s if p.gpu_tokens_s > 0 else math.inf)


def _estimate(raw: dict, source: str, decode: RoleWorkers, gpus: int, hourly_cost: float | None, work):
    from manifesto.perf.engine import Estimate

    est = Estimate(float(raw["ttft"]), float(raw["tpot"]), float(raw["tokens/s"]), float(raw["seq/s"]),
                   decode.batch, source)
    return est.scale(1, gpus, hourly_cost, work)


def _layouts(outcomes) -> list:
    """The role layouts of one cluster and accelerator: (candidate, sequences per engine) of each
    aggregated proposal without PP, at most SPAN times the smallest one's GPUs, fewest GPUs first."""
    seen: dict[tuple, tuple] = {}
    for o in outcomes:
        c = o.candidate
        if c.pp != 1:
            continue
        key = (c.tp, c.dp, c.ep)
        if key not in seen:
            one = copy.copy(c)  # a capacity.Candidate (perf sits below capacity: no import of it)
            one.replicas = 1
            seen[key] = (one, o.concurrency // c.replicas)
    if not seen:
        return []
    smallest = min(c.engine_gpus for c, _ in seen.values())
    roles = [v for v in seen.values() if v[0].engine_gpus <= SPAN * smallest]
    return sorted(roles, key=lambda v: (v[0].engine_gpus, v[0].tp, v[0].dp, v[0].ep))


def _tp_ok(a, b) -> bool:
    small, large = sorted((a.tp, b.tp))
    return large % small == 0


def search(planner, report, start, clusters: list, resolve) -> PDReport:
    """xPyD sets for every cluster and accelerator of ``report`` (``plan_model``'s, with
    performance) that AIConfigurator's tables cover; see the module's docstring. ``resolve(data,
    cluster)``: the spec ``data`` resolved on ``cluster`` as ``render`` resolves it
    (``capacity.resolve_layout``), or a ``ManifestoError``."""
    from manifesto.resolve.accelerator import project_accelerator
    from manifesto.perf.engine import part_of, system_for

    out = PDReport()
    engine, work, model_id = planner.engine, planner.work, planner.model_id
    if start.from_spec:
        out.skipped["every cluster"] = ("plan keeps a spec's roles; start from the model id to be proposed prefill/decode "
                            "layouts")
        return out
    if report.workload.topology not in (None, "aggregated"):
        out.skipped["every cluster"] = "--topology pd lays both roles out alike; leave it out to be proposed xPyD layouts"
        return out
    groups: dict[tuple[str, str], list] = {}
    for o in report.proposed:
        groups.setdefault((o.cluster, o.accelerator), []).append(o)
    by_name = {c.name: c for c in clusters}
    for (cluster_name, accel_name), outcomes in groups.items():
        where = f"{cluster_name}/{accel_name}"
        cluster = by_name[cluster_name]
        accel = project_accelerator(cluster.profile, accel_name)
        part = part_of(cluster, accel_name, accel.gpu_arch)
        system = system_for(part)
        if system is None:
            out.skipped[where] = f"AIConfigurator has no tables for {part or 'this accelerator'} (no roofline for P/D)"
            continue
        if not engine.has_model(model_id):
            out.skipped[where] = f"AIConfigurator {engine.version} has no model config for {model_id}"
            continue
        engine.progress(f"estimating prefill/decode layouts on {where}")
        found, why = _search_one(engine, work, model_id, system, outcomes)
        if not found:
            out.skipped[where] = why
            continue
        best_agg = outcomes[0]  # report.proposed is ranked: the first of a group is its best
        kept = 0
        for pd in found:
            pd.cluster, pd.accelerator = cluster_name, accel_name
            problem = _resolve(pd, start, cluster, accel_name, report, resolve)
            if problem:
                out.refused.append((f"{where} {pd.text()}", problem))
                continue
            b = pd.plan.budget
            pd.performance = pd.performance.scale(1, b.gpus, b.hourly_cost, work)
            pd.against = best_agg
            pd.beats = rank_head(pd.performance) < rank_head(best_agg.performance)
            out.estimated.append(pd)
            kept += 1
            if kept == KEEP:
                break
    out.estimated.sort(key=PDOutcome.rank_key)
    out.proposed = [o for o in out.estimated if o.beats]
    return out


def _search_one(engine, work, model_id: str, system: str, outcomes) -> tuple[list, str]:
    """The best xPyD sets on one system, estimated (not yet resolved), best first, or ([], why)."""
    from manifesto.perf.engine import BACKEND

    per_node = engine.gpus_per_node(system)
    layouts = [(lay, n) for lay, n in _layouts(outcomes)
               if not (lay.ep and per_node and lay.tp * lay.dp > per_node)]
    if not layouts:
        return [], ("every layout that fits here is pipeline-parallel or spreads its experts over more than one "
                    "node (wide EP, left out of the P/D search)")
    kv = outcomes[0].fit.kv_dtype
    price = outcomes[0].budget.hourly_price
    conc = work.concurrency
    # Probe each layout as prefill (one worker, batch 1) and as decode (1, 2, 4 workers at the
    # concurrency): the prefill probe's TTFT and request rate per worker, the decode probe's ITL
    # and request rate per worker.
    prefill: list[tuple] = []
    why = ""
    for lay, _ in layouts:
        raw, version = engine.disagg(model_id, system, RoleWorkers(lay, 1, 1), RoleWorkers(lay, 1, 1), kv, work)
        if raw is None:
            why = version
            continue
        prefill.append((lay, float(raw["ttft"]), float(raw["(p)seq/s/worker"])))
    if not prefill:
        return [], why
    first = prefill[0][0]  # the decode probes' prefill side: a layout the estimator takes
    decode: list[tuple] = []
    for lay, per_engine in layouts:
        for y in DECODE_WORKERS:
            if y * lay.dp > conc or y * per_engine < conc:
                continue  # a worker without a sequence, or KV caches that cannot hold the concurrency
            role = RoleWorkers(lay, y, math.ceil(conc / (y * lay.dp)))
            raw, version = engine.disagg(model_id, system, RoleWorkers(first, 1, 1), role, kv, work)
            if raw is None:
                why = version
                continue
            decode.append((role, float(raw["tpot"]), float(raw["(d)seq/s/worker"])))
    if not prefill or not decode:
        return [], why or "no layout's KV caches hold the concurrency on 4 decode workers or fewer"
    combos = []
    for d, tpot, d_rate in decode:
        for p, ttft, p_rate in prefill:
            if not _tp_ok(p, d.layout) or p_rate <= 0 or d_rate <= 0:
                continue
            x = min(MAX_WORKERS, max(1, math.ceil(d.workers * d_rate / p_rate)))
            rate = min(x * p_rate, d.workers * d_rate)
            gpus = x * p.engine_gpus + d.gpus
            combos.append((_proxy(ttft, tpot, rate * work.osl, gpus, price, work), p, x, d))
    combos.sort(key=lambda c: c[0])
    found = []
    for _, p, x0, d in combos[:PROBES]:
        best = None
        for x in sorted({max(1, x0 - 1), x0, min(MAX_WORKERS, x0 + 1)}):
            pre = RoleWorkers(p, x, 1)
            raw, version = engine.disagg(model_id, system, pre, d, kv, work)
            if raw is None:
                continue
            gpus = pre.gpus + d.gpus
            est = _estimate(raw, f"aiconfigurator {engine.front_version()} {system} {BACKEND} {version} disagg", d, gpus,
                            None if price is None else price * gpus, work)
            if best is None or rank_head(est) < rank_head(best.performance):
                best = PDOutcome("", "", pre, d, est)
        if best is not None:
            found.append(best)
    found.sort(key=lambda o: (rank_head(o.performance), o.prefill.gpus + o.decode.gpus))
    return found, why or "AIConfigurator estimated no prefill/decode combination"


def _proxy(ttft: float, tpot: float, tokens_s: float, gpus: int, price: float | None, work) -> tuple:
    """rank_head's order on the probes' figures (an xPyD set's TTFT is its prefill's, its ITL its
    decode's; its rate the smaller of the two sides')."""
    margins = [v / t - 1 for v, t in ((ttft, work.ttft), (tpot, work.itl)) if t is not None]
    if any(m > 0 for m in margins):
        return (1, max(margins), 0.0, 0.0)
    if price is not None:
        return (0, 0.0, price * gpus / (tokens_s * 3600) * 1e6, 0.0)
    return (0, 1.0, 0.0, gpus / tokens_s)


def _resolve(pd: PDOutcome, start, cluster, accel_name: str, report, resolve) -> str:
    """Resolve ``pd`` as a P/D spec on ``cluster`` (``render``'s resolution and memory fit):
    sets ``pd.data`` and ``pd.plan``, or returns why not."""
    from manifesto.errors import ManifestoError

    pd.data = spec_data(start, accel_name, pd, report.workload, cluster.platform)
    try:
        plan = resolve(pd.data, cluster)
    except ManifestoError as exc:
        return exc.message
    for role in plan.roles:
        fit = role.fit
        if fit is None or fit.status != "ok":
            return f"role {role.name}'s memory fit: {(fit.note or fit.status) if fit is not None else 'not checked'}"
    decode = next(r for r in plan.roles if r.name == "decode")
    fit = decode.fit
    per_engine = fit.kv_budget // (fit.kv_per_token * fit.max_model_len + fit.kv_per_sequence)
    holds = per_engine * pd.decode.layout.dp * pd.decode.workers
    if holds < report.workload.concurrency:
        return (f"the decode workers' KV caches hold {holds} sequence(s) of {fit.max_model_len} tokens, fewer than "
                f"the {report.workload.concurrency} in flight")
    pd.plan = plan
    return ""


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    slug = re.sub(r"^[^a-z]+", "", slug)
    return slug[:40].rstrip("-") or "model"


def spec_data(start, accel_name: str, pd: PDOutcome, demand, platform: str) -> dict:
    """The xPyD set as a P/D spec: the start's model and settings, the accelerator pinned, a
    prefill and a decode role with their layouts and worker counts. On Kubernetes both roles are
    LeaderWorkerSets, so a cluster declaring LeaderWorkerSet 0.10 renders them as one
    DisaggregatedSet and any other as a pair (``manifesto.resolve.pd_set``); Slurm has no
    workload kinds (each role is a batch job)."""
    data = copy.deepcopy(start.data)
    data.pop("accelerator", None)
    data = {k: data.pop(k) for k in ("release", "topology") if k in data} | {"accelerator": accel_name} | data
    data["topology"] = "pd"
    data["release"] = _slug(f"{data['release']}-{accel_name}-{pd.ratio}")
    data["routing"] = {"kind": "pd", "target_role": "decode"}
    data["vars"] = {**(data.get("vars") or {}), "max_concurrency": demand.concurrency}
    template = (data.get("roles") or [{}])[-1]
    roles = []
    for name, role in (("prefill", pd.prefill), ("decode", pd.decode)):
        lay = role.layout
        vllm = dict(template.get("vllm") or {})
        if demand.max_model_len is not None:
            vllm["max_model_len"] = demand.max_model_len
        if demand.kv_cache_dtype is not None:
            vllm["kv_cache_dtype"] = demand.kv_cache_dtype
        roles.append({"name": name, **({} if platform == "slurm" else {"workload": "leaderworkerset"}),
                      "lws": {"size": lay.nodes, "replicas": role.workers},
                      "parallelism": {"tp": lay.tp, "pp": 1, "dp": lay.dp if lay.dp > 1 else False, "ep": lay.ep},
                      "kv_transfer_config": dict(KV_TRANSFER), "vllm": vllm})
    data["roles"] = roles
    return data


def estimate_lines(p, work) -> list[str]:
    """The estimate of an aggregated layout or an xPyD set as comment or explain lines."""
    cost = "" if p.cost_per_mtok is None else f", {p.cost_per_mtok:.3g} per million output tokens"
    lines = [f"Estimated at {work.isl} input and {work.osl} output tokens per request, {work.concurrency} in flight:",
             f"  TTFT {p.ttft_ms:.0f} ms, ITL {p.itl_ms:.1f} ms, {p.tokens_s:.0f} output tokens/s "
             f"({p.gpu_tokens_s:.0f} per GPU), {p.requests_s:.2f} requests/s{cost};"]
    targets = ", ".join(f"{k.upper()} {t:g} ms {'met' if p.margin[k] <= 0 else f'missed by {p.margin[k] * 100:.0f}%'}"
                        for k, t in (("ttft", work.ttft), ("itl", work.itl)) if t is not None)
    if targets:
        lines.append(f"  targets: {targets};")
    lines.append(f"  source: {p.source}" + (f" ({p.note})" if p.note else "") + ".")
    return lines


def pd_lines(pd: PDOutcome) -> list[str]:
    """What an xPyD set is, for comments and explain."""
    b = pd.budget
    cost = "" if b.hourly_cost is None else f", {b.hourly_cost:g} per hour"
    lines = [f"Prefill/decode {pd.ratio}: {pd.prefill.workers} prefill worker(s) of {pd.prefill.layout_text()} "
             f"(batch {pd.prefill.batch} per rank), {pd.decode.workers} decode worker(s) of {pd.decode.layout_text()} "
             f"(batch {pd.decode.batch} per rank);",
             f"  {b.gpus} GPU(s) on {b.nodes} node(s) in {b.pods} pod(s){cost}."]
    if pd.against is not None:
        a = pd.against
        verdict = "beats" if pd.beats else "does not beat"
        lines.append(f"  It {verdict} the best aggregated layout there ({a.candidate.text()}, {a.budget.gpus} GPU(s): "
                     f"TTFT {a.performance.ttft_ms:.0f} ms, ITL {a.performance.itl_ms:.1f} ms, "
                     f"{a.performance.gpu_tokens_s:.0f} output tokens/s per GPU).")
    return lines


def spec_text(report, pd: PDOutcome, work, command: str, notes: list[str] | None = None) -> str:
    """The xPyD set as a commented spec file (``plan --pick-pd N --write``); ``notes``: more
    comment lines (about the roles' workloads)."""
    from manifesto.edge.escape import terminal
    from manifesto.util.yamlemit import dump_yaml

    lines = [f"Written by `{command}`.",
             f"Planned from {report.start} for cluster {pd.cluster}, accelerator {pd.accelerator}.",
             *pd_lines(pd), *estimate_lines(pd.performance, work),
             *(notes or []),
             "The memory fit and the layout of each role are what `manifesto explain` shows for this file."]
    # One line each: a path or name holding a line break must not end the comment.
    return "\n".join("# " + terminal(line) for line in lines) + "\n" + dump_yaml(pd.data)
