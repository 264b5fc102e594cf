"""Layouts vLLM 0.33.0 refuses while loading the weights are refused here (resolve/partition.py),
and plan proposes none of them. Each rule is tested with the vLLM source line it comes from."""

from __future__ import annotations

import textwrap

import pytest

import kit
from kit import cli_in_process

REPO = kit.REPO_ROOT
CLUSTERS = REPO / "clusters"


def _arch(model: str):
    from manifesto.tasks.inputs.architecture import catalog_record

    return catalog_record(model)[1]


def test_attention_heads_must_divide_by_tp():
    """vllm/config/model.py (0.33.0), verify_with_parallel_config: 'if total_num_attention_heads %
    tensor_parallel_size != 0: raise ValueError(... must be divisible by tensor parallel size ...)'."""
    from manifesto.resolve.partition import layout_problems

    qwen = _arch("Qwen/Qwen3-0.6B")  # 16 heads
    assert layout_problems(qwen, tp=16, dp=1, ep=False) == []
    assert layout_problems(qwen, tp=32, dp=1, ep=False) == [
        "its 16 attention heads do not divide by tp 32 (vLLM 0.33.0 config/model.py: verify_with_parallel_config)"]


def test_kv_heads_divide_by_tp_or_tp_by_kv_heads():
    """vllm/model_executor/layers/linear.py (0.33.0), QKVParallelLinear.__init__: 'if tp_size >=
    self.total_num_kv_heads: ... self.num_kv_head_replicas = divide(tp_size, self.total_num_kv_heads)
    else: self.num_kv_heads = divide(self.total_num_kv_heads, tp_size)'."""
    import msgspec

    from manifesto.resolve.partition import layout_problems

    six = msgspec.structs.replace(_arch("Qwen/Qwen3-32B"), kv_heads=6, attention_heads=48, intermediate_size=24576)
    assert layout_problems(six, tp=2, dp=1, ep=False) == []  # 6 / 2
    assert layout_problems(six, tp=12, dp=1, ep=False) == []  # 12 / 6: each KV head on two GPUs
    assert layout_problems(six, tp=4, dp=1, ep=False) == [
        "its 6 KV heads neither divide by tp 4 nor divide it (model_executor/layers/linear.py: QKVParallelLinear)"]


def test_fp8_block_partitions_must_be_multiples_of_the_block():
    """vllm/model_executor/layers/quantization/utils/fp8_utils.py (0.33.0), validate_fp8_block_shape:
    'if output_partition_size % block_n != 0: raise ValueError(f"Weight output_partition_size =
    {output_partition_size} is not divisible by weight quantization block_n = {block_n}.")'.
    DeepSeek-V3's dense MLP (intermediate 18432) at TP32 gives 576, the issue's example."""
    from manifesto.resolve.partition import layout_problems

    v3 = _arch("deepseek-ai/DeepSeek-V3")
    assert v3.weight_block == (128, 128)
    assert layout_problems(v3, tp=16, dp=1, ep=True) == []
    problems = layout_problems(v3, tp=32, dp=1, ep=True)
    assert problems[0] == ("dense MLP gate_up_proj: weight output_partition_size = 576 at tp 32 is not divisible "
                           "by FP8 quantization block_n = 128 (quantization/utils/fp8_utils.py: "
                           "validate_fp8_block_shape)")
    assert any("input_size_per_partition = 576" in p and "block_k = 128" in p for p in problems)
    assert any(p.startswith("shared experts gate_up_proj: weight output_partition_size = 64") for p in problems)


