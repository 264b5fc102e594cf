"""Performance of ``plan``'s layouts: time to first token, inter-token latency, throughput, cost.

Imported only when ``manifesto plan`` is asked for performance (``--isl``, ``--osl``, ``--ttft``,
``--itl``); everything else starts without it.

Two sources, and every figure says which it came from:

* **AIConfigurator** (``aiconfigurator-core`` 0.12.0, NVIDIA, Apache-2.0; the ``perf`` extra):
  its measured kernel tables for vLLM and its aggregated (in-flight batching) estimator, called
  through its Python modules exactly as its own ``aiconfigurator cli estimate --estimate-mode agg``
  calls them (``_aic_agg`` below; tests/perf/test_plan_perf.py compares the two). Nothing of its
  model is repeated here.
* **roofline** (``roofline``), where AIConfigurator's tables lack the GPU (``SYSTEMS``), the model
  (its bundled model configs) or the layout: a small model from data-sheet figures (``HARDWARE``)
  and the memory fit's own bytes. Its assumptions, stated once:

  - a decode step reads every weight byte of a GPU once and the KV cache of every sequence
    of the batch (at the mean length isl + osl/2) at ``HBM_EFFICIENCY`` of the data-sheet HBM
    bandwidth, or computes 2 x active parameters FLOPs per token at ``COMPUTE_EFFICIENCY`` of
    the dense tensor rate (FP8 where the weights are FP8 or narrower), whichever is longer;
  - tensor parallelism adds two all-reduces of the batch's hidden states per layer, expert
    parallelism a dispatch and a combine per MoE layer, pipeline parallelism a hand-off per
    stage, each at ``LINK_EFFICIENCY`` of the scale-up link (NVLink) within a node or an NVLink
    domain and of the scale-out link (InfiniBand, ``SCALE_OUT_GBPS``) across nodes, plus
    ``COLLECTIVE_LATENCY_S`` each;
  - pipeline stages run one after another for a token and hold ``pp`` micro-batches in flight;
  - prefill of ``isl`` tokens is compute bound on one DP rank's ``tp`` GPUs; time to first token
    is that prefill plus one decode step of waiting; a rank's batch stalls for each prefill.

  tests/perf/test_plan_perf.py measures the roofline against AIConfigurator on every case its
  tables cover; the README gives the median and worst error.
"""

from __future__ import annotations

import copy
import math

__all__ = ["AIC_VERSION", "BACKEND", "PerfWorkload", "Estimate", "Engine", "system_for", "roofline", "HARDWARE",
           "SYSTEMS", "NotInstalled"]

#: The aiconfigurator-core release the engine is written and tested against (pyproject's perf extra).
AIC_VERSION = "0.12.0"
#: AIConfigurator's tables for the runtime manifesto renders.
BACKEND = "vllm"
#: AIConfigurator's database mode: silicon-measured rows only (its default for ``cli estimate``).
DATABASE_MODE = "SILICON"

#: Accelerator part (manifesto.resolve.accelerator.PARTS) -> AIConfigurator system name.
SYSTEMS = {
    "A100-SXM4-40GB": "a100_sxm", "A100-80GB": "a100_sxm", "H100-SXM5-80GB": "h100_sxm",
    "H100-PCIE-80GB": "h100_pcie", "H200-141GB": "h200_sxm", "B200-180GB": "b200_sxm", "GB200-186GB": "gb200",
    "B300-288GB": "b300_sxm", "GB300-288GB": "gb300", "L40S-48GB": "l40s",
    "RTX-PRO-6000-96GB": "rtx_pro_6000_server",
}
#: gpu_arch family -> its part when the profile names none (a family sold as several parts takes
#: the SXM board, which the memory fit also takes: a profile names ``part`` to say otherwise).
FAMILY_PART = {"a100": "A100-80GB", "h100": "H100-SXM5-80GB", "h200": "H200-141GB", "b200": "B200-180GB",
               "gb200": "GB200-186GB", "b300": "B300-288GB", "gb300": "GB300-288GB", "l40s": "L40S-48GB",
               "rtx-pro-6000": "RTX-PRO-6000-96GB", "h20": "H20-96GB", "mi300x": "MI300X-192GB",
               "mi325x": "MI325X-256GB", "mi355x": "MI355X-288GB"}


