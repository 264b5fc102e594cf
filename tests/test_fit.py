"""Memory fit: the arithmetic against published sizes, the refusals, and where architectures come from.

Every expected number below is a published figure, quoted with its source; the arithmetic
must land within 5% of it.
"""

from __future__ import annotations

import json
import textwrap

import msgspec
import pytest

import kit
from kit import cli_in_process, plan_of

REPO = kit.REPO_ROOT
CLUSTERS = REPO / "clusters"


def _catalog(model_id: str):
    from manifesto.service import catalog_record

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


def test_explain_shows_the_arithmetic_in_text_and_json():
    model, cluster = REPO / "models/qwen/qwen3-0.6b.yaml", CLUSTERS / "example-stateless-b200.yaml"
    out = cli_in_process("explain", str(model), "--cluster", str(cluster), "-n", "ns")
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert "GPU memory      178.4 GiB x gpu_memory_utilization 0.92 = 164.1 GiB" in lines
    assert ("from          accelerators.profiles.b200.memory 180G is its data-sheet size; CUDA-visible memory of "
            "b200 GPUs: PyTorch's \"GPU 0 has a total capacity of 178.36 GiB\" (torch.cuda total_memory) in "
            "out-of-memory logs of 8x B200 nodes") in lines
    assert "weights         1.1 GiB = 0.3 GiB embedding and LM head + 0.8 GiB attention and dense layers" in lines
    assert "KV cache        164.1 GiB - 1.1 GiB - 4.0 GiB = 159.0 GiB" in lines
    assert "KV per token    114688 bytes (kv_cache_dtype auto) -> 1488425 tokens, 181.7x max_model_len 8192" in lines
    assert "assumes       28 attention layer(s): K and V of 8 KV head(s) of 128 per token" in lines
    data = json.loads(cli_in_process("explain", str(model), "--cluster", str(cluster), "-n", "ns", "-o", "json").stdout)
    fit = data["roles"][0]["fit"]
    assert (fit["status"], fit["kv_per_token"], fit["kv_tokens"], fit["max_model_len"]) == ("ok", 114688, 1488425, 8192)
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
        "accelerators.profiles.h200.memory at clusters/example-h200.yaml:14:7 is the data-sheet size) allows "
        "41.9 GiB. Spread the model over more GPUs (raise tp or pp, or dp with ep on) or use a GPU with more "
        "memory. Facts from catalog/architectures (https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json "
        "(config); model card (32.8B params, 31.2B non-embedding))\n")


def test_short_kv_cache_refuses_by_default_and_warns_on_request(tmp_path):
    # Qwen3-32B at TP2 needs 64 layers x 2 x 4 KV heads x 128 x 2 bytes = 131072 bytes per token;
    # 0.28 of an H200's 139.8 GiB leaves 4.6 GiB after weights and headroom: 37967 tokens.
    body = QWEN32.replace("tp: 1", "tp: 2").replace("gpu_memory_utilization: 0.3", "gpu_memory_utilization: 0.28")
    model = _spec(tmp_path, body)
    cluster = str(CLUSTERS / "example-h200.yaml")
    refusal = (
        "error: <tmp>/m.yaml:6:12: roles[0].vllm.max_model_len: role 'decode': the KV cache holds 37967 tokens, "
        "fewer than max_model_len 40960, so vLLM would refuse to start. Per GPU (tp=2 pp=1 ep=off): "
        "gpu_memory_utilization 0.28 x the h200's 139.8 GiB (CUDA-visible memory from the accelerator table; "
        "accelerators.profiles.h200.memory at clusters/example-h200.yaml:14:7 is the data-sheet size) = 39.1 "
        "GiB, minus 30.5 GiB of weights and 4.0 GiB of headroom, leaves 4.6 GiB; max_model_len needs 5.0 GiB "
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
    assert ("warning         the KV cache holds 37967 tokens, fewer than max_model_len 40960: vLLM will refuse to "
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
    from manifesto.service import catalog_record

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
    from manifesto.service import load_architecture

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
    from manifesto.resolve.layout import plan_layout
    from manifesto.resolve.plan import Arg

    lay = plan_layout(tp=1, pp=1, dp=False, ep=False, nodes=1, replicas=1, gpus_per_node=8, routed=False,
                      proxied=False, where="")
    fit = plan_fit(_catalog("Qwen/Qwen3-0.6B"), lay, (Arg("--gpu-memory-utilization", "9.0"),), 141 * 10**9)
    assert (fit.status, fit.note) == ("unknown", "--gpu-memory-utilization 9.0 is not a value vLLM takes")