def test_routed_experts_without_ep_are_split_over_tp_times_dp():
    """vllm/model_executor/layers/fused_moe/config.py (0.33.0), FusedMoEParallelConfig.make: without
    EP 'tp_size, tp_rank = flatten_tp_across_dp_and_pcp(...)' ('There are actually dp_size *
    pcp_size * tp_size devices. Update tp_size and tp_rank so we shard across all devices'); then
    fp8_utils.py validate_fp8_block_shape_moe: 'if intermediate_size_per_partition % block_n != 0:
    raise ValueError(... is not divisible by weight quantization block_n ...)'."""
    from manifesto.resolve.partition import layout_problems

    v3 = _arch("deepseek-ai/DeepSeek-V3")  # moe_intermediate_size 2048
    assert layout_problems(v3, tp=8, dp=2, ep=False) == []  # 2048 / 16 = 128
    assert layout_problems(v3, tp=8, dp=4, ep=False) == [
        "routed experts without EP are split over tp x dp = 32 GPUs: intermediate_size_per_partition = 64 is not "
        "divisible by FP8 quantization block 128 (quantization/utils/fp8_utils.py: validate_fp8_block_shape_moe; "
        "fused_moe/config.py: flatten_tp_across_dp_and_pcp); turn ep on"]
    assert layout_problems(v3, tp=8, dp=4, ep=True) == []  # with EP each GPU holds whole experts


def test_moe_memory_without_ep_is_sharded_over_tp_times_dp():
    """The same flatten_tp_across_dp_and_pcp: Qwen3-30B-A3B at DP4 without EP holds a quarter of
    every expert per GPU (14.2 GiB of experts, 16.4 GiB in all), not all of them (the issue's 61 GB)."""
    from manifesto.resolve.fit import plan_fit
    from manifesto.resolve.layout import LayoutInput, plan_layout

    arch = _arch("Qwen/Qwen3-30B-A3B")
    lay = plan_layout(LayoutInput(tp=1, pp=1, dp=4, ep=False, nodes=1, replicas=1, gpus_per_node=8, routed=True,
                                  proxied=False))
    fit = plan_fit(arch, lay, (), 140 * 1024**3)
    experts = dict(fit.weight_parts)["routed experts"]
    assert abs(experts * 4 - 48 * 128 * 3 * 2048 * 768 * 2) <= 4
    assert fit.weights < 17 * 1024**3 and "experts split 4 ways" in fit.layout


def test_deepseek_v4_output_groups_must_not_divide_to_zero():
    """vllm/models/deepseek_v4/attention.py (0.33.0): 'self.n_groups = config.o_groups;
    self.n_local_groups = self.n_groups // tp_size' (the wo_a bmm's batch); 16 groups at TP32 give
    none. Its shared expert (moe_intermediate 3072) at TP16 gives 192, not a multiple of 128."""
    from manifesto.resolve.partition import layout_problems

    v4 = _arch("deepseek-ai/DeepSeek-V4-Pro")
    assert v4.o_groups == 16 and layout_problems(v4, tp=8, dp=1, ep=True) == []
    assert layout_problems(v4, tp=16, dp=1, ep=True)[0].startswith(
        "shared experts gate_up_proj: weight output_partition_size = 192 at tp 16")
    assert ("its 16 output groups (o_groups) give each of tp 32 GPUs none (models/deepseek_v4/attention.py: "
            "n_local_groups = o_groups // tp_size)") in layout_problems(v4, tp=32, dp=1, ep=True)


def test_render_refuses_a_layout_vllm_cannot_load(tmp_path):
    spec = tmp_path / "m.yaml"
    spec.write_text(textwrap.dedent("""\
        release: dsv3
        model: {id: deepseek-ai/DeepSeek-V3, image_ref: vllm.standard}
        roles:
          - name: decode
            lws: {size: 8}
            parallelism: {tp: 32}
            vllm: {max_model_len: 8192}
        """))
    out = cli_in_process("render", "manifest", str(spec), "--cluster", str(CLUSTERS / "example-gb200.yaml"), "-n", "ns")
    assert out.returncode == 1 and out.stdout == ""
    assert kit.scrub(out.stderr, tmp_path).startswith(
        "error: <tmp>/m.yaml:6:5: roles[0].parallelism: role 'decode': vLLM 0.33.0 cannot split deepseek-ai/DeepSeek-V3 "
        "as tp=32 ep=off: dense MLP gate_up_proj: weight output_partition_size = 576 at tp 32")
    assert "Traceback" not in out.stderr


