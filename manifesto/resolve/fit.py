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
  and what vLLM 0.33.0's profiler keeps back besides (resolve/overhead.py: the profiling run's
  activation peak, memory outside PyTorch, NCCL buffers, the CUDA-graph estimate); the rest
  holds the KV cache, unless --kv-cache-memory-bytes sets its size.
"""

from __future__ import annotations

import math

from manifesto.resolve.architecture import WEIGHT_BYTES, Architecture
from manifesto.resolve.overhead import overhead_terms
from manifesto.resolve.plan import Layout, MemoryFit

__all__ = ["DEFAULT_UTILIZATION", "Params", "count_params", "weights_per_gpu", "kv_bytes_per_token",
           "plan_fit", "gib", "decode_context_parallel", "mxfp4_backend"]

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


#: vLLM 0.33.0's MXFP4 MoE backend for gpt-oss by GPU family, the first of
#: _get_priority_backends_for_gpt_oss (fused_moe/oracle/mxfp4.py) the GPU supports: FlashInfer
#: TRT-LLM on data-center Blackwell (SM100), OpenAI's Triton kernels on Hopper (SM90), Marlin
#: below SM90 and on SM120 (where Marlin is ordered before Triton); ROCm takes the ROCm branch.
_GPT_OSS_MXFP4_BACKEND = {"b200": "flashinfer_trtllm", "gb200": "flashinfer_trtllm", "b300": "flashinfer_trtllm",
                          "gb300": "flashinfer_trtllm", "h100": "triton", "h200": "triton", "h20": "triton"}
#: (intermediate, hidden) alignment of mxfp4_round_up_hidden_size_and_intermediate_size (same
#: file) per backend --moe-backend names; 0: that size is not rounded.
_MXFP4_ALIGN = {"flashinfer_trtllm": (128, 256), "marlin": (128, 256), "triton": (64, 0),
                "flashinfer_cutlass": (128, 128), "cutlass": (128, 128), "deep_gemm": (128, 128),
                "emulation": (32, 32), "rocm": (256, 256)}


def mxfp4_backend(family: str, requested: str = "") -> str:
    """The MXFP4 MoE backend vLLM 0.33.0 runs gpt-oss with: ``--moe-backend`` when it names
    one of _MXFP4_ALIGN, else the family's default (_GPT_OSS_MXFP4_BACKEND; Marlin otherwise)."""
    if requested in _MXFP4_ALIGN:
        return requested
    family = family.lower()
    if family.startswith("mi"):
        return "rocm"
    return _GPT_OSS_MXFP4_BACKEND.get(family, "marlin")


