"""Capacity planning (``manifesto plan``): every layout of a model that fits, on every cluster.

The search builds a candidate spec per layout and resolves it exactly as ``render`` does
(``resolve_layout``: the one call into resolution and the memory fit). A layout the resolver
refuses is reported with the resolver's own message, the one ``render`` prints for the same
spec; a layout it accepts renders. Nothing here repeats the fit's arithmetic: the weights,
the KV budget and the tokens it holds come from the resolved plan's ``MemoryFit``.

The search space, per cluster and accelerator (``layouts``):

* tp: powers of two that divide the model's attention heads, within a node's GPUs, or across
  nodes where one NVLink domain spans them (``NVLINK_DOMAIN_ARCHS``, or a profile with a
  ``compute_domain``);
* pp: 1, 2, 4, 8 (no more stages than layers);
* dp (MoE models only; a dense model scales with replicas instead), with or without ep;
* decode context parallelism over all tp ranks, besides none, for MLA models with only
  full-attention caches (``dcp_offered``) and one pipeline stage: it divides the KV cache a token
  takes on a GPU by tp (with PP the search already splits the cache by stage; leaving those out
  keeps the search within its time budget, benchmarks/README.md);
* one engine uses at most ``MAX_ENGINE_GPUS`` GPUs; lws.size is the nodes it needs;
* replicas: the fewest that hold ``concurrency`` sequences of max_model_len at once.

No figure of throughput or latency is proposed: nothing here measures one. ``Measured``
is where a measured table would plug in (``plan_model(..., measured=...)``).
"""

from __future__ import annotations

import copy
import math
import re
from typing import Callable

__all__ = ["Demand", "Candidate", "LayoutOutcome", "SearchReport", "Start", "start_from", "layouts", "plan_model",
           "spec_text", "candidate_spec", "resolve_layout", "NVLINK_DOMAIN_ARCHS", "MAX_ENGINE_GPUS",
           "NO_PERFORMANCE", "Measured", "dcp_offered"]

#: gpu_arch values whose nodes (compute trays) share one NVLink domain (GB200/GB300 NVL72 racks):
#: tensor parallelism may span nodes there. Elsewhere TP stays within a node.
NVLINK_DOMAIN_ARCHS = ("gb200", "gb300")
#: The largest engine (tp x pp x dp GPUs) the search proposes.
MAX_ENGINE_GPUS = 64
_TP = (1, 2, 4, 8, 16, 32, 64)
_PP = (1, 2, 4, 8)
_DP = (1, 2, 4, 8, 16, 32, 64)

NO_PERFORMANCE = ("No throughput or latency figures: nothing in manifesto measures them. A layout is proposed "
                  "because its weights and KV cache fit, not because it is fast.")

#: A measured table: (cluster, accelerator, Candidate, Demand) -> a mapping of figures to
#: report with that layout (tokens/s, latency...), or None where the table has no row.
Measured = Callable[[str, str, "Candidate", "Demand"], "dict | None"]


class Demand:
    """What the layouts must serve: ``max_model_len`` (None: the start's), ``concurrency``
    sequences of that length in the KV cache at once, ``kv_cache_dtype`` (None: the start's),
    ``topology`` (None: the start's)."""

    __slots__ = ("max_model_len", "concurrency", "kv_cache_dtype", "topology")

    def __init__(self, max_model_len: int | None = None, concurrency: int = 1, kv_cache_dtype: str | None = None,
                 topology: str | None = None) -> None:
        self.max_model_len, self.concurrency = max_model_len, concurrency
        self.kv_cache_dtype, self.topology = kv_cache_dtype, topology


class Candidate:
    """One layout of every role: tp x pp x dp (ep) per engine, ``nodes`` pods (lws.size) per
    replica, ``replicas`` of the serving role; ``dcp`` decode-context-parallel ranks (sharing
    the TP ranks, so no GPUs of their own)."""

    __slots__ = ("tp", "pp", "dp", "ep", "nodes", "replicas", "dcp")

    def __init__(self, tp: int, pp: int, dp: int, ep: bool, nodes: int, replicas: int = 1, dcp: int = 1) -> None:
        self.tp, self.pp, self.dp, self.ep, self.nodes, self.replicas = tp, pp, dp, ep, nodes, replicas
        self.dcp = dcp

    @property
    def engine_gpus(self) -> int:
        return self.tp * self.pp * self.dp

    def text(self) -> str:
        return f"tp={self.tp} pp={self.pp} dp={self.dp} ep={'on' if self.ep else 'off'}" + (
            f" dcp={self.dcp}" if self.dcp > 1 else "")

    def to_dict(self) -> dict:
        return {"tp": self.tp, "pp": self.pp, "dp": self.dp, "ep": self.ep, "nodes_per_replica": self.nodes,
                "replicas": self.replicas} | ({"dcp": self.dcp} if self.dcp > 1 else {})


