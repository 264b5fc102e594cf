"""The partitions a layout cuts a model's weights into, checked as vLLM 0.33.0's loaders check
them, so that a layout vLLM would refuse at start-up is refused here (and never proposed by
``plan``). Pure: an ``Architecture`` and the layout's tp, dp and ep in, problems out.

Each rule names the vLLM source that enforces it:

* attention heads: ``config/model.py: ModelConfig.verify_with_parallel_config`` ("Total number of
  attention heads (H) must be divisible by tensor parallel size (T)");
* KV heads: ``model_executor/layers/linear.py: QKVParallelLinear`` divides the KV heads by TP, or
  TP by the KV heads when TP is larger (``distributed/utils.py: divide`` asserts divisibility);
* column- and row-parallel layers: ``linear.py`` ``divide(output_size, tp_size)`` and
  ``divide(input_size, tp_size)``;
* FP8 block quantization: ``quantization/utils/fp8_utils.py: validate_fp8_block_shape`` ("Weight
  output_partition_size = N is not divisible by weight quantization block_n = B", and the same
  for block_k of a row-parallel input), and for routed experts
  ``validate_fp8_block_shape_moe``; experts without EP are split over tp x dp GPUs
  (``fused_moe/config.py: FusedMoEParallelConfig.make``, ``flatten_tp_across_dp_and_pcp``);
* DeepSeek-V4's grouped output projection: ``models/deepseek_v4/attention.py`` sets
  ``n_local_groups = o_groups // tp_size``, which must not be zero;
* decode context parallelism (``--decode-context-parallel-size``, DCP): without prefill context
  parallelism DCP reuses the TP ranks, so tp must divide by it (``config/parallel.py:
  ParallelConfig``, "tp_size=T must be divisible by dcp_size=D"); for GQA/MQA it needs more TP
  ranks than KV heads and at most tp // kv_heads DCP ranks (``config/model.py:
  verify_with_parallel_config``); the KV cache manager takes it only with full-attention (and
  Mamba-style) cache groups (``v1/core/kv_cache_coordinator.py``), so sliding-window layers and
  DeepSeek-V4's compressed caches refuse it.
"""

from __future__ import annotations

from manifesto.resolve.architecture import Architecture

__all__ = ["layout_problems"]

_LINEAR = "model_executor/layers/linear.py"
_FP8 = "quantization/utils/fp8_utils.py: validate_fp8_block_shape"


def _column_rows(a: Architecture) -> list[tuple[str, int, int]]:
    """(layer, output size split by TP, input size split by TP) of the TP-split dense layers; 0
    where that side is not split."""
    rows: list[tuple[str, int, int]] = []
    if a.kv_lora_rank or (a.model_type.startswith("deepseek_v4") and a.o_groups):
        if a.model_type.startswith("deepseek_v4"):
            rows += [("wq_b", a.attention_heads * a.head_dim, 0),
                     ("wo_a", a.o_groups * a.o_lora_rank, 0), ("wo_b", 0, a.o_groups * a.o_lora_rank)]
        else:
            qk = a.qk_nope_head_dim + a.qk_rope_head_dim
            rows += [("q_b_proj" if a.q_lora_rank else "q_proj", a.attention_heads * qk, 0),
                     ("kv_b_proj", a.attention_heads * (a.qk_nope_head_dim + a.v_head_dim), 0),
                     ("o_proj", 0, a.attention_heads * a.v_head_dim)]
    elif a.attention in ("mha", "gqa"):
        rows += [("o_proj", 0, a.attention_heads * a.head_dim)]
    if a.intermediate_size and (not a.is_moe or a.dense_layers):
        rows += [("dense MLP gate_up_proj", a.intermediate_size, 0), ("dense MLP down_proj", 0, a.intermediate_size)]
    if a.is_moe and a.shared_experts:
        shared = a.moe_intermediate_size * a.shared_experts
        rows += [("shared experts gate_up_proj", shared, 0), ("shared experts down_proj", 0, shared)]
    return rows


