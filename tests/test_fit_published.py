"""The memory fit against vLLM's own start-up figures: each row is a published "Available KV cache
memory" with the settings it was measured under, and the fit explain shows (resolve/fit.py:
plan_fit, the same call render makes) must land within 10 % of it.

A row records the model (a bundled architecture, or the config.json facts the fit reads, with
the config's address), the GPU part, the layout, gpu_memory_utilization, max_model_len, the
batch limits where the log gives them (else vLLM's defaults for the GPU apply, as in the fit),
the vLLM version and the page it was published on. vLLM before 0.21.0 did not subtract its
CUDA-graph estimate from the KV cache ("CUDA graph memory profiling is enabled (default since
v0.21.0)"), so for those rows the fit's "CUDA graphs" term is added back.

To check another figure, add a row: the arithmetic is not tuned per row.
"""

from __future__ import annotations

import pytest

GIB = 1024**3

# openai/gpt-oss-20b config.json (https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json):
# 24 layers alternating sliding (128) and full attention, 64 query and 8 KV heads of 64, 32
# experts (4 a token) of 2880, vocabulary 201088; MXFP4 experts, attention left in BF16.
GPT_OSS_20B = {
    "model_type": "gpt_oss", "num_hidden_layers": 24, "hidden_size": 2880, "intermediate_size": 2880,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
    "num_local_experts": 32, "num_experts_per_tok": 4, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 12, "tie_word_embeddings": False,
    "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]},
}
# Qwen/Qwen3-8B config.json (https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json).
QWEN3_8B = {
    "model_type": "qwen3", "num_hidden_layers": 36, "hidden_size": 4096, "intermediate_size": 12288,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
    "tie_word_embeddings": False, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
}

# (model, config or None for the bundled record, GPU bytes and their source, tp, utilization,
#  max_model_len, extra vLLM arguments, vLLM version, published Available KV cache memory GiB, page)
ROWS = [
    pytest.param(
        "openai/gpt-oss-20b", GPT_OSS_20B, ("A100-80GB", None), 1, 0.65, 131072, {}, "0.19.0", 36.56,
        "https://myoceane.fr/index.php/ai-vllm-a100-gemma-4/ (Model loading took 13.72 GiB; the A100 is the 80GB "
        "part: 0.65 of a 40GB one cannot hold 13.72 + 36.56 GiB)",
        id="gpt-oss-20b-a100-80gb"),
    pytest.param(
        "Qwen/Qwen3-8B", QWEN3_8B, (None, 23.52), 1, 0.9764, 16384, {}, "0.21+", 6.37,
        "https://github.com/LMCache/LMCache/issues/3430 (24 GB GPU: 0.52 GiB of CUDA graphs = (0.9764 - 0.9543) "
        "of 23.5 GiB, a GeForce RTX 4090's 23.52 GiB, https://github.com/Soul-AILab/SoulX-FlashTalk/issues/5; "
        "PIECEWISE=51 (largest=512), FULL=35 (largest=256): vLLM's defaults of 2048 tokens and 256 sequences)",
        id="qwen3-8b-rtx4090"),
]


def _fit(model, config, gpu, tp, util, max_len, extra):
    from manifesto.resolve.accelerator import PARTS
    from manifesto.resolve.architecture import from_config
    from manifesto.resolve.fit import plan_fit
    from manifesto.resolve.layout import LayoutInput, plan_layout
    from manifesto.resolve.plan import Arg
    from manifesto.tasks.inputs.architecture import catalog_record

    arch = from_config(config, source=model) if config else catalog_record(model)[1]
    part, gib = gpu
    memory = PARTS[part].bytes if part else int(gib * GIB)
    family = PARTS[part].family if part else ""
    lay = plan_layout(LayoutInput(tp=tp, pp=1, dp=False, ep=False, nodes=1, replicas=1, gpus_per_node=8,
                                  routed=False, proxied=False))
    args = (Arg("--gpu-memory-utilization", str(util)), Arg("--max-model-len", str(max_len)),
            *(Arg(f"--{k}", str(v)) for k, v in extra.items()))
    return plan_fit(arch, lay, args, memory, family=family)


@pytest.mark.parametrize(("model", "config", "gpu", "tp", "util", "max_len", "extra", "version", "published",
                          "source"), ROWS)
def test_fit_is_within_ten_percent_of_vllm_start_up(model, config, gpu, tp, util, max_len, extra, version,
                                                    published, source):
    fit = _fit(model, config, gpu, tp, util, max_len, extra)
    budget = fit.kv_budget
    release = tuple(int(x) for x in version.rstrip("+").split(".")[:2])
    if release < (0, 21):  # vLLM did not yet take its CUDA-graph estimate from the KV cache
        budget += sum(size for name, size, _, _ in fit.overhead_parts if name == "CUDA graphs")
    assert abs(budget / GIB - published) <= 0.10 * published, (budget / GIB, published, source)
    # Start or refuse, as vLLM did: both rows started, so one max_model_len sequence fits.
    assert fit.status == "ok"


def test_every_row_names_its_page_and_version():
    for row in ROWS:
        model, config, gpu, tp, util, max_len, extra, version, published, source = row.values
        assert source.startswith("https://") and version and 0 < util <= 1 and published > 0


def test_deepseek_v4_pro_at_800k_on_8_h200_is_refused_as_vllm_refuses_it():
    """https://github.com/vllm-project/recipes/issues/381: "The DeepSeek-V4-Pro recipe ... recommends
    8xH200 DP+EP with --data-parallel-size 8 and --max-model-len 800000, but this did not start
    successfully on an 8xH200 node" (--kv-cache-dtype fp8 --block-size 256 --enable-expert-parallel).
    The fit refuses it too: with fp8_ds_mla entries and what vLLM keeps back, one 800K sequence
    does not fit a GPU's KV cache; 400K does."""
    from manifesto.resolve.accelerator import PARTS
    from manifesto.resolve.fit import plan_fit
    from manifesto.resolve.layout import LayoutInput, plan_layout
    from manifesto.resolve.plan import Arg
    from manifesto.tasks.inputs.architecture import catalog_record

    arch = catalog_record("deepseek-ai/DeepSeek-V4-Pro")[1]
    lay = plan_layout(LayoutInput(tp=1, pp=1, dp=8, ep=True, nodes=1, replicas=1, gpus_per_node=8, routed=False,
                                  proxied=False))

    def fit(max_len):
        args = (Arg("--max-model-len", str(max_len)), Arg("--kv-cache-dtype", "fp8"), Arg("--block-size", "256"))
        return plan_fit(arch, lay, args, PARTS["H200-141GB"].bytes, family="h200")

    refused = fit(800000)
    assert (refused.status, refused.kv_dtype) == ("kv-short", "fp8_ds_mla")
    assert fit(400000).status == "ok"