def _round_up(value: int, align: int) -> int:
    return -(-value // align) * align if align else value


def _mxfp4_experts(a: Architecture, *, pp: int, expert_group: int, ep: bool, backend: str) -> int:
    """Routed-expert bytes on one GPU of a gpt-oss MXFP4 checkpoint as vLLM 0.33.0 allocates
    them (quantization/mxfp4.py: GptOssMxfp4MoEMethod.maybe_roundup_sizes): the hidden size and
    the intermediate size per partition rounded up to the backend's alignment, then w13
    (2 x intermediate) and w2, 4 bits a value plus one scale byte per 32 values."""
    inter_align, hidden_align = _MXFP4_ALIGN[backend]
    local = a.experts // expert_group if ep else a.experts
    inter = _round_up(a.moe_intermediate_size // (1 if ep else expert_group), inter_align)
    hidden = _round_up(a.expert_hidden_size or a.hidden_size, hidden_align)
    layers = math.ceil((a.layers - a.dense_layers) / pp)
    return round(layers * local * 3 * inter * hidden * WEIGHT_BYTES["mxfp4"])


def weights_per_gpu(a: Architecture, p: Params, *, tp: int, pp: int, expert_group: int, ep: bool = False,
                    family: str = "", moe_backend: str = "") -> tuple[tuple[str, int], ...]:
    """(part, bytes) on the busiest GPU of the layout. ``ep``: the expert group holds whole
    experts; ``family`` and ``moe_backend`` pick gpt-oss's MXFP4 padding."""
    stage = math.ceil(a.layers / pp) / a.layers
    matrices = 1 if pp > 1 or a.tie_word_embeddings else 2
    emb = a.vocab_size * a.hidden_size * matrices * WEIGHT_BYTES[a.dtype] / tp
    dense = p.layers * WEIGHT_BYTES[a.weight_format] * stage / tp
    parts = [("embedding and LM head", round(emb)), ("attention and dense layers", round(dense))]
    if p.experts and a.model_type == "gpt_oss" and a.expert_format == "mxfp4":
        parts.append(("routed experts", _mxfp4_experts(a, pp=pp, expert_group=expert_group, ep=ep,
                                                       backend=mxfp4_backend(family, moe_backend))))
    elif p.experts:
        parts.append(("routed experts", round(p.experts * WEIGHT_BYTES[a.expert_format] * stage / expert_group)))
    return tuple(parts)


class KvCache:
    """What the KV cache of one role costs on one GPU: ``per_token`` bytes for every token of a
    sequence, ``per_sequence`` bytes a sequence holds whatever its length (sliding windows,
    recurrent states), and ``notes``, the assumptions behind both, for explain."""

    __slots__ = ("per_token", "per_sequence", "notes")

    def __init__(self, per_token: int, per_sequence: int, notes: tuple[str, ...]) -> None:
        self.per_token, self.per_sequence, self.notes = per_token, per_sequence, notes


def _on_stage(count: int, a: Architecture, pp: int) -> int:
    """Layers of one kind on the busiest pipeline stage, the kinds spread evenly over the stages."""
    if pp <= 1 or not count:
        return count
    return math.ceil(count * math.ceil(a.layers / pp) / a.layers)


#: DeepSeek-V4's fp8_ds_mla entry (v1/attention/backends/mla/flashmla_sparse.py, vLLM 0.33.0): 448
#: float8_e4m3 NoPE values, 64 bfloat16 RoPE values and 7 UE8M0 scales + 1 pad byte = 584 bytes;
#: its FP8 indexer key (models/deepseek_v4/attention.py): 128 fp8 + 4 fp32 scale bytes = 132.
DS_MLA_ENTRY, DS_MLA_INDEXER = 584, 132


def _ds_mla_cache(a: Architecture, pp: int, max_len: int) -> KvCache:
    """DeepSeek-V4 under FlashMLA (or FlashInfer on SM120), whose fp8_ds_mla layout vLLM 0.33.0
    forces whatever --kv-cache-dtype asks (models/deepseek_v4/attention.py:
    _resolve_dsv4_kv_cache_dtype: auto becomes fp8, stored as fp8_ds_mla)."""
    notes = [f"DeepSeek-V4's fp8_ds_mla layout (FlashMLA; vLLM stores it whatever kv_cache_dtype asks): "
             f"{DS_MLA_ENTRY} bytes an entry (448 fp8 NoPE + 64 bf16 RoPE values + 8 scale bytes), "
             f"{DS_MLA_INDEXER} bytes an indexer key (128 fp8 + 4 scale bytes); pages rounded up to 576 bytes "
             "add under 0.2% and are left out"]
    per_token = 0.0
    for ratio in (4, 128):
        n = _on_stage(sum(1 for r in a.compress_ratios if r == ratio), a, pp)
        entry = DS_MLA_ENTRY + (DS_MLA_INDEXER if ratio == 4 else 0)
        per_token += n * entry / ratio
        notes.append(f"{n} compressed layer(s) at ratio {ratio}: one {entry}-byte entry per {ratio} tokens")
    window = min(a.sliding_window, max_len) if max_len else a.sliding_window
    per_seq = _on_stage(a.layers, a, pp) * window * DS_MLA_ENTRY
    notes.append(f"every layer also keeps the last {a.sliding_window} tokens uncompressed ({DS_MLA_ENTRY} bytes "
                 "each): a fixed amount per sequence; one KV head, so every TP rank holds all of it")
    return KvCache(math.ceil(per_token), per_seq, tuple(notes))


def kv_cache(a: Architecture, *, tp: int, pp: int, kv_dtype: str, max_len: int = 0, ds_mla: bool = False,
             dcp: int = 1) -> KvCache:
    """The KV cache of ``a`` on one GPU of a tp x pp layout (per_token 0: the attention kind is
    not modelled). ``max_len`` bounds a sliding window shorter than the sequence; ``ds_mla``:
    the attention backend stores DeepSeek-V4's cache in the fp8_ds_mla layout; ``dcp``: decode
    context parallelism spreads each sequence's full-attention tokens over that many ranks."""
    kv = _kv_cache(a, tp=tp, pp=pp, kv_dtype=kv_dtype, max_len=max_len, ds_mla=ds_mla)
    if dcp <= 1 or not kv.per_token:
        return kv
    # vLLM 0.33.0 v1/core/kv_cache_utils.py: resolve_dcp_kv_block_size multiplies a DCP-sharded
    # spec's block size by the DCP size: a page of the same bytes holds dcp times the tokens.
    note = (f"decode context parallelism {dcp}: each of the {dcp} ranks sharing a KV head keeps every "
            f"{dcp}th token (v1/core/kv_cache_utils.py: resolve_dcp_kv_block_size)")
    return KvCache(math.ceil(kv.per_token / dcp), kv.per_sequence, kv.notes + (note,))


def _kv_cache(a: Architecture, *, tp: int, pp: int, kv_dtype: str, max_len: int, ds_mla: bool) -> KvCache:
    if a.compress_ratios and ds_mla:
        return _ds_mla_cache(a, pp, max_len)
    named = _KV_BYTES.get(kv_dtype)
    per_value = named or (4 if a.dtype == "fp32" else int(WEIGHT_BYTES[a.dtype]))
    dtype_note = (f"kv_cache_dtype {kv_dtype}: {per_value} byte(s) per value" if named else
                  f"kv_cache_dtype {kv_dtype}: the model dtype ({a.dtype}), {per_value} byte(s) per value")
    notes = [dtype_note]
    kv_heads = max(a.kv_heads // tp, 1)
    per_seq = 0
    if a.compress_ratios:  # DeepSeek-V4: compressed entries per layer, plus an uncompressed window
        values = 0.0
        for ratio in (4, 128):
            n = _on_stage(sum(1 for r in a.compress_ratios if r == ratio), a, pp)
            width = a.head_dim + (a.index_head_dim if ratio == 4 else 0)
            values += n * width / ratio
            notes.append(f"{n} compressed layer(s) at ratio {ratio}: one {width}-value entry per {ratio} tokens"
                         + (f" ({a.head_dim} KV + {a.index_head_dim} indexer key)" if ratio == 4 else ""))
        window = min(a.sliding_window, max_len) if max_len else a.sliding_window
        layers = _on_stage(a.layers, a, pp)
        per_seq = layers * window * a.head_dim * per_value
        notes.append(f"every layer also keeps the last {a.sliding_window} tokens uncompressed ({a.head_dim} values "
                     "each): a fixed amount per sequence; one KV head, so every TP rank holds all of it")
        return KvCache(math.ceil(values * per_value), per_seq, tuple(notes))
    linear = _on_stage(a.linear_layers, a, pp)
    full = _on_stage(a.layers - a.linear_layers - a.sliding_layers, a, pp)
    if linear:  # Kimi Linear / K3: KDA layers hold a recurrent state, not a cache that grows
        # vLLM 0.33.0 (model_executor/layers/mamba/mamba_utils.py): kda_state_dtype keeps the
        # recurrent state in float32 (mamba_ssm_cache_dtype auto) whatever the KV dtype, the conv
        # state in the model dtype; kda_state_shape: (heads / tp, head_dim, head_dim) and
        # (3 x heads x head_dim / tp, conv_kernel_size - 1), conv_kernel_size 4 unless the config says.
        heads = math.ceil(a.linear_heads / tp)
        kernel = a.linear_conv_kernel or 4
        state = heads * a.linear_head_dim * a.linear_head_dim * 4
        conv = (kernel - 1) * 3 * heads * a.linear_head_dim * int(WEIGHT_BYTES.get(a.dtype, 2))
        per_seq += linear * (state + conv)
        notes.append(f"{linear} linear-attention (KDA) layer(s): a float32 recurrent state of {heads} head(s) x "
                     f"{a.linear_head_dim} x {a.linear_head_dim} per sequence whatever the KV dtype, plus a "
                     f"{a.dtype} short-convolution state of {kernel - 1} tokens x 3 x {heads} x {a.linear_head_dim}"
                     + ("" if a.linear_conv_kernel else " (kernel 4: vLLM's kda_state_shape default, the record "
                        "gives none)"))
    if a.kv_lora_rank:
        per_token = full * (a.kv_lora_rank + a.qk_rope_head_dim) * per_value
        notes.append(f"{full} MLA layer(s): one latent of kv_lora_rank {a.kv_lora_rank} + qk_rope_head_dim "
                     f"{a.qk_rope_head_dim} per token and layer, the same on every TP rank")
    elif a.attention in ("mha", "gqa") or linear:
        per_token = 2 * full * kv_heads * a.head_dim * per_value
        notes.append(f"{full} attention layer(s): K and V of {kv_heads} KV head(s) of {a.head_dim} per token"
                     + (" (a GPU holds at least one head)" if a.kv_heads < tp else ""))
    else:
        return KvCache(0, 0, ())
    if a.sliding_layers:
        sliding = _on_stage(a.sliding_layers, a, pp)
        window = min(a.sliding_window, max_len) if max_len else a.sliding_window
        per_seq += 2 * sliding * kv_heads * a.head_dim * per_value * window
        notes.append(f"{sliding} sliding-window layer(s) keep at most {a.sliding_window} tokens: a fixed amount "
                     "per sequence")
    if pp > 1:
        notes.append(f"the busiest of {pp} pipeline stages holds {math.ceil(a.layers / pp)} of {a.layers} layers, "
                     "each kind in proportion")
    return KvCache(per_token, per_seq, tuple(notes))


def kv_bytes_per_token(a: Architecture, *, tp: int, pp: int, kv_dtype: str) -> int:
    """Bytes one token of KV cache takes on one GPU; 0 when the attention kind is not modelled."""
    return kv_cache(a, tp=tp, pp=pp, kv_dtype=kv_dtype).per_token


def _arg(args, flag: str) -> str | None:
    return next((x.value for x in args if x.flag == flag and not x.raw), None)


def decode_context_parallel(args) -> int:
    """The role's --decode-context-parallel-size (1 when unset or not a whole number; vLLM's
    argument parser refuses those before any memory is counted)."""
    text = _arg(args, "--decode-context-parallel-size")
    return int(text) if text is not None and text.strip().isdigit() and int(text) > 0 else 1


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


def _kv_memory_bytes(text: str | None) -> int | None:
    """--kv-cache-memory-bytes: a byte count, or one with a k/m/g/t suffix (decimal) or
    ki/mi/gi/ti (binary), as vLLM 0.33.0's human-readable integers read it; None when unset."""
    import re

    if text is None:
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgtKMGT]?)([iI]?)", text.strip())
    if m is None:
        return None
    scale = (1024 if m.group(3) else 1000) ** " kmgt".index(m.group(2).lower() or " ")
    return int(float(m.group(1)) * scale)


def _utilization(text: str | None) -> float | None:
    try:
        value = DEFAULT_UTILIZATION if text is None else float(text)
    except ValueError:
        return None
    return value if 0 < value <= 1 else None


def plan_fit(a: Architecture | None, lay: Layout, args, memory: int | None, *, note: str = "",
             memory_source: str = "", family: str = "") -> MemoryFit:
    """The fit of one role. ``args`` are its resolved vLLM Args; ``memory`` the GPU's bytes,
    ``memory_source`` where that figure comes from and ``family`` the accelerator's gpu_arch
    (vLLM's batch defaults and graph sizes depend on it)."""
    if a is None:
        return MemoryFit(status="unknown", note=note or "no architecture record for this model")
    if memory is None:
        return MemoryFit(status="unknown", source=a.source,
                   note=memory_source or "the accelerator is not in the table of CUDA-visible memory "
                        "(manifesto/schema/parts.py) and the cluster profile gives no "
                        "accelerators.profiles.*.memory")
    p = count_params(a)
    if p is None:
        return MemoryFit(status="unknown", source=a.source,
                   note=f"{a.attention} attention and no published activated-parameter count to size its layers")
    util = _utilization(_arg(args, "--gpu-memory-utilization"))
    kv_dtype = _arg(args, "--kv-cache-dtype") or "auto"
    max_len = _max_len(_arg(args, "--max-model-len"), a.max_position_embeddings)
    if util is None or max_len is None:
        bad = "--gpu-memory-utilization" if util is None else "--max-model-len"
        return MemoryFit(status="unknown", source=a.source, note=f"{bad} {_arg(args, bad)} is not a value vLLM takes")
    # vLLM 0.33.0 shards the routed experts over every GPU of the DP group whether or not EP is
    # on (fused_moe/config.py: FusedMoEParallelConfig.make, flatten_tp_across_dp_and_pcp): with EP
    # each GPU holds whole experts, without it a tp x dp slice of every expert.
    group = lay.tp * lay.dp
    backend = _arg(args, "--moe-backend") or ""
    parts = weights_per_gpu(a, p, tp=lay.tp, pp=lay.pp, expert_group=group, ep=lay.ep, family=family,
                            moe_backend=backend.lower().replace("-", "_"))
    weights = sum(b for _, b in parts)
    usable = int(memory * util)
    terms = overhead_terms(a, tp=lay.tp, pp=lay.pp, dp=lay.dp, ep=lay.ep, args=args, memory=memory, family=family)
    overhead = sum(t.bytes for t in terms)
    fixed_kv = _kv_memory_bytes(_arg(args, "--kv-cache-memory-bytes"))
    if fixed_kv is not None:  # vLLM skips the profiling: the KV cache is this size (gpu_worker.py)
        budget = fixed_kv
    else:
        budget = max(usable - weights - overhead, 0)
    # DeepSeek-V4 gets FlashMLA (FlashInfer on SM120) unless another backend is asked for, and
    # both store fp8_ds_mla (models/deepseek_v4/nvidia/model.py picks the class; ROCm differs).
    attention_backend = _arg(args, "--attention-backend") or ""
    ds_mla = bool(a.compress_ratios) and not family.lower().startswith("mi") \
        and attention_backend != "FLASHINFER_MLA_SPARSE_DSV4"
    if ds_mla:
        kv_dtype = "fp8_ds_mla"
    dcp = decode_context_parallel(args)
    kv = kv_cache(a, tp=lay.tp, pp=lay.pp, kv_dtype=kv_dtype, max_len=max_len, ds_mla=ds_mla, dcp=dcp)
    experts = "" if not a.is_moe else (f" ep={group}" if lay.ep else f" experts split {group} ways")
    layout = f"tp={lay.tp} pp={lay.pp}" + (f" dp={lay.dp}" if lay.dp > 1 else "") + (experts or " ep=off") \
        + (f" dcp={dcp}" if dcp > 1 else "")
    common = dict(source=a.source, gpu_memory=memory, memory_source=memory_source, utilization=util,
                  headroom=overhead, overhead_parts=tuple(t.as_tuple() for t in terms), weights=weights,
                  weight_parts=parts, kv_dtype=kv_dtype, kv_budget=budget, max_model_len=max_len, layout=layout)
    if not kv.per_token:
        return MemoryFit(status="unknown", note=f"the KV cache of {a.model_type}'s attention is not modelled", **common)
    tokens = max(budget - kv.per_sequence, 0) // kv.per_token
    return MemoryFit(status="ok" if tokens >= max_len else "kv-short", kv_per_token=kv.per_token,
               kv_per_sequence=kv.per_sequence, kv_notes=kv.notes, kv_tokens=tokens, **common)


def _weights_text(fit: MemoryFit) -> str:
    return ", ".join(f"{name} {gib(b)}" for name, b in fit.weight_parts)


def _memory_text(fit: MemoryFit, accelerator: str, memory_at: str = "") -> str:
    """The GPU memory and, briefly, where it comes from (the long form is in explain)."""
    at = f" at {memory_at}" if memory_at else ""
    field = fit.memory_source.split(" ", 1)[0].rstrip(",")
    if not fit.memory_source:
        why = ""
    elif "data-sheet" in fit.memory_source:
        why = f" (CUDA-visible memory from the accelerator table; {field}{at} is the data-sheet size)"
    elif fit.memory_source.startswith("accelerators.profiles."):
        why = f" ({field}{at})"
    else:
        why = " (CUDA-visible memory from the accelerator table)"
    return f"the {accelerator}'s {gib(fit.gpu_memory)}{why}"


def check_fit(fit: MemoryFit, role: str, accelerator: str, short_kv_cache: str, where, base: tuple,
              max_len_path: tuple | None = None, memory_at: str = "") -> None:
    """Refuse a role whose weights alone exceed what vLLM may use of one GPU, or whose KV cache
    cannot hold max_model_len (vLLM refuses to start then), unless fit.short_kv_cache: warn.
    ``max_len_path`` is the spec field that sets max_model_len (None: it is not set);
    ``memory_at`` places the cluster profile's memory field when the GPU memory comes from it."""
    from manifesto.errors import IncompatiblePairError
    from manifesto.resolve.failures import fail

    # A model that cannot run on this cluster's GPUs is an incompatible pair, like a spec pinned to
    # an accelerator the cluster lacks: render, validate and deploy fail, `build //::` skips it.
    if fit.status == "unknown" or not fit.gpu_memory:
        return
    usable = int(fit.gpu_memory * fit.utilization)
    if fit.weights > usable:
        raise fail(f"role '{role}' does not fit: its weights need {gib(fit.weights)} per GPU ({fit.layout}: "
                   f"{_weights_text(fit)}), but gpu_memory_utilization {fit.utilization:g} of "
                   f"{_memory_text(fit, accelerator, memory_at)} allows {gib(usable)}. Spread the model over more GPUs "
                   "(raise tp or pp, or dp with ep on) or use a GPU with more memory. Facts from " + fit.source,
                   where, base + ("parallelism",), IncompatiblePairError)
    if fit.status == "kv-short" and short_kv_cache != "warn":
        fixed = f" and {gib(fit.kv_per_sequence)} per sequence" if fit.kv_per_sequence else ""
        need = fit.kv_per_token * fit.max_model_len + fit.kv_per_sequence
        change = ("lower max_model_len here" if max_len_path else
                  f"set vllm.max_model_len (it defaults to the model's {fit.max_model_len})")
        raise fail(f"role '{role}': the KV cache holds {fit.kv_tokens} tokens, fewer than max_model_len "
                   f"{fit.max_model_len}, so vLLM would refuse to start. Per GPU ({fit.layout}): "
                   f"gpu_memory_utilization {fit.utilization:g} x {_memory_text(fit, accelerator, memory_at)} = {gib(usable)}, "
                   f"minus {gib(fit.weights)} of weights and {gib(fit.headroom)} vLLM keeps back for activations, "
                   f"CUDA graphs and buffers, leaves "
                   f"{gib(fit.kv_budget)}; max_model_len needs {gib(need)} ({fit.kv_per_token} bytes per token"
                   f"{fixed}, kv_cache_dtype {fit.kv_dtype}). To fix: {change}, raise gpu_memory_utilization, "
                   + ("" if fit.kv_dtype.startswith("fp8") else "use kv_cache_dtype fp8, ")
                   + "spread the model over more GPUs or use a GPU with more memory "
                   "(fit.short_kv_cache: warn only warns)",
                   where, max_len_path or base, IncompatiblePairError)