class LayoutOutcome:
    """One layout on one cluster's accelerator: proposed (``plan`` set) or refused (``error``,
    the resolver's message; ``kind`` "memory" when the memory fit refused it)."""

    __slots__ = ("cluster", "accelerator", "candidate", "data", "plan", "error", "kind", "concurrency",
                 "headroom", "measured", "performance")

    def __init__(self, cluster: str, accelerator: str, candidate: Candidate, data: dict) -> None:
        self.cluster, self.accelerator, self.candidate, self.data = cluster, accelerator, candidate, data
        self.plan = None
        self.error, self.kind = "", ""
        self.concurrency, self.headroom = 0, 0.0
        self.measured: dict | None = None
        self.performance = None  # a manifesto.perf.engine.Estimate when plan is asked for performance

    @property
    def fit(self):
        return _serving_role(self.plan).fit

    @property
    def budget(self):
        return self.plan.budget

    @property
    def engines(self) -> int:
        return self.candidate.dp * self.candidate.replicas

    def rank_key(self):
        b = self.budget
        return (b.hourly_cost is None, b.hourly_cost or 0.0, b.gpus, -self.headroom, self.cluster, self.accelerator,
                self.candidate.tp, self.candidate.pp, self.candidate.dp, self.candidate.ep)

    def perf_rank_key(self):
        """With performance: the layouts meeting the targets first, the cheapest per output token
        first (GPUs per token/s where unpriced); then those missing them, the nearest first."""
        p = self.performance
        if not p.meets:
            return (1, p.worst_margin, 0.0, 0.0, self.rank_key())
        priced = p.cost_per_mtok is not None
        return (0, 0.0 if priced else 1.0, p.cost_per_mtok if priced else 0.0,
                1.0 / p.gpu_tokens_s if p.gpu_tokens_s > 0 else math.inf, self.rank_key())

    def to_dict(self) -> dict:
        out = {"cluster": self.cluster, "accelerator": self.accelerator, "layout": self.candidate.to_dict()}
        if self.plan is None:
            return {**out, "refused_by": self.kind, "reason": self.error}
        fit, b = self.fit, self.budget
        return {**out, "gpus": b.gpus, "nodes": b.nodes, "pods": b.pods,
                "kv_tokens_per_gpu": fit.kv_tokens, "kv_tokens_total": fit.kv_tokens * self.engines,
                "max_concurrency": self.concurrency, "max_model_len": fit.max_model_len,
                "kv_cache_dtype": fit.kv_dtype, "headroom": round(self.headroom, 3),
                "weights_per_gpu_bytes": fit.weights, "kv_budget_per_gpu_bytes": fit.kv_budget,
                "hourly_price_per_gpu": b.hourly_price, "hourly_cost": b.hourly_cost,
                "performance": self.performance.to_dict() if self.performance is not None else self.measured}