class Hardware:
    """Data-sheet figures of one part: dense tensor TFLOPS (BF16, FP8; no sparsity), HBM TB/s,
    scale-up link GB/s per direction per GPU (NVLink, Infinity Fabric; PCIe where none), and the
    data sheet they come from."""

    __slots__ = ("bf16_tflops", "fp8_tflops", "hbm_tbps", "link_gbps", "source")

    def __init__(self, bf16: float, fp8: float, hbm: float, link: float, source: str) -> None:
        self.bf16_tflops, self.fp8_tflops, self.hbm_tbps, self.link_gbps, self.source = bf16, fp8, hbm, link, source


_NV = "NVIDIA {} data sheet"
#: The roofline's hardware (dense rates: the data sheets' sparse figures halved).
HARDWARE = {
    "A100-SXM4-40GB": Hardware(312, 312, 1.555, 300, _NV.format("A100 (no FP8: BF16 rate)")),
    "A100-80GB": Hardware(312, 312, 2.039, 300, _NV.format("A100 80GB SXM (no FP8: BF16 rate)")),
    "H100-SXM5-80GB": Hardware(989, 1979, 3.35, 450, _NV.format("H100 SXM")),
    "H100-PCIE-80GB": Hardware(756, 1513, 2.0, 32, _NV.format("H100 PCIe (PCIe Gen5 x16)")),
    "H100-NVL-94GB": Hardware(835, 1671, 3.9, 300, _NV.format("H100 NVL")),
    "H200-141GB": Hardware(989, 1979, 4.8, 450, _NV.format("H200 SXM")),
    "H20-96GB": Hardware(148, 296, 4.0, 450, _NV.format("H20")),
    "B200-180GB": Hardware(2250, 4500, 8.0, 900, _NV.format("HGX B200")),
    "GB200-186GB": Hardware(2500, 5000, 8.0, 900, _NV.format("GB200 NVL72")),
    "B300-288GB": Hardware(2250, 4500, 8.0, 900, _NV.format("HGX B300")),
    "GB300-288GB": Hardware(2500, 5000, 8.0, 900, _NV.format("GB300 NVL72")),
    "L40S-48GB": Hardware(362, 733, 0.864, 32, _NV.format("L40S (PCIe Gen4 x16)")),
    "RTX-PRO-6000-96GB": Hardware(500, 1000, 1.792, 32, _NV.format("RTX PRO 6000 Blackwell Server (PCIe)")),
    "MI300X-192GB": Hardware(1307, 2615, 5.3, 448, "AMD Instinct MI300X data sheet"),
    "MI325X-256GB": Hardware(1307, 2615, 6.0, 448, "AMD Instinct MI325X data sheet"),
    "MI355X-288GB": Hardware(2500, 5000, 8.0, 576, "AMD Instinct MI355X data sheet"),
}
#: Fractions of the data-sheet peaks the roofline assumes are reached. HBM: AIConfigurator's
#: systems/*.yaml ``mem_bw_empirical_scaling_factor`` (0.8); compute and links: assumptions.
HBM_EFFICIENCY = 0.8
COMPUTE_EFFICIENCY = 0.6
LINK_EFFICIENCY = 0.8
#: Scale-out bandwidth per GPU, one direction: one 400 Gb/s NDR InfiniBand or RoCE port per GPU.
SCALE_OUT_GBPS = 50.0
#: Fixed cost of one collective: AIConfigurator's systems/*.yaml ``p2p_latency`` (10 us).
COLLECTIVE_LATENCY_S = 10e-6


class NotInstalled(Exception):
    """aiconfigurator-core is not importable (the ``perf`` extra is not installed)."""


class PerfWorkload:
    """Requests of ``isl`` input and ``osl`` output tokens, ``concurrency`` of them in flight over
    every replica; ``ttft`` and ``itl`` targets in milliseconds (None: no target)."""

    __slots__ = ("isl", "osl", "concurrency", "ttft", "itl")

    def __init__(self, isl: int, osl: int, concurrency: int, ttft: float | None = None,
                 itl: float | None = None) -> None:
        self.isl, self.osl, self.concurrency, self.ttft, self.itl = isl, osl, concurrency, ttft, itl

    def to_dict(self) -> dict:
        return {"isl": self.isl, "osl": self.osl, "concurrency": self.concurrency, "ttft_ms": self.ttft,
                "itl_ms": self.itl}