def _independent_problem(arch, tp: int, dp: int, ep: bool, dcp: int = 1) -> str | None:
    """The same rules, recomputed from the config sizes without the module under test."""
    if arch.attention_heads % tp:
        return "heads"
    if dcp > 1 and (tp % dcp or arch.sliding_layers or arch.compress_ratios or (
            not arch.kv_lora_rank and (tp <= arch.kv_heads or dcp > tp // arch.kv_heads))):
        return "dcp"
    if arch.o_groups and arch.o_groups < tp:
        return "o_groups"
    if not arch.weight_block or arch.weight_format != "fp8" or tp == 1:
        sizes = []
    else:
        sizes = [arch.intermediate_size if arch.dense_layers or not arch.is_moe else 0,
                 arch.moe_intermediate_size * arch.shared_experts]
    if any(size and (size % tp or (size // tp) % 128) for size in sizes):
        return "fp8 block"
    if arch.is_moe and not ep and arch.expert_format == "fp8" and tp * dp > 1 and \
            (arch.moe_intermediate_size // (tp * dp)) % 128:
        return "fp8 experts"
    return None


BUNDLED = sorted(str(p.relative_to(REPO / "catalog/architectures").with_suffix("")).replace("\\", "/")
                 for p in (REPO / "catalog/architectures").glob("*/*.json"))


@pytest.mark.parametrize("model", BUNDLED)
def test_plan_sweep_proposes_no_layout_vllm_refuses(model):
    """Every bundled architecture x every example cluster x two workloads: no proposal breaks a
    loader rule (checked by an independent recomputation of the sizes)."""
    from manifesto.capacity import Demand, plan_model, start_from
    from manifesto.cluster import load_cluster
    from manifesto.resolve.options import Options

    clusters = [load_cluster(p) for p in sorted(CLUSTERS.glob("*.yaml"))]
    arch = _arch(model)
    for max_len, conc in ((4096, 1), (32768, 64)):
        report = plan_model(start_from(model), clusters, Demand(max_model_len=max_len, concurrency=conc),
                            Options(user="plan"))
        assert report.proposed, model
        for o in report.proposed:
            c = o.candidate
            assert _independent_problem(arch, c.tp, c.dp, c.ep, c.dcp) is None, (model, c.text(), o.cluster)
        for o in report.refused:  # the space holds such layouts; resolve refuses them with the rule
            c = o.candidate
            if _independent_problem(arch, c.tp, c.dp, c.ep, c.dcp):
                assert "cannot split" in o.error or "weights need" in o.error, (model, c.text(), o.error[:200])
        if model.startswith("deepseek-ai/"):  # TP32 on GB200 NVL domains, or DP without EP: refused
            assert any("vLLM 0.33.0 cannot split" in o.error for o in report.refused), model
        # Decode context parallelism is offered for MLA models with full-attention caches only.
        assert any(o.candidate.dcp > 1 for o in report.proposed) == (model == "deepseek-ai/DeepSeek-V3"), model


def test_decode_context_parallelism_follows_vllms_rules():
    """vLLM 0.33.0: DCP reuses the TP ranks (config/parallel.py: "tp_size=T must be divisible by
    dcp_size=D"); for GQA it needs tp above the KV heads and at most tp // kv_heads DCP ranks
    (config/model.py: verify_with_parallel_config); only full-attention and Mamba-style cache
    groups take it (v1/core/kv_cache_coordinator.py)."""
    from manifesto.resolve.architecture import from_config
    from manifesto.resolve.partition import layout_problems

    v3, qwen = _arch("deepseek-ai/DeepSeek-V3"), _arch("Qwen/Qwen3-32B")  # MLA; GQA with 8 KV heads
    assert layout_problems(v3, tp=8, dp=1, ep=True, dcp=8) == []
    assert layout_problems(v3, tp=8, dp=1, ep=True, dcp=3) == [
        "decode_context_parallel_size 3 does not divide tp 8 (vLLM 0.33.0 config/parallel.py: ParallelConfig, DCP "
        "reuses the TP ranks)"]
    assert layout_problems(qwen, tp=8, dp=1, ep=False, dcp=2) == [
        "decode context parallelism for GQA/MQA needs tp (8) above the model's 8 KV heads (vLLM 0.33.0 "
        "config/model.py: verify_with_parallel_config)"]
    assert layout_problems(qwen, tp=16, dp=1, ep=False, dcp=2) == []
    assert layout_problems(qwen, tp=16, dp=1, ep=False, dcp=4) == [
        "decode_context_parallel_size 4 exceeds tp // KV heads = 2 (vLLM 0.33.0 config/model.py: "
        "verify_with_parallel_config)"]
    sliding = from_config({"model_type": "gpt_oss", "num_hidden_layers": 2, "hidden_size": 64,
                           "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100,
                           "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"]},
                          source="test")
    assert layout_problems(sliding, tp=8, dp=1, ep=False, dcp=2)[0].startswith(
        "decode context parallelism takes only full-attention and Mamba-style KV cache groups")
    v4 = _arch("deepseek-ai/DeepSeek-V4-Pro")
    assert any("compressed and sliding-window caches" in p for p in layout_problems(v4, tp=8, dp=1, ep=True, dcp=8))


def test_decode_context_parallelism_divides_the_kv_cache_a_token_takes(tmp_path):
    """An MLA latent is stored whole on every TP rank; with DCP each of the tp ranks keeps every
    tp-th token (v1/core/kv_cache_utils.py: resolve_dcp_kv_block_size): DeepSeek-V3's 61 layers x
    (512 + 64) x 2 bytes = 70272 bytes a token become 8784 at DCP 8. explain says so, render
    emits the flag, and a GQA model refuses DCP at tp 8."""
    from manifesto.resolve.fit import kv_cache

    v3 = _arch("deepseek-ai/DeepSeek-V3")
    assert kv_cache(v3, tp=8, pp=1, kv_dtype="auto").per_token == 61 * 576 * 2 == 70272
    assert kv_cache(v3, tp=8, pp=1, kv_dtype="auto", dcp=8).per_token == 8784
    spec = tmp_path / "m.yaml"
    spec.write_text(textwrap.dedent("""\
        release: dsv3
        model: {id: deepseek-ai/DeepSeek-V3, image_ref: vllm.standard}
        roles:
          - name: decode
            parallelism: {tp: 8, ep: true}
            vllm: {max_model_len: 65536, decode_context_parallel_size: 8}
        """))
    cluster = str(CLUSTERS / "example-h200.yaml")
    out = cli_in_process("explain", str(spec), "--cluster", cluster, "-n", "ns")
    assert out.returncode == 0, out.stderr
    assert "KV per token    8784 bytes (kv_cache_dtype auto)" in out.stdout
    assert "--decode-context-parallel-size 8" in out.stdout
    qwen = tmp_path / "q.yaml"
    qwen.write_text(spec.read_text().replace("deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-32B").replace(
        "release: dsv3", "release: q").replace("65536", "32768").replace(", ep: true", ""))
    out = cli_in_process("render", "manifest", str(qwen), "--cluster", cluster, "-n", "ns")
    assert out.returncode == 1 and "dcp=8: decode context parallelism for GQA/MQA needs tp (8)" in out.stderr
    assert kit.scrub(out.stderr, tmp_path).startswith("error: <tmp>/q.yaml:6:34: roles[0].vllm.decode_context_parallel_size:")
