"""Memory fit of a role: weights per GPU, KV cache per token, and the tokens that fit.

Pure arithmetic on an ``Architecture`` (data handed in by the loader) and the role's
resolved layout and vLLM arguments. The model it follows is vLLM's:

* weights: the dense linear layers and attention are split by TP, layers by PP (the worst
  stage holds ceil(layers / pp) of them), routed experts by the expert-parallel group
  (TP x DP with EP on, else TP); the embedding and LM head are split by TP (vocabulary
  parallel) and, with PP, sit on different stages.
* KV cache per token on one GPU: MHA/GQA store K and V for every KV head of the GPU's
  share (a GPU holds at least one head, replicated when TP exceeds the KV heads); MLA stores
  one latent vector (kv_lora_rank + qk_rope_head_dim) per layer, the same on every TP rank.
* memory vLLM may use: gpu_memory_utilization x the GPU's memory. From it come the weights
  and ``HEADROOM`` for activations, CUDA graphs, NCCL buffers and the CUDA context; the rest
  holds the KV cache.
"""

from __future__ import annotations

import math

from manifesto.resolve.architecture import WEIGHT_BYTES, Architecture
from manifesto.resolve.plan import Fit, Layout

__all__ = ["HEADROOM", "DEFAULT_UTILIZATION", "Params", "count_params", "weights_per_gpu", "kv_bytes_per_token",
           "plan_fit", "gib"]