class Estimate:
    """One layout's figures: per replica (``batch`` sequences per DP rank and micro-batch) and in
    total over ``replicas``; ``source`` names where they come from, ``note`` why a fallback."""

    __slots__ = ("ttft_ms", "itl_ms", "replica_tokens_s", "gpu_tokens_s", "user_tokens_s", "requests_s",
                 "tokens_s", "batch", "source", "note", "cost_per_mtok", "margin", "gpus", "work")

    def __init__(self, ttft_ms: float, itl_ms: float, replica_tokens_s: float, replica_requests_s: float,
                 batch: int, source: str, note: str = "") -> None:
        self.ttft_ms, self.itl_ms, self.batch, self.source, self.note = ttft_ms, itl_ms, batch, source, note
        self.replica_tokens_s, self.requests_s = replica_tokens_s, replica_requests_s
        self.user_tokens_s = 1000.0 / itl_ms if itl_ms > 0 else 0.0
        self.tokens_s = self.gpu_tokens_s = 0.0
        self.cost_per_mtok: float | None = None
        self.margin: dict[str, float] = {}
        self.gpus = 0
        self.work: PerfWorkload | None = None

    def scale(self, replicas: int, gpus: int, hourly_cost: float | None, work: PerfWorkload) -> "Estimate":
        """Totals over ``replicas`` replicas of ``gpus`` GPUs in all, the cost per million output
        tokens at ``hourly_cost``, and the margin to each target (estimate / target - 1)."""
        self.work = work
        self.tokens_s = self.replica_tokens_s * replicas
        self.requests_s *= replicas
        self.gpus = gpus
        self.gpu_tokens_s = self.tokens_s / gpus if gpus else 0.0
        if hourly_cost is not None and self.tokens_s > 0:
            self.cost_per_mtok = hourly_cost / (self.tokens_s * 3600.0) * 1e6
        for name, target, value in (("ttft", work.ttft, self.ttft_ms), ("itl", work.itl, self.itl_ms)):
            if target is not None:
                self.margin[name] = value / target - 1.0
        return self

    @property
    def meets(self) -> bool:
        return all(m <= 0 for m in self.margin.values())

    @property
    def worst_margin(self) -> float:
        return max(self.margin.values(), default=0.0)

    @property
    def kind(self) -> str:
        return "roofline" if self.source.startswith("roofline") else "aiconfigurator"

    def to_dict(self) -> dict:
        r = lambda x: None if x is None else round(float(x), 3)  # noqa: E731
        return {"ttft_ms": r(self.ttft_ms), "itl_ms": r(self.itl_ms), "tokens_per_s": r(self.tokens_s),
                "tokens_per_s_per_gpu": r(self.gpu_tokens_s), "tokens_per_s_per_replica": r(self.replica_tokens_s),
                "tokens_per_s_per_user": r(self.user_tokens_s), "requests_per_s": r(self.requests_s),
                "batch_per_rank": self.batch, "cost_per_million_output_tokens": r(self.cost_per_mtok),
                "meets_targets": self.meets, "margin": {k: r(v) for k, v in self.margin.items()},
                "source": self.source, "fallback_reason": self.note or None}


def part_of(cluster, accel_name: str, gpu_arch: str) -> str | None:
    """The accelerator part of profile ``accel_name``: the profile's ``part``, else its family's."""
    from manifesto.resolve.accelerator import part_named

    prof = cluster.profile.accelerators.profiles[accel_name]
    if prof.part:
        return part_named(prof.part)
    return FAMILY_PART.get(gpu_arch.lower())


def system_for(part: str | None) -> str | None:
    """AIConfigurator's system name for a part, or None when its tables have none."""
    return SYSTEMS.get(part) if part else None