class SearchReport:
    """Every outcome of a search: ``proposed`` ranked, ``refused`` in search order; ``roles``
    the candidates' role names, ``serving`` the one the replicas are added to."""

    __slots__ = ("model", "start", "workload", "proposed", "refused", "clusters", "path", "roles", "serving")

    def __init__(self, model: str, start: str, workload: Demand, proposed: list, refused: list,
                 clusters: list, path: str = "") -> None:
        self.model, self.start, self.workload, self.path = model, start, workload, path
        self.proposed, self.refused, self.clusters = proposed, refused, clusters
        first = (proposed or refused or [None])[0]
        roles = first.data["roles"] if first is not None else []
        self.roles = [r["name"] for r in roles]
        self.serving = (first.data.get("routing") or {}).get("target_role") if first is not None else None
        self.serving = self.serving or (self.roles[-1] if self.roles else None)

    def roles_note(self, name: Callable[[str], str] = str) -> str | None:
        """With more than one role (P/D), what a layout means for each: plan lays every role out
        alike and does not size them separately. ``name`` quotes a role name for the output."""
        if len(self.roles) < 2:
            return None
        others = [name(r) for r in self.roles if r != self.serving]
        return (f"Roles {', '.join(map(name, self.roles))} get the same layout: tp, pp, dp, ep and pods per "
                "replica are one choice for all of them, not planned role by role. The replicas the "
                f"concurrency needs are {name(self.serving)}'s (its KV cache holds the sequences); "
                f"{', '.join(others)} keep{'s' if len(others) == 1 else ''} one replica. How much "
                f"{others[0]} needs of its own is a question of throughput, which plan does not answer.")

    def nearest_misses(self) -> list[LayoutOutcome]:
        """Per cluster and accelerator, why nothing smaller fits: among the layouts the memory fit
        refused with fewer GPUs than the smallest proposal there (all of them where nothing fits),
        the first of those with the most GPUs, splitting the weights most ways. Each carries the
        fit's arithmetic."""
        smallest: dict[tuple, int] = {}
        for o in self.proposed:
            key = (o.cluster, o.accelerator)
            smallest[key] = min(smallest.get(key, o.candidate.engine_gpus), o.candidate.engine_gpus)
        best: dict[tuple, LayoutOutcome] = {}
        for o in self.refused:
            key = (o.cluster, o.accelerator)
            if o.kind != "memory" or o.candidate.engine_gpus >= smallest.get(key, MAX_ENGINE_GPUS + 1):
                continue
            if key not in best or _spread(o.candidate) > _spread(best[key].candidate):
                best[key] = o
        return [best[k] for k in sorted(best)]


def _spread(c: Candidate) -> tuple[int, int]:
    """(GPUs, how many ways the experts are split): the layout nearest to fitting comes last."""
    return c.engine_gpus, c.tp * c.pp * (c.dp if c.ep else 1)


class Start:
    """Where a plan starts: the spec data every candidate is made from, its file (for
    ``model.config_json`` and messages), and a description."""

    __slots__ = ("data", "path", "what", "model_id", "from_spec")

    def __init__(self, data: dict, path: str, what: str, model_id: str, from_spec: bool) -> None:
        self.data, self.path, self.what, self.model_id, self.from_spec = data, path, what, model_id, from_spec


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    slug = re.sub(r"^[^a-z]+", "", slug)
    return slug[:40].rstrip("-") or "model"


def start_from(model: str, search=None) -> Start:
    """A catalog model id with an architecture record (``Qwen/Qwen3-32B``), else a spec (a path,
    catalog name or build address) whose model, vLLM settings and roles are the start."""
    from manifesto.errors import CatalogError, InputError
    from manifesto.tasks.inputs.architecture import catalog_record

    path, arch = catalog_record(model)
    if arch is not None:
        label = model.split("/", 1)[1]
        data = {"release": _slug(label), "topology": "aggregated",
                "model": {"id": model, "label": label, "image_ref": "vllm.standard"},
                "routing": {"kind": "disabled"}, "runtime": {"sidecars": []},
                "roles": [{"name": "decode", "lws": {"size": 1}, "parallelism": {"tp": 1, "dp": False, "ep": False},
                           "vllm": {}}]}
        return Start(data, path, f"catalog model {model} (catalog/architectures/{model}.json)", model, False)
    from manifesto.spec import load_spec

    try:
        spec = load_spec(model, search=search)
    except CatalogError as exc:
        if re.fullmatch(r"[\w.-]+/[\w.-]+", model):
            raise InputError(f"cannot plan '{model}': it is neither a model id with an architecture record "
                             f"(catalog/architectures/{model}.json) nor a spec ({exc.message})") from None
        raise
    data = copy.deepcopy(spec.loaded.data)
    return Start(data, spec.path, f"spec {spec.path}", spec.model.id, True)


def _serving_role(plan):
    target = plan.routing.target_role if plan.routing is not None else None
    return next((r for r in plan.roles if r.name == target), plan.roles[-1])


def _nvlink_domain(cluster, accel) -> bool:
    prof = cluster.profile.accelerators.profiles[accel.name]
    return accel.gpu_arch.lower() in NVLINK_DOMAIN_ARCHS or prof.compute_domain is not None


def layouts(arch, cluster, accel) -> list[Candidate]:
    """The search space on one accelerator of ``cluster`` (one replica each)."""
    per_node = accel.gpus_per_node
    tp_max = MAX_ENGINE_GPUS if _nvlink_domain(cluster, accel) else per_node
    moe = arch.is_moe
    out = []
    for tp in _TP:
        if tp > tp_max or arch.attention_heads % tp:
            continue
        for pp in _PP:
            if pp > arch.layers:
                continue
            for dp in (_DP if moe else (1,)):
                total = tp * pp * dp
                if total > MAX_ENGINE_GPUS:
                    continue
                if total > per_node and total % per_node:
                    continue
                rank = tp * pp
                if rank > per_node and rank % per_node:
                    continue
                nodes = 1 if total <= per_node else total // per_node
                for ep in ((False, True) if moe and tp * dp > 1 else (False,)):
                    out.append(Candidate(tp, pp, dp, ep, nodes))
                    if pp == 1 and dcp_offered(arch, tp):
                        out.append(Candidate(tp, pp, dp, ep, nodes, dcp=tp))
    return out


