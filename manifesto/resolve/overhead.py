"""What vLLM 0.33.0 takes from a GPU besides the weights and the KV cache, term by term.

``v1/worker/gpu_worker.py: Worker.determine_available_memory`` sizes the KV cache as

    available = gpu_memory_utilization x total
                - non_kv_cache_memory          (utils/mem_utils.py: memory_profiling)
                - cudagraph_memory_estimate    (v1/worker/gpu_model_runner.py: profile_cudagraph_memory)

where ``non_kv_cache_memory`` is what the process consumed by the end of a profiling run
(weights, then NCCL, cuBLAS and other memory outside PyTorch's allocator, plus persistent
buffers) plus the run's transient activation peak: ``profile_run`` runs the model on
``max_num_batched_tokens`` dummy tokens, then the sampler on ``max_num_seqs`` rows of logits.
The CUDA-graph estimate is subtracted as well (``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS``
defaults to 1), unless ``enforce_eager`` or ``cudagraph_mode`` NONE turn graphs off.
``kv_cache_memory_bytes`` skips all of it: the KV cache is that size.

Each term below is either derived from the shapes vLLM allocates (``derived``) or a figure
calibrated on published start-up logs (``calibrated``); explain prints every term with its
kind and source. Pure arithmetic on an ``Architecture``, the layout and the vLLM arguments.
"""

from __future__ import annotations

import functools
import math

from manifesto.resolve.architecture import Architecture

__all__ = ["Term", "batch_limits", "capture_sizes", "overhead_terms", "SAMPLER_BYTES_PER_LOGIT",
           "SORTED_SAMPLER_EXTRA_BYTES", "NON_TORCH_BYTES", "COLLECTIVE_BYTES", "GRAPH_BYTES_PER_LAYER"]

GiB = 1024**3
MiB = 1024**2

#: Bytes per logit of the dummy sampler run (v1/worker/gpu_model_runner.py: _dummy_sampler_run,
#: v1/sample/sampler.py, v1/sample/ops/topk_topp_sampler.py): the bf16 logits the run holds (2),
#: the sampler's float32 copy (4; temperature divides it in place), the float32 probabilities
#: (4) and the exponential noise of random_sample (4; the division by it is in place). Top-k and
#: top-p run as Triton kernels (topk_topp_triton.py, vLLM PR #33538) that mask in place; the
#: PyTorch sort they replaced held more (SORTED_SAMPLER_EXTRA_BYTES). Derived from the tensors
#: the run creates.
SAMPLER_BYTES_PER_LOGIT = 14
#: What the PyTorch sort-based top-k/top-p path of vLLM releases before PR #33538 (merged
#: 2026-02-02) held on top, per logit, for reading start-up logs of those releases: the sort's
#: values, int64 indices and masks (18 bytes) and the sort's own scratch space, which PyTorch
#: sizes. Calibrated: vLLM 0.11's profiler logged activation peaks of 4.76, 7.38, 5.56 and
#: 5.64 GiB for 1024 rows of Llama-3.1-8B's, gpt-oss's, Qwen3-0.6B's and Qwen3-32B's
#: vocabularies on an H100, 38.4-38.9 bytes a logit
#: (https://github.com/llm-d/llm-d-benchmark/blob/4f4d44943c39b76b28e30dfa1fb0dfaf1ee894b5/config_explorer/empirical-vllm-memory-results.md);
#: 14 + 25 = 39 covers all four.
SORTED_SAMPLER_EXTRA_BYTES = 25
#: Memory outside PyTorch's allocator that one vLLM worker holds after its profiling run on a
#: single GPU (cuBLAS/cuBLASLt workspaces, the attention backend's workspace, persistent input
#: buffers). Calibrated on published start-up logs: "non_torch_memory takes 0.10GiB" (Llama-3-8B
#: on an A100 40GB, https://github.com/vllm-project/vllm/issues/12330), "non_torch_memory takes
#: 0.20GiB" (https://github.com/vllm-project/vllm/pull/14447), 0.13-0.14 GiB on H100s with vLLM
#: 0.11 (llm-d-benchmark, below), and gpt-oss-20b on an A100 80GB
#: keeping back 1.17 GiB besides its logged weights, of which the sampler takes 0.67
#: (tests/resolve/test_fit_published.py).
NON_TORCH_BYTES = GiB // 4
#: NCCL communicators and the custom all-reduce buffers of a worker in a group of more than one
#: GPU (TP, PP, or the DP group a MoE model's experts span). NCCL sizes its buffers itself (channels,
#: NVLink SHARP on NVSwitch systems), so the term cannot be derived from vLLM's source; it is
#: calibrated. vLLM 0.11 workers on H100s held 0.54-0.55 GiB outside PyTorch at TP2 against
#: 0.13-0.14 GiB at TP1, 0.41 GiB more
#: (https://github.com/llm-d/llm-d-benchmark/blob/4f4d44943c39b76b28e30dfa1fb0dfaf1ee894b5/config_explorer/empirical-vllm-memory-results.md);
#: V0 logs put it under 0.25 GiB at TP2-TP4 over PCIe and NVLink
#: (https://github.com/vllm-project/vllm/issues/16570, https://github.com/vllm-project/vllm/issues/13061).
#: 0.5 GiB covers them, erring towards refusing.
COLLECTIVE_BYTES = GiB // 2
#: CUDA-graph memory per captured graph and model layer, beyond the first (largest) capture of
#: each mode, which holds that batch's activations. Calibrated: vLLM logs "Estimated CUDA graph
#: memory: 0.52 GiB total" for PIECEWISE=51, FULL=35 graphs of Qwen3-8B's 36 layers
#: (https://github.com/LMCache/LMCache/issues/3430): 0.15 MiB per layer and graph; 0.73 GiB for
#: the same 86 graphs in https://github.com/vllm-project/vllm/pull/39559; hybrid (GDN) models
#: run higher, ~24 MiB a FULL graph of 64 layers (https://github.com/vllm-project/vllm/issues/50780).
#: The cost differs by GPU and attention backend: vLLM 0.19.1 estimated 2.35 GiB (2.44 GiB
#: captured) for the same 86 graphs of Qwen3-8B on an A100 40GB with FlashAttention 2
#: (https://github.com/dariustanrd/tokenkaki/blob/02862f7eed9088742d6e24cc413c3bcb9e97ba58/blogposts/content/1_vllm/yy-mm-dd-behind-the-api-1-vllm-draft.md),
#: so on such GPUs the fit may leave up to ~2 GiB more KV cache than vLLM 0.33.0 does.
GRAPH_BYTES_PER_LAYER = MiB * 3 // 16