def _dcp_problems(a: Architecture, tp: int, dcp: int) -> list[str]:
    if dcp <= 1:
        return []
    if tp % dcp:
        return [f"decode_context_parallel_size {dcp} does not divide tp {tp} (vLLM 0.33.0 config/parallel.py: "
                "ParallelConfig, DCP reuses the TP ranks)"]
    problems = []
    if a.attention in ("mha", "gqa") or (not a.kv_lora_rank and a.kv_heads):
        if tp <= a.kv_heads:
            problems.append(f"decode context parallelism for GQA/MQA needs tp ({tp}) above the model's "
                            f"{a.kv_heads} KV heads (vLLM 0.33.0 config/model.py: verify_with_parallel_config)")
        elif dcp > tp // a.kv_heads:
            problems.append(f"decode_context_parallel_size {dcp} exceeds tp // KV heads = {tp // a.kv_heads} "
                            "(vLLM 0.33.0 config/model.py: verify_with_parallel_config)")
    if a.sliding_layers or a.compress_ratios:
        problems.append("decode context parallelism takes only full-attention and Mamba-style KV cache groups, "
                        "and this model has " + ("sliding-window layers" if a.sliding_layers else
                                                 "compressed and sliding-window caches")
                        + " (vLLM 0.33.0 v1/core/kv_cache_coordinator.py)")
    return problems


def layout_problems(a: Architecture, *, tp: int, dp: int, ep: bool, dcp: int = 1) -> list[str]:
    """What vLLM 0.33.0 would refuse in splitting ``a`` over tp (and, for the routed experts
    without EP, tp x dp) GPUs, with ``dcp`` decode-context-parallel ranks: one sentence per
    problem, naming the layer and the vLLM source."""
    problems: list[str] = _dcp_problems(a, tp, dcp)
    if a.attention_heads % tp:
        problems.append(f"its {a.attention_heads} attention heads do not divide by tp {tp} (vLLM 0.33.0 "
                        "config/model.py: verify_with_parallel_config)")
        return problems
    if a.attention in ("mha", "gqa") and a.kv_heads and a.kv_heads % tp and tp % a.kv_heads:
        problems.append(f"its {a.kv_heads} KV heads neither divide by tp {tp} nor divide it ({_LINEAR}: "
                        "QKVParallelLinear)")
    if a.model_type.startswith("deepseek_v4") and a.o_groups and a.o_groups // tp == 0:
        problems.append(f"its {a.o_groups} output groups (o_groups) give each of tp {tp} GPUs none "
                        "(models/deepseek_v4/attention.py: n_local_groups = o_groups // tp_size)")
    block = a.weight_block if a.weight_format == "fp8" else ()
    for layer, out_size, in_size in _column_rows(a):
        for size, side in ((out_size, "output"), (in_size, "input")):
            if not size or tp == 1:
                continue
            if size % tp:
                problems.append(f"{layer}'s {side} size {size} does not divide by tp {tp} ({_LINEAR}: divide)")
            elif block and (size // tp) % block[0 if side == "output" else 1]:
                name = "block_n" if side == "output" else "block_k"
                what = "output_partition_size" if side == "output" else "input_size_per_partition"
                problems.append(f"{layer}: weight {what} = {size // tp} at tp {tp} is not divisible by FP8 "
                                f"quantization {name} = {block[0 if side == 'output' else 1]} ({_FP8})")
    if a.is_moe and not ep and a.expert_format == "fp8" and a.weight_block:
        shard = tp * dp
        per = a.moe_intermediate_size // shard
        if shard > 1 and (per % a.weight_block[0] or per % a.weight_block[1]):
            problems.append(f"routed experts without EP are split over tp x dp = {shard} GPUs: "
                            f"intermediate_size_per_partition = {per} is not divisible by FP8 quantization block "
                            f"{a.weight_block[0]} (quantization/utils/fp8_utils.py: validate_fp8_block_shape_moe; "
                            "fused_moe/config.py: flatten_tp_across_dp_and_pcp); turn ep on")
    return problems