def batch_per_rank(cand, replicas: int, concurrency: int) -> int:
    """Sequences per DP rank and pipeline micro-batch when ``concurrency`` sequences spread over
    ``replicas`` replicas of ``cand`` (AIConfigurator's ``batch_size``: per attention-DP rank;
    a pipeline holds ``pp`` micro-batches of it)."""
    per_replica = math.ceil(concurrency / replicas)
    return max(1, math.ceil(per_replica / (cand.dp * cand.pp)))


def moe_layout(cand) -> tuple[int, int]:
    """(moe_tp, moe_ep) of a layout as vLLM runs it: with expert parallelism the experts are
    spread over the tp x dp ranks whole; without it every expert is split tp x dp ways."""
    width = cand.tp * cand.dp
    return (1, width) if cand.ep else (width, 1)


def kv_mode(kv_dtype: str) -> str:
    """AIConfigurator's KV-cache mode for vLLM's --kv-cache-dtype as the fit resolved it."""
    return "fp8" if kv_dtype.startswith("fp8") else "bfloat16"


class Engine:
    """AIConfigurator's aggregated estimator, one perf database per system, loaded once."""

    def __init__(self, progress=None) -> None:
        try:
            import aiconfigurator_core  # noqa: F401
            from importlib.metadata import version
        except ImportError:
            raise NotInstalled() from None
        self.version = version("aiconfigurator-core")
        self.progress = progress or (lambda text: None)
        self._dbs: dict[str, object] = {}
        self._models: set[str] | None = None
        self._cache: dict[tuple, tuple] = {}
        _quiet()

    def has_model(self, model_id: str) -> bool:
        """AIConfigurator bundles this model's config (nothing is fetched from the network)."""
        if self._models is None:
            from importlib.resources import files

            folder = files("aiconfigurator_core") / "model_configs"
            self._models = {p.name[:-len("_config.json")].replace("--", "/", 1) for p in folder.iterdir()
                            if p.name.endswith("_config.json") and not p.name.endswith("_hf_quant_config.json")}
        return model_id in self._models

    def database(self, system: str):
        """(database, its version) for ``system`` and vLLM, or (None, why not)."""
        if system not in self._dbs:
            from aiconfigurator_core.sdk.perf_database import get_database_view, get_latest_database_version

            self.progress(f"loading AIConfigurator's {system} tables for {BACKEND}")
            version = get_latest_database_version(system=system, backend=BACKEND)
            db = None
            if version is not None:
                db = get_database_view(system, BACKEND, version, allow_missing_data=False,
                                       database_mode=DATABASE_MODE, transfer_policy=None)
            self._dbs[system] = (db, version) if db is not None else (None, f"no {BACKEND} tables for {system}")
        return self._dbs[system]

    def agg(self, model_id: str, system: str, cand, kv_dtype: str, work: PerfWorkload, batch: int) -> tuple:
        """(result dict of AIConfigurator's agg estimate, its version) or (None, why not)."""
        key = (model_id, system, cand.tp, cand.pp, cand.dp, cand.ep, kv_mode(kv_dtype), work.isl, work.osl, batch)
        if key not in self._cache:
            db, version = self.database(system)
            if db is None:
                self._cache[key] = None, version
            else:
                try:
                    self._cache[key] = _aic_agg(db, model_id, system, cand, kv_dtype, work, batch), version
                except Exception as exc:  # noqa: BLE001 - any refusal of the estimator means: fall back
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
                    self._cache[key] = None, f"AIConfigurator cannot estimate this layout ({first})"
        return self._cache[key]

    def disagg(self, model_id: str, system: str, prefill, decode, kv_dtype: str, work: PerfWorkload) -> tuple:
        """(AIConfigurator's disaggregated estimate as its result row, the database version) of
        ``prefill`` and ``decode`` (``manifesto.perf.disagg.RoleWorkers``: a layout, its workers and
        batch), or (None, why not): ``_aic_disagg``, the steps of ``aiconfigurator cli estimate
        --estimate-mode disagg``."""
        db, version = self.database(system)
        if db is None:
            return None, version
        key = ("disagg", model_id, system, prefill.key, decode.key, kv_mode(kv_dtype), work.isl, work.osl)
        if key not in self._cache:
            try:
                import aiconfigurator.sdk.inference_session  # noqa: F401
            except ImportError:
                self._cache[key] = None, ("prefill/decode estimates need aiconfigurator " + AIC_VERSION +
                                          " (pip install 'llm-manifesto[perf]')")
                return self._cache[key]
            try:
                self._cache[key] = _aic_disagg(self, db, model_id, system, prefill, decode, kv_dtype, work), version
            except Exception as exc:  # noqa: BLE001 - any refusal of the estimator means: no P/D figure
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
                self._cache[key] = None, f"AIConfigurator cannot estimate this prefill/decode layout ({first})"
        return self._cache[key]

    def role_config(self, db, model_id: str, system: str, layout, kv_dtype: str, phase: str):
        """One role's model config as ``cli estimate --estimate-mode disagg`` resolves it
        (aiconfigurator 0.12.0, cli/api.py ``_run_disagg_estimate``), made once per layout and
        phase (resolving a cross-node expert layout reads the tables' MoE coverage: slow)."""
        key = ("role", model_id, system, layout.tp, layout.pp, layout.dp, layout.ep, kv_mode(kv_dtype), phase)
        if key not in self._cache:
            from aiconfigurator.sdk.moe_comm_resolver import resolve_model_config_moe_comm
            from aiconfigurator_core.sdk.config_builders import apply_nextn, build_model_config
            from aiconfigurator_core.sdk.models import (check_is_moe, resolve_context_fmha_by_data,
                                                        resolve_dsv4_moe_arch, resolve_nvfp4_for_system)

            moe = check_is_moe(model_id)
            moe_tp, moe_ep = moe_layout(layout) if moe else (None, None)
            config = build_model_config(layout.tp, layout.pp, layout.dp, moe_tp, moe_ep, None, kv_mode(kv_dtype))
            apply_nextn(config, 0)
            if moe:
                resolve_model_config_moe_comm(config, model_path=model_id, backend_name=BACKEND, database=db,
                                              required_phases=(phase,), fmha_quant_mode_explicit=False,
                                              kvcache_quant_mode_explicit=True)
            if phase == "context" and config.moe_comm_backend is None:
                resolve_context_fmha_by_data(config, model_id, db, BACKEND, is_context_role=True)
            resolve_dsv4_moe_arch(config, model_id, system_name=system, backend_name=BACKEND)
            resolve_nvfp4_for_system(config, system, model_id, backend_name=BACKEND)
            self._cache[key] = config
        return copy.deepcopy(self._cache[key])

    def cli_corrections(self) -> tuple[float, float]:
        """The prefill and decode latency corrections ``cli estimate --estimate-mode disagg``
        applies (aiconfigurator's cli/api.py ``DEFAULT_PREFILL_LATENCY_CORRECTION_SCALE`` and
        ``DEFAULT_DECODE_LATENCY_CORRECTION_SCALE``), read from that file's text: importing it
        loads the command line's plotting and report modules, a second or more."""
        if "corrections" not in self._cache:
            import ast
            from importlib.util import find_spec

            spec = find_spec("aiconfigurator")
            folder = spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None
            found: dict[str, float] = {}
            names = ("DEFAULT_PREFILL_LATENCY_CORRECTION_SCALE", "DEFAULT_DECODE_LATENCY_CORRECTION_SCALE")
            if folder:
                import os

                from manifesto.edge.files import read_text

                source = os.path.join(folder, "cli", "api.py")
                tree = ast.parse(read_text(source, source, what="Python file"))
                for node in tree.body:
                    if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                            isinstance(node.targets[0], ast.Name) and node.targets[0].id in names and \
                            isinstance(node.value, ast.Constant) and isinstance(node.value.value, (int, float)):
                        found[node.targets[0].id] = float(node.value.value)
            if len(found) != 2:
                raise ValueError("aiconfigurator's cli/api.py does not set its disaggregated latency corrections as "
                                 f"aiconfigurator {AIC_VERSION} does")
            self._cache["corrections"] = (found[names[0]], found[names[1]])
        return self._cache["corrections"]

    def front_version(self) -> str:
        """The installed aiconfigurator's version (its disaggregated session's package)."""
        from importlib.metadata import version

        return version("aiconfigurator")

    def gpus_per_node(self, system: str) -> int | None:
        """GPUs per node of AIConfigurator's system (its systems/*.yaml), None when unknown."""
        db, _ = self.database(system)
        spec = getattr(db, "system_spec", None) or {}
        return int((spec.get("node") or {}).get("num_gpus_per_node") or 0) or None

    def is_moe(self, model_id: str) -> bool:
        from aiconfigurator_core.sdk.models import check_is_moe

        return bool(check_is_moe(model_id))

    def estimate(self, *, model_id: str, arch, part: str | None, cand, fit, gpus_per_node: int,
                 nvlink_domain: bool, work: PerfWorkload) -> Estimate:
        """The layout's figures per replica of ``cand`` (``Estimate.scale`` makes the totals)."""
        batch = batch_per_rank(cand, cand.replicas, work.concurrency)
        system = system_for(part)
        if system is None:
            why = f"AIConfigurator has no tables for {part or 'this accelerator'}"
        elif not self.has_model(model_id):
            why = f"AIConfigurator {self.version} has no model config for {model_id}"
        else:
            result, version = self.agg(model_id, system, cand, fit.kv_dtype, work, batch)
            if result is not None:
                return Estimate(float(result["ttft"]), float(result["tpot"]), float(result["tokens/s"]),
                                float(result["seq/s"]), batch,
                                f"aiconfigurator-core {self.version} {system} {BACKEND} {version} agg")
            why = version
        est = roofline(arch, part, cand, fit, batch, gpus_per_node, nvlink_domain, work)
        est.note = why
        return est