_BLACKWELL = ("b200", "gb200", "b300", "gb300")


class Term:
    """One part of the memory vLLM keeps back from the KV cache: ``name``, ``bytes`` per GPU,
    ``kind`` (derived | calibrated) and ``source`` (the vLLM code or measurements behind it)."""

    __slots__ = ("name", "bytes", "kind", "source")

    def __init__(self, name: str, size: int, kind: str, source: str) -> None:
        self.name, self.bytes, self.kind, self.source = name, size, kind, source

    def as_tuple(self) -> tuple[str, int, str, str]:
        return self.name, self.bytes, self.kind, self.source


def _int_arg(args, flag: str) -> int | None:
    text = next((x.value for x in args if x.flag == flag and not x.raw), None)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _flag(args, flag: str) -> bool:
    return any(x.flag == flag and not x.raw for x in args)


def batch_limits(args, memory: int, family: str) -> tuple[int, int, str]:
    """(max_num_batched_tokens, max_num_seqs, where they come from): the role's arguments, else
    vLLM 0.33.0's serving defaults for the GPU (engine/arg_utils.py: get_batch_defaults):
    16384/1024 from 160 GiB, 8192/1024 from 70 GiB except on an A100, else 2048/256."""
    tokens, seqs = _int_arg(args, "--max-num-batched-tokens"), _int_arg(args, "--max-num-seqs")
    if memory >= 160 * GiB:
        default = (16384, 1024)
    elif memory >= 70 * GiB and family != "a100":
        default = (8192, 1024)
    else:
        default = (2048, 256)
    source = "the role's arguments" if tokens and seqs else (
        f"vLLM 0.33.0's serving defaults for a {memory / GiB:.0f} GiB GPU (engine/arg_utils.py: get_batch_defaults)"
        + ("" if not (tokens or seqs) else ", with the role's arguments"))
    return tokens or default[0], seqs or default[1], source


def capture_sizes(max_tokens: int, max_seqs: int, family: str) -> tuple[list[int], list[int]]:
    """(PIECEWISE sizes, FULL decode sizes) vLLM 0.33.0 captures by default
    (config/vllm.py: _set_cudagraph_sizes; FULL_AND_PIECEWISE): 1, 2, 4, multiples of 8 below 256,
    then of 16 up to min(2 x max_num_seqs, 512 or 1024 on data-center Blackwell,
    max_num_batched_tokens); FULL graphs for uniform decode batches of at most max_num_seqs."""
    largest = min(max_seqs * 2, 1024 if family in _BLACKWELL else 512, max_tokens)
    sizes = [i for i in (1, 2, 4) if i <= largest]
    if largest >= 8:
        sizes += list(range(8, min(largest + 1, 256), 8))
    if largest >= 256:
        sizes += list(range(256, largest + 1, 16))
    if max_tokens <= largest:
        sizes.append(max_tokens)
    if max_seqs <= largest:
        sizes.append(max_seqs)
    sizes = sorted(set(s for s in sizes if s <= max_tokens))
    return sizes, [s for s in sizes if s <= max_seqs]