def dcp_offered(arch, tp: int) -> bool:
    """Whether plan proposes decode context parallelism over all ``tp`` ranks: for MLA models,
    whose one latent KV head every TP rank otherwise stores whole (DCP then keeps each token on
    one rank of tp, vLLM 0.33.0 v1/core/kv_cache_utils.py: resolve_dcp_kv_block_size), with only
    full-attention caches (v1/core/kv_cache_coordinator.py); the rules vLLM checks are
    resolve/partition.py's, so a refused one is never proposed."""
    return tp > 1 and arch.attention == "mla" and bool(arch.kv_lora_rank) and not arch.sliding_layers \
        and not arch.compress_ratios


def _copy(value):
    """A copy of plain YAML data (mappings, lists, scalars): ``copy.deepcopy`` without its memo."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _candidate_data(start: Start, accel: str, cand: Candidate, work: Demand) -> dict:
    """The spec a layout is: the start with the accelerator pinned and every role laid out."""
    from manifesto.resolve.args import flag_name

    data = _copy(start.data)
    data.pop("accelerator", None)
    data = {k: data.pop(k) for k in ("release", "topology") if k in data} | {"accelerator": accel} | data
    topology = work.topology or data.get("topology", "aggregated")
    if not start.from_spec:
        data["topology"] = topology
        if topology == "pd":
            data["routing"] = {"kind": "pd", "target_role": "decode"}
            kv = {"kv_connector": "NixlConnector", "kv_role": "kv_both"}
            data["roles"] = [{"name": name, "lws": {"size": 1}, "parallelism": {}, "kv_transfer_config": dict(kv),
                              "vllm": {}} for name in ("prefill", "decode")]
        elif cand.replicas * cand.dp > 1:
            data["routing"] = {"kind": "load_aware", "target_role": "decode"}
        # Fabric profiles size buffers from it (computed_env: max_concurrency * 2 + 2, example-gb200).
        data["vars"] = {**(data.get("vars") or {}), "max_concurrency": work.concurrency}
        data["release"] = _slug(f"{data['release']}-{accel}-" + ("pd" if topology == "pd" else "plan"))
    serving = (data.get("routing") or {}).get("target_role") or data["roles"][-1]["name"]
    for role in data["roles"]:
        role["lws"] = {**(role.get("lws") or {}), "size": cand.nodes,
                       "replicas": cand.replicas if role["name"] == serving else 1}
        role["parallelism"] = {"tp": cand.tp, "pp": cand.pp, "dp": cand.dp if cand.dp > 1 else False, "ep": cand.ep}
        resources = {k: v for k, v in (role.get("resources") or {}).items() if k not in ("gpus", "cpu", "memory")}
        role.pop("resources", None)
        if resources:
            role["resources"] = resources
        vllm = {k: v for k, v in (role.get("vllm") or {}).items() if flag_name(k) != "decode-context-parallel-size"}
        if cand.dcp > 1:
            vllm["decode_context_parallel_size"] = cand.dcp
        if work.max_model_len is not None:
            vllm["max_model_len"] = work.max_model_len
        if work.kv_cache_dtype is not None:
            vllm["kv_cache_dtype"] = work.kv_cache_dtype
        role["vllm"] = vllm
    return data


def candidate_spec(data: dict, path: str):
    """``data`` validated as a model spec, as ``render`` validates a spec file holding it (the
    cluster plays no part: one validated candidate serves every cluster it is resolved on)."""
    from manifesto.load.inputs import Loaded, validate
    from manifesto.schema.compiled import ModelSpec
    from manifesto.spec import Spec
    from manifesto.load.yamlio import Locations

    loaded = Loaded(data, Locations(path), [])
    return Spec(validate(ModelSpec, loaded), loaded, path)


def resolve_layout(data: dict, path: str, cluster, options, spec=None, memo=None):
    """The one call into resolution and the memory fit: ``data`` validated as a model spec and
    resolved against ``cluster`` exactly as ``render`` resolves a spec file holding it: the
    pair's RESOLVE task (``manifesto.tasks.runner.run``) on the loaded spec. ``spec``:
    ``candidate_spec(data, path)`` when the caller has it already; ``memo`` (a
    ``tasks.memo.Tasks``) is shared by one search, so each input file is digested once."""
    from manifesto.tasks.core import PairRequest, Task
    from manifesto.tasks.runner import run

    spec = spec if spec is not None else candidate_spec(data, path)
    from manifesto.errors import say_warnings

    return say_warnings(run(Task.RESOLVE, PairRequest(spec, cluster, options, catalogs=True), memo or _memo())).ok().plan


def _memo():
    """A memo of the tasks that keeps nothing on disk (a plan, like a library call, is not cached)."""
    from manifesto.store import Store
    from manifesto.tasks.memo import Tasks

    return Tasks(Store(None), "")


def _check_start(start: Start, arch, note: str, work: Demand) -> None:
    from manifesto.errors import InputError

    if arch is None:
        raise InputError(f"cannot plan {start.model_id}: no architecture record ({note or 'none'}); without one "
                         "the weights and KV cache cannot be sized, and plan does not guess")
    if start.from_spec and work.topology and work.topology != start.data.get("topology", "aggregated"):
        raise InputError(f"--topology {work.topology}: {start.what} is {start.data.get('topology', 'aggregated')}; "
                         "plan keeps a spec's roles (start from the model id to plan another topology)")
    if work.max_model_len is not None and arch.max_position_embeddings and \
            work.max_model_len > arch.max_position_embeddings:
        raise InputError(f"--max-model-len {work.max_model_len} exceeds {start.model_id}'s max_position_embeddings "
                         f"{arch.max_position_embeddings} (from {arch.source}); vLLM refuses a longer context")


def _architecture(start: Start, search):
    from manifesto.load.catalog import within
    from manifesto.load.inputs import Loaded, validate
    from manifesto.schema.compiled import ModelSpec
    from manifesto.tasks.inputs.architecture import load_architecture
    from manifesto.spec import Spec
    from manifesto.load.yamlio import Locations

    loaded = Loaded(start.data, Locations(start.path), [])
    spec = Spec(validate(ModelSpec, loaded), loaded, start.path)
    if not spec.fit.check:
        from manifesto.errors import InputError

        raise InputError(f"cannot plan {start.what}: it turns the memory-fit check off (fit.check: false)")
    arch, note, _ = load_architecture(spec, None, within(search))
    return arch, note


def plan_model(start: Start, clusters: list, work: Demand, options, *, search=None,
               measured: Measured | None = None, performance=None) -> SearchReport:
    """Search every layout of ``start`` on every accelerator of ``clusters`` (loaded
    ``cluster.Cluster`` objects). ``performance``: a ``manifesto.perf.engine.Planner`` that estimates
    each proposed layout and ranks them at its targets (None: memory and cost only)."""
    from manifesto.errors import IncompatiblePairError, ManifestoError
    from manifesto.resolve.accelerator import project_accelerator

    arch, note = _architecture(start, search)
    _check_start(start, arch, note, work)
    memo = _memo()
    # A candidate's spec depends on the accelerator's name and the layout, not on the cluster:
    # one accelerator offered by several clusters shares each candidate's data and validation.
    made: dict[tuple, tuple] = {}

    def candidate(name: str, cand: Candidate) -> tuple:
        key = (name, cand.tp, cand.pp, cand.dp, cand.ep, cand.nodes, cand.replicas, cand.dcp)
        if key not in made:
            data = _candidate_data(start, name, cand, work)
            try:
                made[key] = data, candidate_spec(data, start.path), None
            except ManifestoError as exc:  # the schema refuses it: the same on every cluster
                made[key] = data, None, exc
        return made[key]

    proposed, refused = [], []
    for cluster in clusters:
        for name in sorted(cluster.profile.accelerators.profiles):
            accel = project_accelerator(cluster.profile, name)
            for cand in layouts(arch, cluster, accel):
                data, spec, invalid = candidate(name, cand)
                out = LayoutOutcome(cluster.name, name, cand, data)
                if invalid is not None:
                    out.error, out.kind = invalid.message, "resolver"
                    refused.append(out)
                    continue
                try:
                    plan = resolve_layout(data, start.path, cluster, options, spec, memo)
                except IncompatiblePairError as exc:
                    out.error, out.kind = exc.message, "memory"
                    refused.append(out)
                    continue
                except ManifestoError as exc:  # the resolver refuses the layout on this cluster
                    out.error, out.kind = exc.message, "resolver"
                    refused.append(out)
                    continue
                fit = _serving_role(plan).fit
                if fit.status == "kv-short":
                    out.error, out.kind = (f"the KV cache holds {fit.kv_tokens} tokens, fewer than max_model_len "
                                           f"{fit.max_model_len} (the spec's fit.short_kv_cache: warn lets render "
                                           "go on; vLLM would refuse to start)"), "memory"
                    refused.append(out)
                    continue
                if fit.status != "ok":
                    raise ManifestoError(f"cannot plan {start.model_id} on {cluster.name}/{name}: the memory fit "
                                         f"is not known ({fit.note or fit.status})")
                if work.max_model_len is not None and fit.max_model_len != work.max_model_len:
                    raise ManifestoError(f"cannot plan {start.what}: its roles compute --max-model-len "
                                         f"({fit.max_model_len}), which --max-model-len cannot override")
                if not fit.max_model_len:
                    raise ManifestoError(f"cannot plan {start.what}: its max_model_len is -1 (vLLM sizes it to the "
                                         "memory), so no sequence length is asked; give --max-model-len")
                per_engine = fit.kv_budget // (fit.kv_per_token * fit.max_model_len + fit.kv_per_sequence)
                cand.replicas = max(1, math.ceil(work.concurrency / (per_engine * cand.dp)))
                if cand.replicas > 1:
                    out.data, spec, invalid = candidate(name, cand)
                    if invalid is not None:
                        raise invalid
                    plan = resolve_layout(out.data, start.path, cluster, options, spec, memo)
                out.plan = plan
                out.concurrency = per_engine * cand.dp * cand.replicas
                # Headroom: the KV tokens of every engine over what the concurrency asked needs.
                out.headroom = fit.kv_tokens * out.engines / (work.concurrency * fit.max_model_len)
                out.measured = measured(cluster.name, name, cand, work) if measured is not None else None
                if performance is not None:
                    out.performance = performance.assess(cluster, name, accel, out, arch,
                                                         _nvlink_domain(cluster, accel))
                proposed.append(out)
    proposed.sort(key=LayoutOutcome.perf_rank_key if performance is not None else LayoutOutcome.rank_key)
    return SearchReport(start.model_id, start.what, work, proposed, refused, [c.name for c in clusters], start.path)


def spec_text(report: SearchReport, out: LayoutOutcome, command: str) -> str:
    """The chosen layout as a commented spec file (``--write``)."""
    from manifesto.util.yamlemit import dump_yaml

    fit, b = out.fit, out.budget
    cost = "" if b.hourly_cost is None else f", {b.hourly_cost:g} per hour"
    lines = [
        f"# Written by `{command}`.",
        f"# Planned from {report.start} for cluster {out.cluster}, accelerator {out.accelerator}:",
        f"#   {out.candidate.text()}, {out.candidate.nodes} pod(s) per replica, {out.candidate.replicas} replica(s):",
        f"#   {b.gpus} GPU(s) on {b.nodes} node(s) in {b.pods} pod(s){cost}.",
        f"#   max_model_len {fit.max_model_len}, kv_cache_dtype {fit.kv_dtype}: {fit.kv_tokens} KV tokens per engine,",
        f"#   {out.concurrency} sequence(s) of max_model_len at once (asked: {report.workload.concurrency}).",
        "# The memory fit and the layout are what `manifesto explain` shows for this file.",
    ]
    p = out.performance
    if p is None:
        lines += ["# No throughput or latency figure: nothing in manifesto measures one; the layout",
                  "# is proposed because its weights and KV cache fit, not because it is fast."]
    else:
        w = p.work
        cost = "" if p.cost_per_mtok is None else f", {p.cost_per_mtok:.3g} per million output tokens"
        lines += [f"# Estimated at {w.isl} input and {w.osl} output tokens per request, {w.concurrency} in flight:",
                  f"#   TTFT {p.ttft_ms:.0f} ms, ITL {p.itl_ms:.1f} ms, {p.tokens_s:.0f} output tokens/s "
                  f"({p.gpu_tokens_s:.0f} per GPU), {p.requests_s:.2f} requests/s{cost};",
                  f"#   source: {p.source}" + (f" ({p.note})" if p.note else "") + "."]
    from manifesto.edge.escape import terminal

    # One line each: a path or name holding a line break must not end the comment.
    return "\n".join(terminal(line) for line in lines) + "\n" + dump_yaml(out.data)