#: Per-GPU reserve for activations at the profiled batch, CUDA graphs, NCCL buffers and the
#: CUDA context. vLLM measures these at start-up; a few GiB is what large-model servers
#: typically use, so the check leaves 4 GiB and states it.
HEADROOM = 4 * 1024**3
#: vLLM's default --gpu-memory-utilization (CacheConfig.gpu_memory_utilization in vLLM 0.33.0).
DEFAULT_UTILIZATION = 0.92
_KV_BYTES = {"auto": None, "bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4,
             "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "fp8_ds_mla": 1}


def gib(n: float) -> str:
    return f"{n / 1024**3:.1f} GiB"


class Params:
    """Parameter counts by where they live."""

    __slots__ = ("embedding", "layers", "experts", "total")

    def __init__(self, embedding: int, layers: int, experts: int) -> None:
        self.embedding = embedding  # embedding + LM head (one matrix when tied)
        self.layers = layers  # attention, dense MLPs, shared experts, routers, norms
        self.experts = experts  # routed experts
        self.total = embedding + layers + experts


def _attention_params(a: Architecture) -> int:
    h = a.hidden_size
    if a.attention == "mla":
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        q = h * a.q_lora_rank + a.q_lora_rank * a.attention_heads * qk if a.q_lora_rank else h * a.attention_heads * qk
        kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank * a.attention_heads * (
            a.qk_nope_head_dim + a.v_head_dim)
        return q + kv + a.attention_heads * a.v_head_dim * h
    return 2 * h * a.attention_heads * a.head_dim + 2 * h * a.kv_heads * a.head_dim


def count_params(a: Architecture) -> Params | None:
    """Counted from the architecture; for attention the arithmetic does not model (hybrid), the
    non-expert part comes from the published activated count instead (None if there is none)."""
    h = a.hidden_size
    embedding = a.vocab_size * h * (1 if a.tie_word_embeddings else 2)
    moe_layers = a.layers - a.dense_layers if a.is_moe else 0
    experts = moe_layers * a.experts * 3 * (a.expert_hidden_size or h) * a.moe_intermediate_size
    if a.attention not in ("mha", "gqa", "mla"):
        if a.active_params is None or not a.is_moe:
            return None
        routed_active = experts * a.active_experts // a.experts
        return Params(embedding, max(a.active_params - routed_active - embedding, 0), experts)
    dense_mlp = (a.layers - moe_layers) * 3 * h * a.intermediate_size
    shared = moe_layers * a.shared_experts * 3 * h * a.moe_intermediate_size
    router = moe_layers * h * a.experts
    norms = a.layers * 2 * h + h
    return Params(embedding, a.layers * _attention_params(a) + dense_mlp + shared + router + norms, experts)


def weights_per_gpu(a: Architecture, p: Params, *, tp: int, pp: int, expert_group: int) -> tuple[tuple[str, int], ...]:
    """(part, bytes) on the busiest GPU of the layout."""
    stage = math.ceil(a.layers / pp) / a.layers
    matrices = 1 if pp > 1 or a.tie_word_embeddings else 2
    emb = a.vocab_size * a.hidden_size * matrices * WEIGHT_BYTES[a.dtype] / tp
    dense = p.layers * WEIGHT_BYTES[a.weight_format] * stage / tp
    parts = [("embedding and LM head", round(emb)), ("attention and dense layers", round(dense))]
    if p.experts:
        parts.append(("routed experts", round(p.experts * WEIGHT_BYTES[a.expert_format] * stage / expert_group)))
    return tuple(parts)


def kv_bytes_per_token(a: Architecture, *, tp: int, pp: int, kv_dtype: str) -> int:
    """Bytes one token of KV cache takes on one GPU; 0 when the attention kind is not modelled."""
    per_value = _KV_BYTES.get(kv_dtype) or int(WEIGHT_BYTES[a.dtype] if a.dtype != "fp32" else 4)
    layers = math.ceil(a.layers / pp)
    if a.attention == "mla":
        return layers * (a.kv_lora_rank + a.qk_rope_head_dim) * per_value
    if a.attention in ("mha", "gqa"):
        return 2 * layers * max(a.kv_heads // tp, 1) * a.head_dim * per_value
    return 0


def _arg(args, flag: str) -> str | None:
    return next((x.value for x in args if x.flag == flag and not x.raw), None)


_LEN = {"": 1, "k": 1000, "m": 1000**2, "K": 1024, "M": 1024**2}


def _max_len(text: str | None, default: int) -> int | None:
    """vLLM's --max-model-len: a count, or 1k/1K-style (decimal/binary) thousands; -1 (fit the
    memory, vLLM 0.33.0) counts as no requirement. None: not a value vLLM takes."""
    import re

    if text is None:
        return default
    m = re.fullmatch(r"(-1|\d+)([kKmM]?)", text.strip())
    if m is None or (m.group(1) == "-1" and m.group(2)):
        return None
    return 0 if m.group(1) == "-1" else int(m.group(1)) * _LEN[m.group(2)]


def _utilization(text: str | None) -> float | None:
    try:
        value = DEFAULT_UTILIZATION if text is None else float(text)
    except ValueError:
        return None
    return value if 0 < value <= 1 else None


def plan_fit(a: Architecture | None, lay: Layout, args, memory: int | None, *, note: str = "") -> Fit:
    """The fit of one role. ``args`` are its resolved vLLM Args; ``memory`` the GPU's bytes."""
    if a is None:
        return Fit(status="unknown", note=note or "no architecture record for this model")
    if memory is None:
        return Fit(status="unknown", source=a.source,
                   note="the cluster profile gives no memory for this accelerator (accelerators.profiles.*.memory)")
    p = count_params(a)
    if p is None:
        return Fit(status="unknown", source=a.source,
                   note=f"{a.attention} attention and no published activated-parameter count to size its layers")
    util = _utilization(_arg(args, "--gpu-memory-utilization"))
    kv_dtype = _arg(args, "--kv-cache-dtype") or "auto"
    max_len = _max_len(_arg(args, "--max-model-len"), a.max_position_embeddings)
    if util is None or max_len is None:
        bad = "--gpu-memory-utilization" if util is None else "--max-model-len"
        return Fit(status="unknown", source=a.source, note=f"{bad} {_arg(args, bad)} is not a value vLLM takes")
    group = lay.tp * lay.dp if lay.ep else lay.tp
    parts = weights_per_gpu(a, p, tp=lay.tp, pp=lay.pp, expert_group=group)
    weights = sum(b for _, b in parts)
    usable = int(memory * util)
    budget = max(usable - weights - HEADROOM, 0)
    per_token = kv_bytes_per_token(a, tp=lay.tp, pp=lay.pp, kv_dtype=kv_dtype)
    tokens = budget // per_token if per_token else 0
    status = "ok" if not per_token or tokens >= max_len else "kv-short"
    note = "" if per_token else f"KV cache of {a.attention} attention ({a.model_type}) is not modelled"
    return Fit(status=status, note=note, source=a.source, gpu_memory=memory, utilization=util, headroom=HEADROOM,
               weights=weights, weight_parts=parts, kv_per_token=per_token, kv_dtype=kv_dtype, kv_budget=budget,
               kv_tokens=tokens, max_model_len=max_len,
               layout=f"tp={lay.tp} pp={lay.pp} " + (f"ep={group}" if lay.ep else "ep=off"))


def _weights_text(fit: Fit) -> str:
    return ", ".join(f"{name} {gib(b)}" for name, b in fit.weight_parts)


def check_fit(fit: Fit, role: str, accelerator: str, short_kv_cache: str, where, base: tuple) -> None:
    """Refuse a role whose weights alone exceed what vLLM may use of one GPU; refuse a KV cache
    shorter than max_model_len when the spec asks (fit.short_kv_cache: refuse)."""
    from manifesto.resolve.failures import fail

    if fit.status == "unknown":
        return
    usable = int(fit.gpu_memory * fit.utilization)
    if fit.weights > usable:
        raise fail(f"role '{role}' does not fit: its weights need {gib(fit.weights)} per GPU ({fit.layout}: "
                   f"{_weights_text(fit)}), but gpu_memory_utilization {fit.utilization:g} of the {accelerator}'s "
                   f"{gib(fit.gpu_memory)} allows {gib(usable)}. Spread the model over more GPUs (raise tp or pp, "
                   "or dp with ep on) or use a GPU with more memory. Facts from " + fit.source,
                   where, base + ("parallelism",))
    if fit.status == "kv-short" and short_kv_cache == "refuse":
        raise fail(f"role '{role}': the KV cache holds {fit.kv_tokens} tokens, fewer than max_model_len "
                   f"{fit.max_model_len} ({gib(fit.kv_budget)} per GPU left after {gib(fit.weights)} of weights "
                   f"and {gib(fit.headroom)} of headroom, at {fit.kv_per_token} bytes per token). Lower "
                   "max_model_len, raise gpu_memory_utilization, use kv_cache_dtype fp8 or spread the model over "
                   "more GPUs; fit.short_kv_cache: warn only warns", where, base)
