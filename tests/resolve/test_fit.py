"""Memory fit: the arithmetic against published sizes, the refusals, and where architectures come from.

Every expected number below is a published figure, quoted with its source; the arithmetic
must land within 5% of it.
"""

from __future__ import annotations

import math

import json
import textwrap

import msgspec
import pytest

import kit
from kit import cli_in_process, plan_of

REPO = kit.REPO_ROOT
CLUSTERS = REPO / "clusters"


def _catalog(model_id: str):
    from manifesto.tasks.inputs.architecture import catalog_record

    return catalog_record(model_id)[1]


def _arch(config: dict, **published):
    from manifesto.resolve.architecture import from_config

    return from_config(config, source="test", **published)


def _weights(arch, tp=1, pp=1, group=None) -> int:
    from manifesto.resolve.fit import count_params, weights_per_gpu

    parts = weights_per_gpu(arch, count_params(arch), tp=tp, pp=pp, expert_group=group or tp)
    return sum(b for _, b in parts)


def _close(actual: float, expected: float) -> None:
    assert abs(actual - expected) <= 0.05 * expected, f"{actual:,.0f} is not within 5% of {expected:,.0f}"


# Llama 3.1 8B: params.json of Meta's release (dim 4096, 32 layers, 32 heads, 8 KV heads,
# vocab 128256; FFN 14336 as in its Hugging Face config.json).
LLAMA31_8B = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "intermediate_size": 14336,
              "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