def _per_token_activation(a: Architecture, tp: int, expert_shard: int) -> int:
    """Bytes of bf16 activations one token holds at the peak of one layer during the profiling
    run: the hidden state and residual, plus the larger of the attention's projections and the
    MLP's (dense: gate_up and its activation, 3 x intermediate / tp; routed experts: the fused
    MoE workspaces, topk x (max(I, H) + max(2I, H)) + H, fused_moe/experts/triton_moe.py)."""
    h = a.hidden_size
    if a.attention == "mla":
        heads = math.ceil(a.attention_heads / tp)
        attn = heads * (a.qk_nope_head_dim + a.qk_rope_head_dim) + a.kv_lora_rank + a.qk_rope_head_dim \
            + heads * (a.qk_nope_head_dim + a.v_head_dim) + heads * a.v_head_dim
    else:
        heads, kv = math.ceil(a.attention_heads / tp), max(a.kv_heads // tp, 1)
        attn = (2 * heads + 2 * kv) * a.head_dim
    mlp = 3 * a.intermediate_size // tp if a.intermediate_size and (not a.is_moe or a.dense_layers) else 0
    if a.is_moe:
        inter = max(a.moe_intermediate_size // expert_shard, 1)
        moe = a.active_experts * (max(inter, h) + max(2 * inter, h)) + h
        if a.shared_experts:
            moe += 3 * a.shared_experts * a.moe_intermediate_size // tp
        mlp = max(mlp, moe)
    return 2 * (2 * h + max(attn, mlp))


def overhead_terms(a: Architecture, *, tp: int, pp: int, dp: int, ep: bool, args, memory: int,
                   family: str = "") -> tuple[Term, ...]:
    """The memory vLLM 0.33.0 keeps back from the KV cache on the busiest GPU of the layout,
    beyond the weights, term by term."""
    tokens, seqs, batch_source = batch_limits(args, memory, family.lower())
    return _terms(a, (tp, pp, dp, ep), (tokens, seqs, batch_source), _flag(args, "--enforce-eager"), family.lower())


@functools.lru_cache(maxsize=4096)
def _terms(a: Architecture, layout: tuple[int, int, int, bool], batch: tuple[int, int, str], eager: bool,
           family: str) -> tuple[Term, ...]:
    """The terms of ``overhead_terms`` for a layout ``(tp, pp, dp, ep)`` and batch limits
    ``(tokens, seqs, where they came from)`` (memoised: a plan asks for the same ones often)."""
    tp, pp, dp, ep = layout
    tokens, seqs, batch_source = batch
    expert_shard = 1 if ep else tp * dp  # vLLM flattens TP across DP for the experts without EP
    per_token = _per_token_activation(a, tp, expert_shard)
    forward = tokens * per_token
    rows = min(seqs, tokens)
    sampler = rows * a.vocab_size * SAMPLER_BYTES_PER_LOGIT
    terms = []
    if sampler > forward:
        terms.append(Term(
            "activation peak", sampler, "derived",
            f"the profiling run's sampler on max_num_seqs {rows} rows of {a.vocab_size} logits x "
            f"{SAMPLER_BYTES_PER_LOGIT} bytes (v1/worker/gpu_model_runner.py: _dummy_sampler_run; "
            f"its forward pass on {tokens} tokens peaks lower, {forward / GiB:.2f} GiB); batch limits from "
            f"{batch_source}"))
    else:
        terms.append(Term(
            "activation peak", forward, "derived",
            f"the profiling run's forward pass on max_num_batched_tokens {tokens} tokens x {per_token} bytes of "
            f"activations per token (v1/worker/gpu_model_runner.py: profile_run; its sampler on {rows} rows "
            f"peaks lower, {sampler / GiB:.2f} GiB); batch limits from {batch_source}"))
    terms.append(Term("outside PyTorch", NON_TORCH_BYTES, "calibrated",
                      "cuBLAS and attention workspaces, persistent buffers (utils/mem_utils.py: non_torch_memory); "
                      "calibrated on published start-up logs"))
    world = tp * pp * (dp if a.is_moe else 1)
    if world > 1:
        terms.append(Term("NCCL buffers", COLLECTIVE_BYTES, "calibrated",
                          f"communicators of a {world}-GPU group (distributed/parallel_state.py); calibrated: TP2 "
                          "workers on H100s held 0.41 GiB more outside PyTorch than TP1 ones (vLLM 0.11, "
                          "llm-d-benchmark), V0 logs under 0.25 GiB at TP2-TP4 (vLLM issues 13061, 16570)"))
    if not eager:
        piecewise, full = capture_sizes(tokens, seqs, family)
        layers = math.ceil(a.layers / pp)
        first = sum(max(mode) * per_token for mode in (piecewise, full) if mode)
        rest = (max(len(piecewise) - 1, 0) + max(len(full) - 1, 0)) * layers * GRAPH_BYTES_PER_LAYER
        terms.append(Term(
            "CUDA graphs", first + rest, "calibrated",
            f"vLLM's estimate (v1/worker/gpu_model_runner.py: profile_cudagraph_memory): PIECEWISE={len(piecewise)} "
            f"(largest={max(piecewise) if piecewise else 0}), FULL={len(full)}: the largest capture of each mode "
            f"holds its batch's activations, each further graph {GRAPH_BYTES_PER_LAYER / MiB:.3f} MiB per layer "
            f"x {layers} layers (calibrated); --enforce-eager removes it"))
    return tuple(terms)