def _quiet() -> None:
    """AIConfigurator logs its loading at INFO and WARNING; plan prints its own lines."""
    import logging

    for name in ("aiconfigurator", "aiconfigurator_core"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _aic_agg(db, model_id: str, system: str, cand, kv_dtype: str, work: PerfWorkload, batch: int) -> dict:
    """AIConfigurator's aggregated estimate of one layout: the steps of its ``cli estimate
    --estimate-mode agg`` (aiconfigurator 0.12.0, cli/api.py ``_run_agg_estimate``) through
    aiconfigurator-core's modules, with ``--kvcache-quant-mode`` set to what vLLM runs."""
    from aiconfigurator_core.sdk.backends.factory import get_backend
    from aiconfigurator_core.sdk.config import RuntimeConfig
    from aiconfigurator_core.sdk.config_builders import build_model_config
    from aiconfigurator_core.sdk.models import (check_is_moe, get_model, resolve_context_fmha_by_data,
                                                resolve_dsv4_moe_arch, resolve_nvfp4_for_system)

    moe_tp, moe_ep = moe_layout(cand) if check_is_moe(model_id) else (None, None)
    config = build_model_config(cand.tp, cand.pp, cand.dp, moe_tp, moe_ep, None, kv_mode(kv_dtype))
    resolve_context_fmha_by_data(config, model_id, db, BACKEND, is_context_role=True)
    resolve_dsv4_moe_arch(config, model_id, system_name=system, backend_name=BACKEND)
    resolve_nvfp4_for_system(config, system, model_id, backend_name=BACKEND)
    runtime = RuntimeConfig(isl=work.isl, osl=work.osl, batch_size=batch, prefix=0)
    model = get_model(model_id, config, BACKEND)
    summary = get_backend(BACKEND).run_agg(model, db, runtime, ctx_tokens=work.isl)
    result = summary.get_result_dict()
    if result is None:
        raise ValueError("the estimate produced no result")
    return result


def _aic_disagg(engine: Engine, db, model_id: str, system: str, prefill, decode, kv_dtype: str,
                work: PerfWorkload) -> dict:
    """AIConfigurator's disaggregated estimate of ``prefill`` and ``decode`` workers on one
    system: the steps of its ``cli estimate --estimate-mode disagg`` (aiconfigurator 0.12.0,
    cli/api.py ``_run_disagg_estimate``: a ``DisaggInferenceSession`` with the command line's
    latency corrections, ``run_disagg``, refused when out of memory), on the engine's loaded
    tables and role configs. tests/perf/test_plan_perf.py compares the two."""
    from aiconfigurator.sdk.inference_session import DisaggInferenceSession
    from aiconfigurator.sdk.speculative import SpeculativeDecodingProfile
    from aiconfigurator_core.sdk.backends.factory import get_backend
    from aiconfigurator_core.sdk.config import RuntimeConfig

    runtime = RuntimeConfig(isl=work.isl, osl=work.osl, image_height=0, image_width=0, num_images_per_request=1,
                            prefix=0, engine_step_backend=None)
    session = DisaggInferenceSession(prefill_database=db, prefill_backend=get_backend(BACKEND), decode_database=db,
                                     decode_backend=get_backend(BACKEND))
    session.set_latency_correction_scales(*engine.cli_corrections())
    summary = session.run_disagg(
        model_path=model_id, runtime_config=runtime,
        prefill_model_config=engine.role_config(db, model_id, system, prefill.layout, kv_dtype, "context"),
        prefill_batch_size=prefill.batch, prefill_num_worker=prefill.workers,
        decode_model_config=engine.role_config(db, model_id, system, decode.layout, kv_dtype, "generation"),
        decode_batch_size=decode.batch, decode_num_worker=decode.workers,
        speculative_profile=SpeculativeDecodingProfile.from_inputs(0, None))
    if summary.check_oom():
        raise ValueError(f"OOM: AIConfigurator's memory model does not fit {model_id} on {system} with this layout")
    result = summary.get_result_dict()
    if result is None:
        raise ValueError("the estimate produced no result")
    return result


def _flops_per_token(arch, fit, gpus: int) -> float:
    """2 x the parameters a token goes through: the published active count for a MoE model,
    the published total for a dense one, else the weights' bytes over their bytes per parameter."""
    from manifesto.resolve.architecture import WEIGHT_BYTES

    params = arch.active_params if arch.is_moe else arch.params
    if not params:
        params = fit.weights * gpus / WEIGHT_BYTES.get(arch.weight_format, 2.0)
    return 2.0 * params


def roofline(arch, part: str | None, cand, fit, batch: int, gpus_per_node: int, nvlink_domain: bool,
             work: PerfWorkload) -> Estimate:
    """The module's roofline model of one replica of ``cand`` (see the module's docstring)."""
    hw = HARDWARE.get(part or "")
    if hw is None:
        raise ValueError(f"no data-sheet figures for {part or 'this accelerator'} (manifesto.perf.engine.HARDWARE)")
    narrow = arch.weight_format in ("fp8", "nvfp4", "mxfp4", "fp4") and hw.fp8_tflops > hw.bf16_tflops
    flops = (hw.fp8_tflops if narrow else hw.bf16_tflops) * 1e12 * COMPUTE_EFFICIENCY
    hbm = hw.hbm_tbps * 1e12 * HBM_EFFICIENCY
    up, out = hw.link_gbps * 1e9 * LINK_EFFICIENCY, SCALE_OUT_GBPS * 1e9 * LINK_EFFICIENCY
    engine = cand.tp * cand.pp * cand.dp
    f_tok = _flops_per_token(arch, fit, engine)
    layers = arch.layers / cand.pp
    act = 2 * arch.hidden_size  # bytes of one token's hidden state (bf16)

    def link(width: int) -> float:
        return up if nvlink_domain or width <= gpus_per_node else out

    def comm(tokens: int) -> float:
        t = 0.0
        if cand.tp > 1:  # two all-reduces per layer (attention and MLP)
            t += layers * 2 * (2 * (cand.tp - 1) / cand.tp * tokens * act / link(cand.tp) + COLLECTIVE_LATENCY_S)
        if arch.is_moe and cand.ep and cand.tp * cand.dp > 1:  # dispatch and combine per MoE layer
            ep = cand.tp * cand.dp
            moe_layers = max(arch.layers - arch.dense_layers, 0) / cand.pp
            k = max(arch.active_experts, 1)
            t += moe_layers * 2 * (tokens * k * act * (ep - 1) / ep / link(ep) + COLLECTIVE_LATENCY_S)
        return t

    # Prefill of one request on one DP rank: every stage in turn, compute bound (or weight-read bound).
    prefill = 0.0
    for _ in range(cand.pp):
        prefill += max(f_tok * work.isl / (cand.tp * cand.pp * flops), fit.weights / hbm) + comm(work.isl)
    prefill += (cand.pp - 1) * (work.isl * act / link(cand.tp * cand.pp) + COLLECTIVE_LATENCY_S)
    # One decode step of a micro-batch of `batch` sequences per DP rank through every stage.
    mean_len = work.isl + work.osl / 2
    read = fit.weights + batch * mean_len * fit.kv_per_token
    stage = max(read / hbm, f_tok * batch / (cand.tp * cand.pp * flops)) + comm(batch)
    itl = cand.pp * stage + (cand.pp - 1) * (batch * act / link(cand.tp * cand.pp) + COLLECTIVE_LATENCY_S)
    # In-flight batching: a rank's batch stalls for each of its sequences' prefill, so the time
    # between a sequence's tokens is the decode step plus its share of the batch's prefills.
    cycle = work.osl * itl + batch * prefill
    itl = cycle / work.osl
    # A new sequence queues behind the rank's other prefills: the M/D/1 mean wait at the share
    # of the cycle that prefills take (busy = batch x prefill / cycle).
    busy = min(batch * prefill / cycle, 0.95)
    ttft = prefill + itl + busy * prefill / (2 * (1 - busy))
    tokens_s = batch * cand.dp * cand.pp * work.osl / cycle
    source = f"roofline ({hw.source}; HBM x{HBM_EFFICIENCY:g}, tensor x{COMPUTE_EFFICIENCY:g}, links x{LINK_EFFICIENCY:g})"
    return Estimate(ttft * 1000, itl * 1000, tokens_s, tokens_s / work.osl, batch, source)


class Planner:
    """What ``plan`` calls for each proposed layout (``capacity.plan_model(performance=...)``):
    the estimate of ``work`` on it, scaled to its replicas and priced with its budget."""

    def __init__(self, engine: Engine, work: PerfWorkload, model_id: str) -> None:
        self.engine, self.work, self.model_id = engine, work, model_id
        self.fallbacks: dict[str, str] = {}  # cluster/accelerator -> why the roofline stood in
        self._where = ""

    def assess(self, cluster, accel_name: str, accel, outcome, arch, nvlink_domain: bool) -> Estimate:
        from manifesto.errors import ManifestoError

        part = part_of(cluster, accel_name, accel.gpu_arch)
        cand, budget = outcome.candidate, outcome.plan.budget
        where = f"{cluster.name}/{accel_name}"
        if where != self._where:
            self._where = where
            self.engine.progress(f"estimating the layouts on {where}")
        try:
            est = self.engine.estimate(model_id=self.model_id, arch=arch, part=part, cand=cand, fit=outcome.fit,
                                       gpus_per_node=accel.gpus_per_node,
                                       nvlink_domain=nvlink_domain, work=self.work)
        except ValueError as exc:
            raise ManifestoError(f"cannot estimate {cluster.name}/{accel_name}: {exc}") from None
        if est.note:
            self.fallbacks.setdefault(f"{cluster.name}/{accel_name} {cand.text()}", est.note)
        return est.scale(cand.replicas, budget.gpus, budget.hourly_cost, self.work)

    def describe(self) -> dict:
        """What the figures are and where they come from (``-o json``'s ``performance``)."""
        return {"workload": self.work.to_dict(), "engine": f"aiconfigurator-core {self.engine.version}",
                "backend": BACKEND, "database_mode": DATABASE_MODE,
                "roofline": {"hbm_efficiency": HBM_EFFICIENCY, "compute_efficiency": COMPUTE_EFFICIENCY,
                             "link_efficiency": LINK_EFFICIENCY, "scale_out_gbps": SCALE_OUT_GBPS,
                             "collective_latency_s": COLLECTIVE_LATENCY_S},
                "fallbacks": [{"layout": k, "reason": v} for k, v in sorted(self.fallbacks.items())],
                "ranking": "layouts meeting every target first, cheapest per million output tokens first (GPUs "
                           "per output token/s where the profile prices no GPU); then the misses, nearest first"}