# Llama 3.1/3.3 70B config.json: 80 layers, hidden 8192, FFN 28672, 64 heads, 8 KV heads.
LLAMA_70B = {"model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192, "intermediate_size": 28672,
             "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 128256,
             "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
# OPT-13B config.json: 40 layers, hidden 5120, 40 heads (MHA), FFN 20480, fp16.
OPT_13B = {"model_type": "opt", "num_hidden_layers": 40, "hidden_size": 5120, "intermediate_size": 20480,
           "num_attention_heads": 40, "vocab_size": 50272, "torch_dtype": "float16"}


def test_dense_gqa_qwen3_0_6b_parameter_counts():
    # https://huggingface.co/Qwen/Qwen3-0.6B model card: "Number of Parameters: 0.6B;
    # Number of Paramaters (Non-Embedding): 0.44B".
    from manifesto.resolve.fit import count_params

    p = count_params(_catalog("Qwen/Qwen3-0.6B"))
    _close(p.total, 0.6e9)
    _close(p.layers, 0.44e9)


def test_dense_gqa_qwen3_32b_parameter_counts():
    # https://huggingface.co/Qwen/Qwen3-32B model card: "Number of Parameters: 32.8B;
    # Number of Paramaters (Non-Embedding): 31.2B".
    from manifesto.resolve.fit import count_params

    p = count_params(_catalog("Qwen/Qwen3-32B"))
    _close(p.total, 32.8e9)
    _close(p.layers, 31.2e9)


def test_dense_gqa_llama31_8b_bf16_checkpoint_bytes():
    # Meta-Llama3.1-8B-Instruct/consolidated.00.pth, the bf16 release checkpoint: its LFS
    # pointer gives "size 16060617592" (https://huggingface.co/spaces/Kr08/Llama, commit
    # 1715f6d "Uploaded Llama 3.1 instruct checkpoints").
    _close(_weights(_arch(LLAMA31_8B)), 16_060_617_592)


def test_fp8_llama31_70b_weights_per_gpu_at_tp8():
    # A TensorRT-LLM FP8 checkpoint of Llama 3.1 70B split for 8 GPUs (FP8 linear layers,
    # bf16 embedding and LM head): eight files rank0..rank7.safetensors of 9.08 GB each
    # (https://huggingface.co/aspctu/llama31-70b-tllm_checkpoint_8gpu_fp8_bfloat16/tree/a88db15).
    arch = _arch({**LLAMA_70B, "quantization_config": {"quant_method": "fp8"}})
    _close(_weights(arch, tp=8), 9.08e9)


def test_mha_kv_cache_per_token_opt_13b():
    # vLLM's PagedAttention paper (Kwon et al., SOSP 2023, section 3): for OPT-13B "the KV
    # cache of a single token demands 800 KB of space, calculated as 2 (key and value
    # vectors) x 5120 (hidden state size) x 40 (number of layers) x 2 (bytes per FP16)".
    from manifesto.resolve.fit import kv_bytes_per_token

    arch = _arch(OPT_13B)
    assert arch.attention == "mha"
    _close(kv_bytes_per_token(arch, tp=1, pp=1, kv_dtype="auto"), 800 * 1024)


def test_gqa_kv_cache_per_token_llama_70b():
    # https://runlocalai.co/glossary/kv-cache: "For Llama 3.3 70B at FP16, every 1K tokens of
    # context costs about 320 MB of VRAM."
    from manifesto.resolve.fit import kv_bytes_per_token

    _close(kv_bytes_per_token(_arch(LLAMA_70B), tp=1, pp=1, kv_dtype="auto") * 1024, 320 * 1024**2)


def test_mla_moe_fp8_deepseek_v3():
    # https://huggingface.co/deepseek-ai/DeepSeek-V3 model card: "671B total parameters with
    # 37B activated for each token" (the 685B on the Hub add the 14B MTP module).
    # DeepSeek-V2 paper (arXiv 2405.04434), Table 1: MLA caches (d_c + d_h^R) x l elements per
    # token, d_c = kv_lora_rank = 512 and d_h^R = qk_rope_head_dim = 64 for V3's 61 layers.
    from manifesto.resolve.fit import count_params, kv_bytes_per_token

    arch = _catalog("deepseek-ai/DeepSeek-V3")
    p = count_params(arch)
    assert (arch.attention, arch.weight_format) == ("mla", "fp8")
    _close(p.total, 671e9)
    _close(p.embedding + p.layers + p.experts * arch.active_experts // arch.experts, 37e9)
    _close(kv_bytes_per_token(arch, tp=8, pp=1, kv_dtype="auto"), (512 + 64) * 61 * 2)
    _close(_weights(arch), 671e9 * 1.0)  # FP8: about one byte per parameter


# --- KV cache of every attention kind, held to published figures ----------------------------------

def test_kv_per_token_mla_deepseek_v3_exact():
    # DeepSeek-V2 paper (arXiv 2405.04434) Table 1: MLA caches (d_c + d_h^R) x l elements per
    # token; V3's config.json: kv_lora_rank 512, qk_rope_head_dim 64, 61 layers. In bf16:
    # 61 x (512 + 64) x 2 = 70,272 bytes; fp8 halves it; the latent is the same on every TP rank.
    from manifesto.resolve.fit import kv_cache

    arch = _catalog("deepseek-ai/DeepSeek-V3")
    for tp in (1, 8, 16):
        kv = kv_cache(arch, tp=tp, pp=1, kv_dtype="auto")
        assert (kv.per_token, kv.per_sequence) == (70_272, 0)
    assert kv_cache(arch, tp=8, pp=1, kv_dtype="fp8").per_token == 35_136
    assert "one latent of kv_lora_rank 512 + qk_rope_head_dim 64 per token and layer" in kv.notes[1]


def test_kv_per_token_gqa_llama31_70b_exact():
    # Llama 3.1 70B config.json: 80 layers, 8 KV heads of 128: 80 x 2 x 8 x 128 x 2 bytes =
    # 327,680 bytes per token in bf16 (the "320 MB per 1K tokens" of the KV-cache glossaries).
    # TP8 leaves one KV head per GPU; TP16 replicates it, so a GPU still holds one.
    from manifesto.resolve.fit import kv_bytes_per_token

    arch = _arch(LLAMA_70B)
    assert kv_bytes_per_token(arch, tp=1, pp=1, kv_dtype="auto") == 327_680
    assert kv_bytes_per_token(arch, tp=8, pp=1, kv_dtype="auto") == 327_680 // 8
    assert kv_bytes_per_token(arch, tp=16, pp=1, kv_dtype="auto") == 327_680 // 8
    assert kv_bytes_per_token(arch, tp=1, pp=2, kv_dtype="fp8_e4m3") == 327_680 // 4
    assert kv_bytes_per_token(arch, tp=1, pp=1, kv_dtype="float32") == 2 * 327_680


def test_kv_hybrid_kimi_k3_caches_only_its_mla_layers():
    # NVIDIA NeMo AutoModel's Kimi K3 page: "93 layers: 69 KDA + 24 gated MLA". Only the 24 MLA
    # layers cache per token: 24 x (512 + 64) x 2 = 27,648 bytes in bf16; each KDA layer holds a
    # recurrent state of num_heads x head_dim x head_dim (96 x 128 x 128) per sequence instead.
    from manifesto.resolve.fit import kv_cache

    arch = _catalog("moonshotai/Kimi-K3")
    assert (arch.linear_layers, arch.linear_heads, arch.linear_head_dim) == (69, 96, 128)
    kv = kv_cache(arch, tp=1, pp=1, kv_dtype="auto")
    assert kv.per_token == 27_648
    # vLLM 0.33.0 model_executor/layers/mamba/mamba_utils.py: kda_state_dtype returns
    # "recurrent_state_dtype = torch.float32" for mamba_ssm_cache_dtype auto, whatever the KV dtype;
    # kda_state_shape: conv_state (3 x 96 x 128, conv_kernel_size - 1 = 3) in the model dtype.
    state, conv = 96 * 128 * 128 * 4, 3 * 3 * 96 * 128 * 2
    assert kv.per_sequence == 69 * (state + conv)
    assert kv_cache(arch, tp=1, pp=1, kv_dtype="fp8").per_sequence == kv.per_sequence  # fp8 KV: same state
    tp4 = kv_cache(arch, tp=4, pp=1, kv_dtype="auto")
    assert (tp4.per_token, tp4.per_sequence) == (27_648, kv.per_sequence // 4)  # KDA heads split by TP
    assert any("69 linear-attention (KDA) layer(s): a float32 recurrent state" in note for note in kv.notes)
    assert any("kernel 4: vLLM's kda_state_shape default" in note for note in kv.notes)
    pp2 = kv_cache(arch, tp=1, pp=2, kv_dtype="auto")
    # PP2: the busiest stage holds 47 of 93 layers, MLA layers in proportion: ceil(24 x 47 / 93) = 13.
    assert pp2.per_token == 13 * 576 * 2
    assert any("busiest of 2 pipeline stages" in note for note in pp2.notes)


def test_kv_sliding_window_gpt_oss_120b():
    # openai/gpt-oss-120b config.json: 36 layers alternating sliding_attention (window 128) and
    # full_attention, 8 KV heads of 64. Full layers cache per token: 18 x 2 x 8 x 64 x 2 = 36,864
    # bytes; a sliding layer never holds more than 128 tokens: 18 x 2 x 8 x 64 x 2 x 128 per sequence.
    from manifesto.resolve.fit import kv_cache

    arch = _arch({"model_type": "gpt_oss", "num_hidden_layers": 36, "hidden_size": 2880, "intermediate_size": 2880,
                  "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
                  "num_local_experts": 128, "num_experts_per_tok": 4, "sliding_window": 128,
                  "layer_types": ["sliding_attention", "full_attention"] * 18, "torch_dtype": "bfloat16"})
    assert (arch.sliding_layers, arch.sliding_window) == (18, 128)
    kv = kv_cache(arch, tp=1, pp=1, kv_dtype="auto", max_len=131072)
    assert (kv.per_token, kv.per_sequence) == (36_864, 36_864 * 128)
    assert kv_cache(arch, tp=1, pp=1, kv_dtype="auto", max_len=100).per_sequence == 36_864 * 100
    assert any("18 sliding-window layer(s) keep at most 128 tokens" in note for note in kv.notes)


def test_kv_compressed_attention_deepseek_v4_pro():
    # DeepSeek-V4-Pro config.json: compress_ratios [128, 128, 4, 128, 4, ..., 4] over 61 layers
    # (31 at ratio 128, 30 at ratio 4), head_dim 512 (one KV head), index_head_dim 128,
    # sliding_window 128. Per token: 31 x 512/128 + 30 x (512 + 128)/4 = 4,924 values; each layer
    # keeps its last 128 tokens uncompressed: 61 x 128 x 512 values per sequence.
    from manifesto.resolve.fit import kv_cache

    arch = _catalog("deepseek-ai/DeepSeek-V4-Pro")
    assert (arch.compress_ratios.count(128), arch.compress_ratios.count(4), len(arch.compress_ratios)) == (31, 30, 61)
    kv = kv_cache(arch, tp=8, pp=1, kv_dtype="auto")
    assert (kv.per_token, kv.per_sequence) == (4_924 * 2, 61 * 128 * 512 * 2)
    assert kv_cache(arch, tp=8, pp=1, kv_dtype="fp8").per_token == 4_924


def test_kv_deepseek_v4_fp8_ds_mla_layout():
    """vLLM 0.33.0 v1/attention/backends/mla/flashmla_sparse.py: "For DeepSeek V4, in the 'FP8 with
    scale' format, each token's KV cache is 584 Bytes" (448 fp8 NoPE, 128 bytes of bf16 RoPE, 8
    scale bytes); models/deepseek_v4/attention.py: the FP8 indexer key is "128 fp8 + 4 fp32 scale =
    132". FlashMLA (every CUDA arch but SM12, whose FlashInfer class stores it too) forces the
    layout: _resolve_dsv4_kv_cache_dtype turns auto into fp8_ds_mla."""
    from manifesto.resolve.fit import kv_cache, plan_fit
    from manifesto.resolve.layout import LayoutInput, plan_layout

    arch = _catalog("deepseek-ai/DeepSeek-V4-Pro")
    kv = kv_cache(arch, tp=8, pp=1, kv_dtype="auto", ds_mla=True)
    assert kv.per_token == math.ceil(31 * 584 / 128 + 30 * (584 + 132) / 4)
    assert kv.per_sequence == 61 * 128 * 584
    assert kv.per_token > 1.1 * kv_cache(arch, tp=8, pp=1, kv_dtype="fp8").per_token  # the 12 % low
    lay = plan_layout(LayoutInput(tp=8, pp=1, dp=False, ep=True, nodes=1, replicas=1, gpus_per_node=8, routed=False,
                                  proxied=False))
    for family, dtype in (("b200", "fp8_ds_mla"), ("h200", "fp8_ds_mla"), ("mi355x", "auto")):
        assert plan_fit(arch, lay, (), 178 * 1024**3, family=family).kv_dtype == dtype, family


def test_unknown_attention_kinds_are_refused_or_unknown_never_ok():
    from manifesto.errors import InputError
    from manifesto.resolve.fit import plan_fit
    from manifesto.resolve.layout import LayoutInput, plan_layout

    # A layer kind the check does not model (Qwen3-Next's linear_attention) is no error: the
    # attention counts as hybrid, so the fit stays unknown unless the model is fully modelled.
    assert _arch({**LLAMA31_8B, "layer_types": ["linear_attention", "full_attention"] * 16}).attention == "hybrid"
    with pytest.raises(InputError, match="ratio other than 0, 4 and 128"):
        _arch({**LLAMA31_8B, "compress_ratios": [8] * 32})
    # A compressed-attention model without its ratios has no per-token figure: unknown, not ok.
    bare = _arch({"model_type": "deepseek_v4", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
                  "num_key_value_heads": 1, "head_dim": 32, "vocab_size": 100, "n_routed_experts": 4,
                  "num_experts_per_tok": 2, "moe_intermediate_size": 32, "max_position_embeddings": 1024},
                 active_params=10_000)
    lay = plan_layout(LayoutInput(tp=1, pp=1, dp=False, ep=False, nodes=1, replicas=1, gpus_per_node=8, routed=False,
                                  proxied=False))
    fit = plan_fit(bare, lay, (), 80 * 1024**3)
    assert (fit.status, fit.note) == ("unknown", "the KV cache of deepseek_v4's attention is not modelled")


def test_moe_qwen3_30b_a3b_parameter_counts():
    # https://huggingface.co/Qwen/Qwen3-30B-A3B model card: "Number of Parameters: 30.5B in
    # total and 3.3B activated".
    from manifesto.resolve.fit import count_params

    arch = _catalog("Qwen/Qwen3-30B-A3B")
    p = count_params(arch)
    _close(p.total, 30.5e9)
    _close(p.embedding + p.layers + p.experts * arch.active_experts // arch.experts, 3.3e9)


def test_fp4_experts_deepseek_v4_pro_checkpoint_bytes():
    # https://huggingface.co/nvidia/DeepSeek-V4-Pro-NVFP4/discussions/2: "The original DeepSeek
    # v4 Pro model weighs 865 GB" (FP4 experts, FP8 elsewhere, as
    # https://recipes.vllm.ai/deepseek-ai/DeepSeek-V4-Pro describes the checkpoint); its total of
    # 1.6T parameters is on the model card.
    from manifesto.resolve.fit import count_params

    arch = _catalog("deepseek-ai/DeepSeek-V4-Pro")
    assert (arch.expert_format, arch.weight_format) == ("fp4", "fp8")
    _close(count_params(arch).total, 1.6e12)
    _close(_weights(arch), 865e9)


def test_nvfp4_deepseek_v4_pro_checkpoint_bytes():
    # Same discussion: "DeepSeek-V4-Pro-NVFP4 weighs 913 GB"; the model page tags it NVFP4 and
    # fp8 (NVFP4 routed experts, FP8 attention and shared layers).
    arch = msgspec.structs.replace(_catalog("deepseek-ai/DeepSeek-V4-Pro"), expert_format="nvfp4")
    _close(_weights(arch), 913e9)


def test_latent_moe_mxfp4_experts_kimi_k3_checkpoint_bytes():
    # Kimi K3's 96 safetensors shards hold 1,560,936,091,448 bytes (1453.7 GiB, the MXFP4
    # checkpoint size the reference layouts quote); 2.8T parameters on the model card. Its routed
    # experts run in a 3584-wide latent (routed_expert_hidden_size) and only they are MXFP4:
    # quantization_config.ignore keeps attention, shared experts, the dense MLP and lm_head BF16.
    from manifesto.resolve.fit import count_params

    arch = _catalog("moonshotai/Kimi-K3")
    assert (arch.attention, arch.weight_format, arch.expert_format) == ("hybrid", "bf16", "mxfp4")
    assert (arch.experts, arch.active_experts, arch.shared_experts, arch.expert_hidden_size) == (896, 16, 2, 3584)
    _close(count_params(arch).total, 2.8e12)
    _close(_weights(arch), 1_560_936_091_448)


def test_pruned_kimi_k3_keeps_a_quarter_of_the_experts():
    # The reference layout quotes a 442.5 GiB checkpoint for mgoin/Kimi-K3-pruned75 (224 of 896
    # experts) and about 67 GiB per GPU at TP4 with EP8.
    arch = _catalog("mgoin/Kimi-K3-pruned75")
    assert (arch.experts, arch.active_experts) == (224, 16)
    _close(_weights(arch), 442.5 * 2**30)
    _close(_weights(arch, tp=4, group=8), 67 * 2**30)


def test_compressed_tensors_ignore_list_decides_which_layers_are_quantized():
    ignore = ["re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*", "lm_head"]
    quant = {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized"}
    moe = {"model_type": "m", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "vocab_size": 100, "num_experts": 8, "num_experts_per_token": 2, "moe_intermediate_size": 32}
    experts_only = _arch({**moe, "quantization_config": {**quant, "ignore": ignore}})
    assert (experts_only.weight_format, experts_only.expert_format, experts_only.active_experts) == (
        "bf16", "mxfp4", 2)
    everything = _arch({**moe, "quantization_config": {**quant, "ignore": ["lm_head"]}})
    assert (everything.weight_format, everything.expert_format) == ("mxfp4", "mxfp4")
    hybrid = _arch({**moe, "linear_attn_config": {"kda_layers": [1], "num_heads": 4, "head_dim": 8},
                    "kv_lora_rank": 16})
    assert hybrid.attention == "hybrid"


def test_compressed_tensors_fp8_and_integer_checkpoints_are_read():
    """The issue: a compressed-tensors FP8 checkpoint (format float-quantized, e.g. the
    *-FP8-dynamic models) was an error. vLLM 0.33.0 loads it as FP8 weights
    (quantization/compressed_tensors); int4/int8 weight-only (pack-quantized, naive-quantized) too."""
    dense = {"model_type": "qwen3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
             "intermediate_size": 128, "vocab_size": 100}

    def ct(fmt, bits, kind, strategy="channel"):
        group = {"targets": ["Linear"], "weights": {"num_bits": bits, "type": kind, "strategy": strategy,
                                                    "symmetric": True, "dynamic": False}}
        if kind == "float":
            group["input_activations"] = {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True}
        return {**dense, "quantization_config": {"quant_method": "compressed-tensors", "format": fmt,
                                                 "config_groups": {"group_0": group}, "ignore": ["lm_head"]}}

    assert _arch(ct("float-quantized", 8, "float")).weight_format == "fp8"
    assert _arch(ct("pack-quantized", 4, "int", "group")).weight_format == "int4"
    assert _arch(ct("naive-quantized", 8, "int")).weight_format == "int8"
    from manifesto.errors import InputError

    with pytest.raises(InputError, match="compressed-tensors float-quantized"):
        _arch(ct("sparse-24-bitmask", 2, "int"))


def test_mxfp4_modules_to_not_convert_keep_attention_in_bf16():
    """gpt-oss's quantization_config: {"quant_method": "mxfp4", "modules_to_not_convert":
    ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}:
    only the experts are MXFP4; the attention stays BF16 (the issue: it was counted as MXFP4)."""
    keep = ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]
    moe = {"model_type": "gpt_oss", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "intermediate_size": 32, "vocab_size": 100, "num_local_experts": 8, "num_experts_per_tok": 2}
    arch = _arch({**moe, "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": keep}})
    assert (arch.weight_format, arch.expert_format) == ("bf16", "mxfp4")
    bare = _arch({**moe, "quantization_config": {"quant_method": "mxfp4"}})
    assert (bare.weight_format, bare.expert_format) == ("mxfp4", "mxfp4")


def test_expert_parallel_shards_experts_and_tensor_parallel_the_rest():
    """EP16 of DeepSeek-V4-Pro: the experts (about 822 GB) over 16 GPUs, the rest whole."""
    from manifesto.resolve.fit import count_params, weights_per_gpu

    arch = _catalog("deepseek-ai/DeepSeek-V4-Pro")
    p = count_params(arch)
    one = dict(weights_per_gpu(arch, p, tp=1, pp=1, expert_group=1))
    ep16 = dict(weights_per_gpu(arch, p, tp=1, pp=1, expert_group=16))
    assert ep16["routed experts"] == round(one["routed experts"] / 16)
    assert ep16["attention and dense layers"] == one["attention and dense layers"]
    pp2 = dict(weights_per_gpu(arch, p, tp=2, pp=2, expert_group=2))
    assert pp2["attention and dense layers"] == round(p.layers * (1 + 4 / 2**14) * 31 / 61 / 2)


# --- every bundled role shows its fit --------------------------------------------------------------

def _bundled_pairs():
    from manifesto.errors import IncompatiblePairError

    for model in sorted((REPO / "models").rglob("*.yaml")):
        if model.name.endswith("-base.yaml"):
            continue
        for cluster in sorted(CLUSTERS.glob("*.yaml")):
            try:
                yield model, cluster, plan_of(model, cluster)[0]
            except IncompatiblePairError:
                continue


# Bundled models whose config.json could not be found in any public source (model card,
# config.json, vLLM/SGLang/Transformers source): Poolside publishes no config.json facts for
# Laguna S 2.1 that we could read, so no record is written and the fit stays unknown, saying so.
NO_PUBLIC_CONFIG = {"poolside/Laguna-S-2.1", "poolside/Laguna-S-2.1-NVFP4"}


def test_every_bundled_role_has_a_checked_fit():
    seen = unknown = 0
    for model, cluster, plan in _bundled_pairs():
        if plan.model_id in NO_PUBLIC_CONFIG:
            for role in plan.roles:
                assert role.fit.status == "unknown", (model.name, role.name)
                assert role.fit.note.startswith(f"no architecture for {plan.model_id}: catalog/architectures has "
                                                "no record of it and the spec sets no model.config_json"), role.fit.note
                unknown += 1
            continue
        for role in plan.roles:
            fit = role.fit
            assert fit.status in ("ok", "kv-short"), (model.name, cluster.name, role.name, fit.note)
            assert 0 < fit.weights < fit.gpu_memory * fit.utilization
            seen += 1
        text = cli_in_process("explain", str(model), "--cluster", str(cluster), "-n", "ns")
        assert text.returncode == 0, text.stderr
        assert text.stdout.count("memory fit      per GPU") == len(plan.roles)
    assert seen >= 10 and unknown >= 2


def test_explain_json_gives_every_bundled_role_a_kv_size_per_token():
    checked = 0
    for model, cluster, plan in _bundled_pairs():
        if plan.model_id in NO_PUBLIC_CONFIG:
            continue
        out = cli_in_process("explain", str(model), "--cluster", str(cluster), "-n", "ns", "-o", "json")
        assert out.returncode == 0, out.stderr
        for role in json.loads(out.stdout)["roles"]:
            fit = role["fit"]
            where = (model.name, cluster.name, role["name"])
            assert fit["kv_per_token"] > 0 and fit["status"] == "ok", where
            assert fit["kv_tokens"] >= fit["max_model_len"] > 0, where
            assert fit["kv_notes"] and fit["memory_source"], where
            checked += 1
    assert checked >= 30


def test_explain_shows_the_arithmetic_in_text_and_json():
    model, cluster = REPO / "models/qwen/qwen3-0.6b.yaml", CLUSTERS / "example-stateless-b200.yaml"
    out = cli_in_process("explain", str(model), "--cluster", str(cluster), "-n", "ns")
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert "GPU memory      178.4 GiB x gpu_memory_utilization 0.92 = 164.1 GiB" in lines
    assert ("from          accelerators.profiles.b200.memory 180G is its data-sheet size; CUDA-visible memory of "
            "the B200-180GB (cuda): PyTorch's \"GPU 0 has a total capacity of 178.36 GiB\" (torch total_memory) on "
            "8x B200 nodes; a CUDA device query prints 178.35, https://github.com/pytorch/ao/pull/4002") in lines
    assert "weights         1.1 GiB = 0.3 GiB embedding and LM head + 0.8 GiB attention and dense layers" in lines
    assert "KV cache        164.1 GiB - 1.1 GiB - 3.2 GiB = 159.8 GiB" in lines
    assert ("kept back       3.2 GiB besides weights and KV cache, as vLLM 0.33.0's profiler counts it "
            "(v1/worker/gpu_worker.py: determine_available_memory)") in lines
    assert any(line.startswith("activation peak:  2.03 GiB (derived): the profiling run's sampler on max_num_seqs "
                               "1024 rows of 151936 logits x 14 bytes") for line in lines)
    assert any(line.startswith("CUDA graphs:      0.88 GiB (calibrated)") for line in lines)
    assert "KV per token    114688 bytes (kv_cache_dtype auto) -> 1496267 tokens, 182.6x max_model_len 8192" in lines
    assert "assumes       28 attention layer(s): K and V of 8 KV head(s) of 128 per token" in lines
    data = json.loads(cli_in_process("explain", str(model), "--cluster", str(cluster), "-n", "ns", "-o", "json").stdout)
    fit = data["roles"][0]["fit"]
    assert (fit["status"], fit["kv_per_token"], fit["kv_tokens"], fit["max_model_len"]) == ("ok", 114688, 1496267, 8192)
    assert [p[0] for p in fit["overhead_parts"]] == ["activation peak", "outside PyTorch", "CUDA graphs"]
    assert fit["headroom"] == sum(p[1] for p in fit["overhead_parts"])
    assert fit["weights"] == sum(b for _, b in fit["weight_parts"])
    assert fit["kv_notes"][0] == "kv_cache_dtype auto: the model dtype (bf16), 2 byte(s) per value"
    assert fit["memory_source"].startswith("accelerators.profiles.b200.memory 180G is its data-sheet size")


# --- refusals ------------------------------------------------------------------------------------

def _spec(tmp_path, body: str, name: str = "m.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


QWEN32 = """\
    release: big
    model: {id: Qwen/Qwen3-32B, image_ref: vllm.standard}
    roles:
      - name: decode
        parallelism: {tp: 1}
        vllm: {max_model_len: 40960, gpu_memory_utilization: 0.3}
"""


def test_weights_that_do_not_fit_are_refused(tmp_path):
    model = _spec(tmp_path, QWEN32)
    out = cli_in_process("explain", str(model), "--cluster", str(CLUSTERS / "example-h200.yaml"), "-n", "ns")
    assert out.returncode == 1 and out.stdout == ""
    assert kit.scrub(out.stderr, tmp_path) == (
        "error: <tmp>/m.yaml:5:5: roles[0].parallelism: role 'decode' does not fit: its weights need 61.0 GiB per "
        "GPU (tp=1 pp=1 ep=off: embedding and LM head 2.9 GiB, attention and dense layers 58.1 GiB), but "
        "gpu_memory_utilization 0.3 of the h200's 139.8 GiB (CUDA-visible memory from the accelerator table; "
        "accelerators.profiles.h200.memory at clusters/example-h200.yaml:15:7 is the data-sheet size) allows "
        "41.9 GiB. Spread the model over more GPUs (raise tp or pp, or dp with ep on) or use a GPU with more "
        "memory. Facts from catalog/architectures (https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json "
        "(config); model card (32.8B params, 31.2B non-embedding))\n")


def test_short_kv_cache_refuses_by_default_and_warns_on_request(tmp_path):
    # Qwen3-32B at TP2 needs 64 layers x 2 x 4 KV heads x 128 x 2 bytes = 131072 bytes per token;
    # 0.28 of an H200's 139.8 GiB leaves 4.6 GiB after weights and what vLLM keeps back: 37613 tokens.
    body = QWEN32.replace("tp: 1", "tp: 2").replace("gpu_memory_utilization: 0.3", "gpu_memory_utilization: 0.28")
    model = _spec(tmp_path, body)
    cluster = str(CLUSTERS / "example-h200.yaml")
    refusal = (
        "error: <tmp>/m.yaml:6:12: roles[0].vllm.max_model_len: role 'decode': the KV cache holds 37613 tokens, "
        "fewer than max_model_len 40960, so vLLM would refuse to start. Per GPU (tp=2 pp=1 ep=off): "
        "gpu_memory_utilization 0.28 x the h200's 139.8 GiB (CUDA-visible memory from the accelerator table; "
        "accelerators.profiles.h200.memory at clusters/example-h200.yaml:15:7 is the data-sheet size) = 39.1 "
        "GiB, minus 30.5 GiB of weights and 4.0 GiB vLLM keeps back for activations, CUDA graphs and buffers, "
        "leaves 4.6 GiB; max_model_len needs 5.0 GiB "
        "(131072 bytes per token, kv_cache_dtype auto). To fix: lower max_model_len here, raise "
        "gpu_memory_utilization, use kv_cache_dtype fp8, spread the model over more GPUs or use a GPU with more "
        "memory (fit.short_kv_cache: warn only warns)\n")
    for command in (("explain",), ("render", "manifest"), ("config", "validate")):
        out = cli_in_process(*command, str(model), "--cluster", cluster, "-n", "ns")
        assert out.returncode == 1, command
        assert kit.scrub(out.stderr, tmp_path) == refusal, command
    warning = _spec(tmp_path, body + "    fit: {short_kv_cache: warn}\n", "w.yaml")
    out = cli_in_process("explain", str(warning), "--cluster", cluster, "-n", "ns")
    assert out.returncode == 0, out.stderr
    assert ("warning         the KV cache holds 37613 tokens, fewer than max_model_len 40960: vLLM will refuse to "
            "start.") in out.stdout
    off = _spec(tmp_path, QWEN32 + "    fit: {check: false}\n", "off.yaml")
    out = cli_in_process("explain", str(off), "--cluster", cluster, "-n", "ns")
    assert out.returncode == 0
    assert "memory fit      not checked: the spec turns the check off (fit.check: false)" in out.stdout


# --- where the architecture comes from ------------------------------------------------------------

UNKNOWN = """\
    release: other
    model: {id: org/private-model, image_ref: vllm.standard}
    roles:
      - name: decode
"""


def test_catalog_lookup_takes_only_plain_model_ids():
    from manifesto.tasks.inputs.architecture import catalog_record

    assert catalog_record("../../etc/passwd") == (None, None)
    assert catalog_record("org/..") == (None, None)
    assert catalog_record("Qwen/Qwen3-0.6B")[1].layers == 28


def test_unknown_model_says_so_and_skips(tmp_path):
    model = _spec(tmp_path, UNKNOWN)
    plan = plan_of(model, CLUSTERS / "example-h200.yaml")[0]
    assert plan.roles[0].fit.status == "unknown"
    out = cli_in_process("explain", str(model), "--cluster", str(CLUSTERS / "example-h200.yaml"), "-n", "ns")
    assert ("memory fit      not checked: no architecture for org/private-model: catalog/architectures has no "
            "record of it and the spec sets no model.config_json (nor is it in the Hugging Face cache)") in out.stdout


def test_config_json_pointer_is_read_relative_to_the_spec(tmp_path):
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights/config.json").write_text(json.dumps({**LLAMA31_8B, "max_position_embeddings": 131072}))
    model = _spec(tmp_path, UNKNOWN.replace("image_ref: vllm.standard", "image_ref: vllm.standard, "
                                                                          "config_json: weights/config.json"))
    plan = plan_of(model, CLUSTERS / "example-h200.yaml")[0]
    fit = plan.roles[0].fit
    assert fit.status == "ok" and fit.max_model_len == 131072
    _close(fit.weights, 16_060_617_592)
    assert fit.source == f"{tmp_path}/weights/config.json (model.config_json)"


def test_bad_config_json_is_one_clear_error(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 8, "num_attention_heads": 2}))
    model = _spec(tmp_path, UNKNOWN.replace("image_ref: vllm.standard", "image_ref: vllm.standard, "
                                                                          "config_json: config.json"))
    out = cli_in_process("explain", str(model), "--cluster", str(CLUSTERS / "example-h200.yaml"), "-n", "ns")
    assert out.returncode == 1
    assert kit.scrub(out.stderr, tmp_path) == (
        "error: <tmp>/config.json (model.config_json): config.json has no 'num_hidden_layers', which the "
        "memory-fit check needs\n")


def test_hugging_face_cache_is_read_only_when_the_edge_passes_it(tmp_path):
    from manifesto.tasks.inputs.architecture import load_architecture

    snap = tmp_path / "hf/hub/models--org--private-model/snapshots/abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(LLAMA31_8B))
    (tmp_path / "hf/hub/models--org--private-model/refs").mkdir()
    (tmp_path / "hf/hub/models--org--private-model/refs/main").write_text("abc123")
    spec, _ = kit.load_pair(_spec(tmp_path, UNKNOWN), CLUSTERS / "example-h200.yaml")
    assert load_architecture(spec)[0] is None
    arch, note, files = load_architecture(spec, str(tmp_path / "hf"))
    assert (arch.layers, note, files) == (32, "", [str(snap / "config.json")])


def test_cluster_memory_and_price_are_validated(tmp_path):
    base = (CLUSTERS / "example-h200.yaml").read_text()
    for value, message in (
        ("memory: 64Mi", "64Mi is not a GPU's memory; write it as a quantity from 1Gi to 1Pi, e.g. 141G"),
        ("hourly_price: -1", "-1 must be a number from 0 to 1000000 (the price of one GPU-hour)"),
        ("hourly_price: cheap", "'cheap' must be a number from 0 to 1000000 (the price of one GPU-hour)"),
    ):
        path = tmp_path / "c.yaml"
        path.write_text(base.replace("memory: 141G", value))
        out = cli_in_process("explain", str(REPO / "models/qwen/h200-aggregated.yaml"), "--cluster", str(path),
                             "-n", "ns")
        assert out.returncode == 1
        assert message in out.stderr, out.stderr


def test_explain_reads_the_hugging_face_cache_named_by_hf_home(tmp_path, monkeypatch):
    snap = tmp_path / "hf/hub/models--org--private-model/snapshots/abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps({**LLAMA31_8B, "max_position_embeddings": 8192}))
    (tmp_path / "hf/hub/models--org--private-model/refs").mkdir()
    (tmp_path / "hf/hub/models--org--private-model/refs/main").write_text("abc123\n")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    model = _spec(tmp_path, UNKNOWN)
    out = cli_in_process("explain", str(model), "--cluster", str(CLUSTERS / "example-h200.yaml"), "-n", "ns")
    assert out.returncode == 0, out.stderr
    assert (f"memory fit      per GPU (tp=1 pp=1 ep=off), facts from {snap}/config.json (Hugging Face cache)"
            in out.stdout)


@pytest.mark.parametrize(("text", "tokens"), [(None, 40960), ("8192", 8192), ("32k", 32000), ("32K", 32768),
                                              ("1M", 1024**2), ("-1", 0), ("[]", None), ("-1k", None)])
def test_max_model_len_is_read_as_vllm_reads_it(text, tokens):
    from manifesto.resolve.fit import _max_len

    assert _max_len(text, 40960) == tokens


def test_values_vllm_would_refuse_leave_the_fit_unknown():
    from manifesto.resolve.fit import plan_fit
    from manifesto.resolve.layout import LayoutInput, plan_layout
    from manifesto.resolve.plan import Arg

    lay = plan_layout(LayoutInput(tp=1, pp=1, dp=False, ep=False, nodes=1, replicas=1, gpus_per_node=8, routed=False,
                                  proxied=False))
    fit = plan_fit(_catalog("Qwen/Qwen3-0.6B"), lay, (Arg("--gpu-memory-utilization", "9.0"),), 141 * 10**9)
    assert (fit.status, fit.note) == ("unknown", "--gpu-memory-utilization 9.0 is not a value vLLM takes")


# --- CUDA-visible memory per accelerator --------------------------------------------------------

def _h200_profile(tmp_path, memory_line: str | None):
    text = (CLUSTERS / "example-h200.yaml").read_text()
    text = text.replace("      memory: 141G\n", "" if memory_line is None else f"      {memory_line}\n")
    path = tmp_path / "h200.yaml"
    path.write_text(text)
    return path


def test_every_bundled_accelerator_has_a_cuda_memory_figure_with_its_source():
    from manifesto.resolve.accelerator import PARTS, cuda_memory

    for name, row in PARTS.items():
        # HBM stacks come in binary sizes and CUDA keeps some for itself, so the CUDA figure lies
        # within 10% of the data-sheet number, on either side of it; a measured row cites its page.
        assert row.source and all(0.9 < row.gib / gb < 1.1 for gb in row.data_sheet_gb[:1]), name
        assert row.basis in ("cuda", "same-memory", "data-sheet", "vendor-rule"), name
        if row.basis == "cuda":  # the row quotes the figure it holds
            shown = (str(row.bytes), f"{row.gib:.2f} GiB", f"{row.gib:.2f}GiB", f"{row.gib:.1f} GiB", f"{row.gib:g} GiB")
            assert any(text in row.source for text in shown), name
    for cluster in sorted(CLUSTERS.glob("*.yaml")):
        spec, profile = kit.load_pair(REPO / "models/qwen/qwen3-0.6b.yaml", cluster)
        for name, prof in profile.profile.accelerators.profiles.items():
            memory, source = cuda_memory(prof.gpu_arch or name, None, name, prof.part)
            assert memory is not None, (cluster.name, name, source)


@pytest.mark.parametrize(("arch", "part", "stated", "gib", "text"), [
    # The cases: an A100 40GB profile without memory was sized at 79 GiB; 40G read as 37.25 GiB.
    ("a100", "A100-SXM4-40GB", None, 39.50, "CUDA-visible memory of the A100-SXM4-40GB (cuda)"),
    ("a100", None, "40G", 39.50, "accelerators.profiles.p.memory 40G is its data-sheet size"),
    ("a100", None, "80G", 79.15, "accelerators.profiles.p.memory 80G is its data-sheet size"),
    ("h100", "H100-NVL-94GB", None, 93.00, "CUDA-visible memory of the H100-NVL-94GB"),
    ("h100", None, "94G", 93.00, "accelerators.profiles.p.memory 94G is its data-sheet size"),
    ("h100", "h100-sxm5-80gb", None, 79.11, "CUDA-visible memory of the H100-SXM5-80GB"),
    ("h20", None, None, 95.1, "CUDA-visible memory of the H20-96GB"),
    ("mi355x", None, None, 288.0, "CUDA-visible memory of the MI355X-288GB"),
    ("a100", None, "40Gi", 40.0, "accelerators.profiles.p.memory, taken as the memory CUDA sees"),
    ("x9", None, "40G", 37.25, "accelerators.profiles.p.memory, taken as the memory CUDA sees (40G is 37.25 GiB: "
                               "G counts 10^9 bytes, Gi 2^30)"),
])
def test_accelerators_are_sized_by_part(arch, part, stated, gib, text):
    from manifesto.resolve.accelerator import cuda_memory
    from manifesto.util.quantity import byte_count

    memory, source = cuda_memory(arch, byte_count(stated) if stated else None, "p", part)
    assert abs(memory / 1024**3 - gib) < 0.01 and source.startswith(text), (memory / 1024**3, source)


def test_a_family_with_several_parts_asks_for_the_part():
    from manifesto.resolve.accelerator import cuda_memory

    memory, source = cuda_memory("a100", None, "p", None)
    assert memory is None
    assert source == ("gpu_arch a100 is sold as several parts (A100-SXM4-40GB, A100-80GB); set "
                      "accelerators.profiles.p.part to one, or accelerators.profiles.p.memory to what CUDA sees")


def test_an_unknown_part_is_refused_at_its_field(tmp_path):
    text = (CLUSTERS / "example-h200.yaml").read_text().replace("gpu_arch: h200", "gpu_arch: h200\n      part: H200-140GB")
    path = tmp_path / "c.yaml"
    path.write_text(text)
    out = cli_in_process("config", "validate", str(REPO / "models/qwen/h200-aggregated.yaml"), "--cluster", str(path),
                         "-n", "ns")
    assert out.returncode != 0
    assert "part: 'H200-140GB' is not a part of the accelerator table (manifesto/schema/parts.py)" in out.stderr
    assert "did you mean 'H200-141GB'" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(("line", "gib", "source"), [
    (None, 139.81, "CUDA-visible memory of the H200-141GB (cuda): PyTorch's"),
    ("memory: 141G", 139.81, "accelerators.profiles.h200.memory 141G is its data-sheet size"),
    ("memory: 139Gi", 139.0, "accelerators.profiles.h200.memory, taken as the memory CUDA sees"),
])
def test_an_h200_profile_gives_about_140_gib_unless_it_states_otherwise(tmp_path, line, gib, source):
    plan = plan_of(REPO / "models/qwen/h200-aggregated.yaml", _h200_profile(tmp_path, line))[0]
    assert abs(plan.accelerator.memory / 1024**3 - gib) < 0.01
    assert plan.roles[0].fit.gpu_memory == plan.accelerator.memory
    assert plan.accelerator.memory_source.startswith(source), plan.accelerator.memory_source


def test_an_accelerator_outside_the_table_without_memory_is_not_checked(tmp_path):
    text = (CLUSTERS / "example-h200.yaml").read_text().replace("      memory: 141G\n", "")
    text = text.replace("gpu_arch: h200", "gpu_arch: rtx-6000")
    path = tmp_path / "c.yaml"
    path.write_text(text)
    fit = plan_of(REPO / "models/qwen/h200-aggregated.yaml", path)[0].roles[0].fit
    assert fit.status == "unknown" and fit.note == (
        "gpu_arch rtx-6000 is not a family of the accelerator table (manifesto/schema/parts.py); set "
        "accelerators.profiles.h200.part to one of its parts, or accelerators.profiles.h200.memory to what CUDA sees")


def test_a_kv_cache_short_of_max_model_len_fails_every_command(tmp_path):
    # The example: qwen/h200-aggregated on an H200 profile with memory: 20G. vLLM may use
    # 0.9 x 18.6 GiB = 16.8 GiB, the weights take 16.4 GiB and vLLM keeps back 2.1 GiB: no KV cache.
    cluster = _h200_profile(tmp_path, "memory: 20G")
    model = REPO / "models/qwen/h200-aggregated.yaml"
    for command in (("render", "manifest"), ("render", "file"), ("config", "validate"), ("explain",), ("deploy",)):
        out = cli_in_process(*command, str(model), "--cluster", str(cluster), "-n", "ns")
        assert out.returncode == 1, (command, out.stdout[:200])
        assert kit.scrub(out.stderr, tmp_path).startswith(
            "error: models/qwen/h200-aggregated.yaml:27:7: roles[0].vllm.max_model_len: role 'decode': the KV "
            "cache holds 0 tokens, fewer than max_model_len 32768, so vLLM would refuse to start. Per GPU (tp=1 "
            "pp=1 dp=4 ep=4): gpu_memory_utilization 0.9 x the h200's 18.6 GiB (accelerators.profiles.h200.memory "
            "at <tmp>/h200.yaml:15:7) = 16.8 GiB, minus 16.4 GiB of weights and 2.1 GiB vLLM keeps back for "
            "activations, CUDA graphs and buffers, leaves 0.0 GiB; "
            "max_model_len needs 1.5 GiB (49152 bytes per token, kv_cache_dtype fp8)."), (command, out.stderr)
        assert "Traceback" not in out.stderr


def test_a_default_max_model_len_is_blamed_on_the_role(tmp_path):
    # Without max_model_len vLLM takes the model's 40960 positions; the error says to set it.
    body = QWEN32.replace("tp: 1", "tp: 2").replace("max_model_len: 40960, ", "").replace("0.3", "0.28")
    out = cli_in_process("config", "validate", str(_spec(tmp_path, body)), "--cluster",
                         str(CLUSTERS / "example-h200.yaml"), "-n", "ns")
    assert out.returncode == 1
    assert kit.scrub(out.stderr, tmp_path).startswith("error: <tmp>/m.yaml:4:5: roles[0]: role 'decode': the KV cache "
                                                      "holds 37613 tokens, fewer than max_model_len 40960")
    assert "To fix: set vllm.max_model_len (it defaults to the model's 40960)" in out.stderr
    spec_level = _spec(tmp_path, "vllm: {max_model_len: 40960}\n" + textwrap.dedent(body), "s.yaml")
    out = cli_in_process("config", "validate", str(spec_level), "--cluster", str(CLUSTERS / "example-h200.yaml"),
                         "-n", "ns")
    assert kit.scrub(out.stderr, tmp_path).startswith("error: <tmp>/s.yaml:1:8: vllm.max_model_len: role 'decode'")


# --- explain and flags on Slurm ------------------------------------------------------------------

def test_explain_on_slurm_names_no_idle_shutdown_nor_deployments():
    out = cli_in_process("explain", str(REPO / "models/qwen/qwen3-0.6b.yaml"), "--cluster",
                         str(CLUSTERS / "example-slurm.yaml"), "-n", "ns")
    assert out.returncode == 0, out.stderr
    assert "idle shutdown   none on Slurm: a job ends at slurm.time or with `manifesto slurm stop`" in out.stdout
    assert "after 45 min" not in out.stdout and "Deployment" not in out.stdout
    assert "role decode: srun step(s) manifesto-decode of the batch job manifesto-qwen3-0-6b" in out.stdout
    k8s = cli_in_process("explain", str(REPO / "models/qwen/qwen3-0.6b.yaml"), "--cluster",
                         str(CLUSTERS / "example-gb200.yaml"), "-n", "ns")
    assert "idle shutdown   after 45 min" in k8s.stdout and "role decode: Deployment " in k8s.stdout


def test_an_idle_timeout_flag_on_slurm_blames_the_flag_and_a_spec_the_spec(tmp_path):
    model, slurm = str(REPO / "models/qwen/qwen3-0.6b.yaml"), str(CLUSTERS / "example-slurm.yaml")
    out = cli_in_process("render", "manifest", model, "--cluster", slurm, "-n", "ns", "--idle-timeout", "15m")
    assert out.returncode == 1
    assert out.stderr == (
        "error: --idle-timeout 15m: idle shutdown after 15 minutes is a Kubernetes controller; on Slurm cluster "
        "'example-slurm' a job ends at slurm.time or with `manifesto slurm stop`: leave the flag out\n")
    spec = tmp_path / "idle.yaml"
    spec.write_text(textwrap.dedent(UNKNOWN) + "runtime: {idle_shutdown: {timeout_minutes: 30}}\n")
    out = cli_in_process("render", "manifest", str(spec), "--cluster", slurm, "-n", "ns")
    assert out.returncode == 1
    assert kit.scrub(out.stderr, tmp_path).startswith("error: <tmp>/idle.yaml:5:11: runtime.idle_shutdown: idle "
                                                      "shutdown after 30 minutes is a Kubernetes controller")


@pytest.mark.integration
def test_build_fails_an_explicit_pair_that_does_not_fit_and_skips_it_in_a_pattern(tmp_path, monkeypatch):
    (tmp_path / "clusters").mkdir()
    (tmp_path / "models").mkdir()
    small = (CLUSTERS / "example-h200.yaml").read_text().replace("memory: 141G", "memory: 20G")
    (tmp_path / "clusters/small.yaml").write_text(small.replace("name: example-h200", "name: small"))
    (tmp_path / "models/qwen.yaml").write_text((REPO / "models/qwen/h200-aggregated.yaml").read_text())
    (tmp_path / "BUILD.yaml").write_text(textwrap.dedent("""\
        options:
          default: {user: u, namespace: ns}
        targets:
          - {kind: cluster, path: clusters, sources: ["*.yaml"]}
          - {kind: model, path: models, sources: ["*.yaml"], options: default}
        """))
    monkeypatch.chdir(tmp_path)
    every = cli_in_process("build", "//::", "--jobs", "1")
    assert every.returncode == 0, every.stderr
    assert every.stdout == "0 rendered, 0 up to date, 1 skipped, 0 failed\n"
    explicit = cli_in_process("build", "//models:qwen", "--cluster", "small", "--jobs", "1")
    assert explicit.returncode != 0
    assert "the KV cache holds 0 tokens, fewer than max_model_len 32768" in explicit.stdout + explicit.stderr
    assert not (tmp_path / "out/small/qwen.yaml").exists()


# Hand arithmetic of the KV cache per token and the state each sequence holds whatever its
# length, at tp 1 and max_model_len 32768, for every bundled architecture, from the sizes of its
# published config.json (catalog/architectures/*/*.json names each source):
HAND_KV = {
    # GQA: layers x 2 (K and V) x KV heads x head_dim x 2 bytes (bf16).
    "Qwen/Qwen3-0.6B": (28 * 2 * 8 * 128 * 2, 0),
    "Qwen/Qwen3-30B-A3B": (48 * 2 * 4 * 128 * 2, 0),
    "Qwen/Qwen3-30B-A3B-Instruct-2507": (48 * 2 * 4 * 128 * 2, 0),
    "Qwen/Qwen3-32B": (64 * 2 * 8 * 128 * 2, 0),
    # MLA: layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 bytes.
    "deepseek-ai/DeepSeek-V3": (61 * (512 + 64) * 2, 0),
    # fp8_ds_mla: 584-byte entries, every 128th token in 31 layers, every 4th with a 132-byte
    # indexer key in 30; each of the 61 layers keeps its last 128 tokens whole.
    "deepseek-ai/DeepSeek-V4-Pro": (31 * 584 / 128 + 30 * (584 + 132) / 4, 61 * 128 * 584),
    # 24 MLA layers per token; the KDA layers' float32 recurrent state (96 heads x 128 x 128) and
    # bf16 conv state (3 tokens x 3 x 96 x 128), the 69 layers padded to 72 by vLLM's hybrid cache
    # manager (issue 39): the fit counts 69, 4.2 % under the padded figure.
    "moonshotai/Kimi-K3": (24 * 576 * 2, 72 * (96 * 128 * 128 * 4 + 3 * 3 * 96 * 128 * 2)),
    "mgoin/Kimi-K3-pruned75": (24 * 576 * 2, 72 * (96 * 128 * 128 * 4 + 3 * 3 * 96 * 128 * 2)),
}


def test_every_bundled_architecture_is_within_five_percent_of_hand_arithmetic():
    from manifesto.resolve.fit import kv_cache

    bundled = {str(p.relative_to(REPO / "catalog/architectures").with_suffix("")).replace("\\", "/")
               for p in (REPO / "catalog/architectures").glob("*/*.json")}
    assert bundled == set(HAND_KV), "a new architecture needs its hand arithmetic here"
    for model, (per_token, per_sequence) in HAND_KV.items():
        arch = _catalog(model)
        kv = kv_cache(arch, tp=1, pp=1, kv_dtype="auto", max_len=32768, ds_mla=bool(arch.compress_ratios))
        assert abs(kv.per_token - per_token) <= 0.05 * per_token, (model, kv.per_token, per_token)
        assert abs(kv.per_sequence - per_sequence) <= 0.05 * per_sequence, (model, kv.per_sequence, per_sequence)


def test_laguna_gets_a_fit_from_the_users_config_json_without_an_architecture_record(tmp_path, monkeypatch):
    """Laguna S 2.1 has no public config.json, so the bundled spec's fit stays unknown; a user who
    has the model in the Hugging Face cache gets a fit from that config.json. The config here is a
    stand-in of the right form (its sizes are not Laguna's)."""
    stand_in = {**LLAMA31_8B, "max_position_embeddings": 32768,
                "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}}
    model = REPO / "models/poolside/laguna-S-2.1-NVFP4.yaml"
    cluster = CLUSTERS / "example-stateless-b200.yaml"
    assert plan_of(model, cluster)[0].roles[0].fit.status == "unknown"
    snap = tmp_path / "hf/hub/models--poolside--Laguna-S-2.1-NVFP4/snapshots/c0ffee"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(stand_in))
    (tmp_path / "hf/hub/models--poolside--Laguna-S-2.1-NVFP4/refs").mkdir()
    (tmp_path / "hf/hub/models--poolside--Laguna-S-2.1-NVFP4/refs/main").write_text("c0ffee\n")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    out = cli_in_process("explain", str(model), "--cluster", str(cluster), "-n", "ns", "-o", "json")
    assert out.returncode == 0, out.stderr
    fit = json.loads(out.stdout)["roles"][0]["fit"]
    assert fit["status"] == "ok" and fit["source"] == f"{snap}/config.json (Hugging Face cache)"
    assert fit["kv_per_token"] == 32 * 2 * 8 * 128 * 2 // 2  # TP2 halves the 8 KV heads
