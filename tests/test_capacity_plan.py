"""``manifesto plan`` (issue 30): the layouts it proposes render, the ones it refuses are refused
by render with the same message, the ranking, three answers worked out by hand, the output
shapes, ``--write`` confined to the workspace, and bad input as one error."""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path

import pytest

from kit import REPO_ROOT, cli_in_process

CLUSTERS = sorted(str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "clusters").glob("example-*.yaml"))
ARCHITECTURES = sorted(str(p.relative_to(REPO_ROOT / "catalog" / "architectures"))[:-5]
                       for p in (REPO_ROOT / "catalog" / "architectures").rglob("*.json"))
GIB = 1024**3

# Llama 3.3 70B's published config.json (meta-llama/Llama-3.3-70B-Instruct), with the
# quantization_config of an FP8 checkpoint in the form Qwen's FP8 releases publish it.
LLAMA_70B_FP8 = {
    "model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192, "intermediate_size": 28672,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128256,
    "tie_word_embeddings": False, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3"},
}


@functools.lru_cache(maxsize=None)
def _example_clusters() -> tuple:
    """The example clusters, loaded once a process: plan and render only read them."""
    from manifesto.cluster import load_cluster

    return tuple(load_cluster(REPO_ROOT / c) for c in CLUSTERS)


def _clusters():
    return list(_example_clusters())


def _plan(model: str, clusters=None, **work):
    from manifesto import capacity
    from manifesto.resolve.options import Options

    start = capacity.start_from(model)
    return capacity.plan_model(start, clusters or _clusters(), capacity.Demand(**work), Options(user="plan"))


def _write_spec(tmp_path: Path, data: dict, name: str) -> Path:
    from manifesto.util.yamlemit import dump_yaml

    path = tmp_path / f"{name}.yaml"
    path.write_text(dump_yaml(data))
    return path


#: The workload grid: a short context with one sequence, where the weights decide what fits, and
#: a long one with 64 at once, where the KV cache does too (layouts whose cache cannot hold one
#: sequence are refused, and others need more replicas): ``test_the_grid_reaches_both_regimes``.
GRID = {"weights": (4096, 1), "kv": (32768, 64)}


class _Renderer:
    """``render manifest`` of written specs, as its command does it (the file loaded, resolved on
    the cluster, rendered), with each distinct file written and loaded once: a layout proposed on
    several clusters offering its accelerator is one spec text rendered on each of them."""

    def __init__(self, folder: Path) -> None:
        from manifesto.resolve.options import Options

        self.folder, self.options, self.specs, self.texts = folder, Options(user="plan"), {}, {}

    def spec(self, data: dict):
        from manifesto.spec import load_spec
        from manifesto.util.yamlemit import dump_yaml

        # plan hands the clusters sharing an accelerator one candidate dict: dump it once
        text = self.texts.get(id(data)) or self.texts.setdefault(id(data), dump_yaml(data))
        if text not in self.specs:
            path = self.folder / f"s{len(self.specs)}.yaml"
            path.write_text(text)
            self.specs[text] = load_spec(path)  # may raise: then nothing is kept and the next call raises again
        return self.specs[text]

    def render(self, data: dict, cluster):
        from manifesto.render import artifact_text

        spec = self.spec(data)
        plan, _ = spec.resolve(cluster, self.options)
        return plan, artifact_text(plan, spec, cluster, self.options)


@pytest.mark.parametrize("point", sorted(GRID))
@pytest.mark.parametrize("model", ARCHITECTURES)
def test_every_proposal_renders_and_every_refusal_is_render_s_own(model, point, tmp_path, capfd):
    """Over every bundled architecture x every example cluster x the grid of max_model_len and
    concurrency: EVERY proposed layout, written as a file, renders (its vLLM arguments and router
    configuration checked against the runtime tables, no table skipped) and resolves to the very
    plan that plan proposed; each refused one is refused by render with the message plan gives;
    and plan accounts for every layout of the search space (brute force over the same space)."""
    from manifesto import capacity
    from manifesto.errors import ManifestoError
    from manifesto.resolve.accelerator import project_accelerator
    from manifesto.tasks.inputs.architecture import catalog_record

    arch = catalog_record(model)[1]
    max_len, conc = GRID[point]
    assert max_len <= arch.max_position_embeddings  # every bundled model takes the grid as it is
    clusters = _clusters()
    by_name = {c.name: c for c in clusters}
    report = _plan(model, clusters, max_model_len=max_len, concurrency=conc)
    space = {(c.name, a, x.tp, x.pp, x.dp, x.ep, x.dcp) for c in clusters for a in c.profile.accelerators.profiles
             for x in capacity.layouts(arch, c, project_accelerator(c.profile, a))}
    seen = [(o.cluster, o.accelerator, o.candidate.tp, o.candidate.pp, o.candidate.dp, o.candidate.ep,
             o.candidate.dcp) for o in report.proposed + report.refused]
    assert sorted(seen) == sorted(space)
    renderer = _Renderer(tmp_path)
    for o in report.proposed:
        cluster = by_name[o.cluster]
        plan, (text, suffix) = renderer.render(o.data, cluster)
        assert plan == o.plan
        assert text and suffix == (".sbatch" if cluster.platform == "slurm" else ".yaml")
        assert o.concurrency >= conc and o.fit.kv_tokens >= max_len
    for o in report.refused:
        with pytest.raises(ManifestoError) as caught:
            renderer.render(o.data, by_name[o.cluster])
        assert caught.value.message == o.error, (o.cluster, o.accelerator, o.candidate.text())
    # A skipped table would be said on stderr ("... are not checked"): every render was checked.
    assert "not checked" not in capfd.readouterr().err


def test_the_grid_reaches_both_regimes():
    """GRID's two points exercise both limits (DeepSeek-V3 on B200s): the same layouts miss on
    weights at both; the KV cache refuses others (their weights fit, but with what vLLM keeps
    back for activations, buffers and CUDA graphs no KV cache is left) at both; and at 32k with
    64 sequences some layouts fit only with more replicas."""
    b200 = [c for c in _clusters() if c.name == "example-stateless-b200"]

    def regimes(point):
        max_len, conc = GRID[point]
        report = _plan("deepseek-ai/DeepSeek-V3", b200, max_model_len=max_len, concurrency=conc)
        weights = {o.candidate.text() + o.cluster + o.accelerator for o in report.refused
                   if "its weights need" in o.error}
        kv = {o.candidate.text() + o.cluster + o.accelerator for o in report.refused
              if "the KV cache holds" in o.error}
        return weights, kv, [o for o in report.proposed if o.candidate.replicas > 1]

    w_weights, w_kv, w_replicas = regimes("weights")
    k_weights, k_kv, k_replicas = regimes("kv")
    assert w_weights and w_weights == k_weights
    assert w_kv and k_kv >= w_kv and k_replicas and not w_replicas


def test_ranking_is_by_cost_then_gpus_then_headroom(tmp_path):
    from manifesto.cluster import load_cluster

    text = (REPO_ROOT / "clusters/example-gb200.yaml").read_text()
    priced = tmp_path / "priced.yaml"
    priced.write_text(text.replace("name: example-gb200", "name: priced")
                      .replace("      gpu_arch: gb200\n", "      gpu_arch: gb200\n      hourly_price: 9.5\n", 1)
                      .replace("      gpu_arch: b200\n", "      gpu_arch: b200\n      hourly_price: 6\n", 1))
    clusters = [load_cluster(priced), load_cluster(REPO_ROOT / "clusters/example-h200.yaml")]
    report = _plan("Qwen/Qwen3-30B-A3B", clusters, max_model_len=32768, concurrency=4)
    keys = [(o.budget.hourly_cost is None, o.budget.hourly_cost or 0, o.budget.gpus, -o.headroom)
            for o in report.proposed]
    assert keys == sorted(keys)
    first = report.proposed[0]
    assert (first.cluster, first.accelerator, first.budget.hourly_cost) == ("priced", "b200", 6.0)
    assert report.proposed[-1].budget.hourly_cost is None  # unpriced layouts come after priced ones


def test_hand_arithmetic_qwen3_32b_bf16_on_one_h200():
    """Qwen3-32B in BF16 at 32k on H200. By hand from its config.json: 64 layers of GQA attention
    (2 x 5120 x 64 x 128 + 2 x 5120 x 8 x 128 = 94,371,840) and MLP (3 x 5120 x 25,600 =
    393,216,000) plus two norms (10,240): 487,598,080 parameters a layer, 31,206,277,120 for 64,
    plus the final norm (5,120); embedding and LM head 2 x 151,936 x 5,120 = 1,555,824,640. At 2
    bytes: 65,524,213,760 bytes = 61.0 GiB on one GPU. An H200 shows CUDA 139.81 GiB; x 0.92 =
    128.6 GiB. vLLM keeps back, with its H200 defaults (8192 batched tokens, 1024 sequences): the
    sampler's 1024 x 151,936 logits x 14 bytes = 2,178,154,496 (above the forward pass's 8192 x
    174,080); 0.25 GiB outside PyTorch; CUDA graphs: 51 PIECEWISE and 51 FULL sizes up to 512, the
    two largest holding 512 tokens x 174,080 bytes of activations, the other 100 graphs 0.1875 MiB
    x 64 layers = 1,436,549,120. That leaves 64.0 GiB for the KV cache, at 2 x 64 x 8 x 128 x 2 =
    262,144 bytes a token: 262,080 tokens, 7 sequences of 32,768. One GPU is the smallest layout; 8 sequences need a
    second."""
    from manifesto.cluster import load_cluster

    h200 = [load_cluster(REPO_ROOT / "clusters/example-h200.yaml")]
    one = _plan("Qwen/Qwen3-32B", h200, max_model_len=32768).proposed[0]
    assert (one.budget.gpus, one.candidate.tp, one.candidate.pp) == (1, 1, 1)
    assert one.fit.weights == 65_524_213_760
    usable = int(139.81 * GIB) * 0.92
    kept = 1024 * 151_936 * 14 + GIB // 4 + 2 * 512 * 174_080 + 100 * 64 * (3 * 2**20 // 16)
    assert one.fit.headroom == kept == 3_883_139_072
    assert one.fit.kv_tokens == int((int(usable) - 65_524_213_760 - kept) // 262_144) == 262_080
    assert one.concurrency == 7
    eight = _plan("Qwen/Qwen3-32B", h200, max_model_len=32768, concurrency=8).proposed
    assert min(o.budget.gpus for o in eight) == 2


def test_hand_arithmetic_70b_dense_fp8_on_h200(tmp_path):
    """A 70B dense model (Llama 3.3 70B) in FP8 at 32k on H200. By hand: embedding and LM head
    2 x 128,256 x 8,192 in BF16 = 4,202,692,608 bytes (3.9 GiB); each of the 80 layers holds
    2 x 8192 x 64 x 128 + 2 x 8192 x 8 x 128 = 150,994,944 attention and 3 x 8192 x 28,672 =
    704,643,072 MLP weights plus 16,384 norm weights, at 1 byte (FP8) plus a 4-byte scale per
    128 x 128 block (1 + 1/4096 bytes a weight): 68.5 GB (63.8 GiB) in all.
    On one H200: 128.6 GiB usable - 67.6 GiB - 3.6 GiB vLLM keeps back (resolve/overhead.py: the
    sampler's 1024 x 128,256 logits x 14 bytes, 0.25 GiB outside PyTorch, 1.7 GiB of CUDA graphs
    for 80 layers) = 57.4 GiB of KV at 2 x 80 x 8 x 128 x 2 = 327,680 bytes a token: 188,000-odd
    tokens, 5 sequences of 32,768. So one GPU is the smallest layout; for 8 sequences TP2 (each GPU
    half the weights and half the KV heads) or PP2 beats two TP1 replicas: 2 x 5 = 10 sequences
    against 18 (TP2 or PP2)."""
    from manifesto.cluster import load_cluster

    (tmp_path / "config.json").write_text(json.dumps(LLAMA_70B_FP8))
    spec = tmp_path / "llama.yaml"
    spec.write_text("release: llama-70b\ntopology: aggregated\nmodel:\n  id: meta-llama/Llama-3.3-70B-Instruct\n"
                    "  label: Llama-3.3-70B\n  image_ref: vllm.standard\n  config_json: config.json\n"
                    "routing: {kind: disabled}\nruntime: {sidecars: []}\nroles:\n  - name: decode\n"
                    "    lws: {size: 1}\n    parallelism: {tp: 1, dp: false, ep: false}\n")
    h200 = [load_cluster(REPO_ROOT / "clusters/example-h200.yaml")]
    layers = 80 * (150_994_944 + 704_643_072 + 16_384) + 8192
    weights = 4_202_692_608 + round(layers * (1 + 4 / (128 * 128)))
    one = _plan(str(spec), h200, max_model_len=32768).proposed[0]
    assert (one.budget.gpus, one.candidate.tp) == (1, 1)
    assert one.fit.weights == weights
    assert one.fit.headroom == sum(b for _, b, _, _ in one.fit.overhead_parts)
    assert one.fit.overhead_parts[0][:2] == ("activation peak", 1024 * 128_256 * 14)
    tokens = (int(int(139.81 * GIB) * 0.92) - weights - one.fit.headroom) // 327_680
    assert one.fit.kv_tokens == tokens and 185_000 < tokens < 190_000 and one.concurrency == 5
    eight = _plan(str(spec), h200, max_model_len=32768, concurrency=8).proposed
    top = {(o.candidate.tp, o.candidate.pp, o.candidate.replicas, o.budget.gpus, o.concurrency) for o in eight[:2]}
    assert top == {(2, 1, 1, 2, 18), (1, 2, 1, 2, 18)}  # PP2 splits layers as TP2 splits heads: the same
    replicas = next(i for i, o in enumerate(eight) if o.candidate.replicas == 2)
    assert (eight[replicas].budget.gpus, eight[replicas].concurrency) == (2, 10) and replicas > 1


def test_hand_arithmetic_deepseek_v3_on_gb200_with_ep():
    """DeepSeek-V3 (FP8, MLA, 256 routed experts) at 32k on GB200. explain's split of its weights
    at TP1: 3.5 GiB embedding and LM head, 14.2 GiB attention and dense layers, 609.1 GiB routed
    experts. A GB200 shows CUDA 184.31 GiB, x 0.92 = 169.6 GiB usable. With EP over 4 ranks
    (tp=1 dp=4) the experts are 152.3 GiB a GPU: 170.0 GiB in all, just over, so 4 GPUs with TP1
    EP4 miss; over 8 ranks they are 76.1 GiB: 93.8 GiB, leaving 169.6 - 93.8 - 7.5 (what vLLM keeps
    back: activations of the 16,384-token profiling run, buffers, NCCL, CUDA graphs) = 68.3 GiB of
    KV at 61 x (512 + 64) x 2 = 70,272 bytes a token: about 1.04 million tokens a rank."""
    from manifesto.cluster import load_cluster

    gb200 = [load_cluster(REPO_ROOT / "clusters/example-gb200.yaml")]
    report = _plan("deepseek-ai/DeepSeek-V3", gb200, max_model_len=32768)
    on = [o for o in report.proposed if o.accelerator == "gb200"]
    assert min(o.budget.gpus for o in on) == 4  # 626.8 GiB over 169.6 GiB GPUs: no fewer than 4
    ep4 = next(o for o in report.refused if (o.accelerator, o.candidate.tp, o.candidate.pp, o.candidate.dp,
                                              o.candidate.ep) == ("gb200", 1, 1, 4, True))
    assert "its weights need 170.0 GiB per GPU" in ep4.error and "allows 169.6 GiB" in ep4.error
    ep8 = next(o for o in on if (o.candidate.tp, o.candidate.pp, o.candidate.dp, o.candidate.ep) == (1, 1, 8, True))
    assert ep8.fit.kv_per_token == 61 * (512 + 64) * 2
    assert abs(ep8.fit.weights / GIB - 93.8) < 0.1
    assert abs(ep8.fit.headroom / GIB - 7.47) < 0.01
    assert abs(ep8.fit.kv_tokens - 68.28 * GIB / 70_272) / ep8.fit.kv_tokens < 0.002
    assert ep8.budget.gpus == 8 and ep8.budget.nodes == 2  # four GPUs per compute tray


@pytest.fixture()
def workspace(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    root.mkdir()
    for name in ("BUILD.yaml", "clusters", "models", "routing"):
        src = REPO_ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
    monkeypatch.chdir(root)
    return root


def test_json_and_markdown_shapes(workspace):
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-30B-A3B", "//clusters::", "--max-model-len", "32768",
                                  "--concurrency", "4", "-o", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert set(data) == {"model", "start", "clusters", "workload", "proposed", "nearest_misses", "refused",
                         "roles", "performance", "disaggregated"}
    assert data["disaggregated"] is None  # prefill/decode sets come with performance (tests/perf/test_plan_perf.py)
    assert data["roles"] == {"names": ["decode"], "replicated": "decode", "note": None}
    assert data["clusters"] == ["example-gb200", "example-gb200-lws", "example-h200", "example-slurm",
                                "example-stateless-b200"]
    assert "No throughput or latency" in data["performance"]
    first = data["proposed"][0]
    assert first["rank"] == 1 and first["performance"] is None
    assert set(first) >= {"cluster", "accelerator", "layout", "gpus", "nodes", "pods", "kv_tokens_per_gpu",
                          "kv_tokens_total", "max_concurrency", "hourly_cost", "headroom"}
    assert all(p["max_concurrency"] >= 4 for p in data["proposed"])
    rc, md, err = cli_in_process("plan", "Qwen/Qwen3-30B-A3B", "-c", "example-h200", "-o", "markdown")
    assert rc == 0, err
    assert md.startswith("### Plan for `Qwen/Qwen3-30B-A3B`")
    header = next(line for line in md.splitlines() if line.startswith("| #"))
    assert header.count("|") == 17 and "| `example-h200` | `h200` |" in md
    assert "No throughput or latency figures" in md


def test_text_names_the_nearest_miss_with_its_arithmetic(workspace):
    rc, out, err = cli_in_process("plan", "deepseek-ai/DeepSeek-V3", "-c", "example-h200", "--max-model-len", "32768")
    assert rc == 0, err
    assert "nearest misses" in out
    miss = next(line for line in out.splitlines() if line.startswith("  example-h200/h200"))
    assert "does not fit: its weights need" in miss and "allows 128.6 GiB" in miss
    assert "No throughput or latency figures" in out


@pytest.mark.integration  # render asks kubectl for a namespace; build forks its workers
def test_write_then_render_and_build(workspace):
    target = "models/qwen/qwen3-32b-planned.yaml"
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--max-model-len", "32768",
                                  "--concurrency", "16", "--pick", "2", "--write", target)
    assert rc == 0, err
    assert "wrote models/qwen/qwen3-32b-planned.yaml" in err and "//models/qwen:qwen3-32b-planned" in err
    text = (workspace / target).read_text()
    assert text.startswith("# Written by `manifesto plan Qwen/Qwen3-32B") and "No throughput or latency" in text
    rc, rendered, err = cli_in_process("render", "manifest", target, "-c", "example-h200")
    assert rc == 0, err
    assert "--max-model-len" in rendered and "32768" in rendered
    rc, out, err = cli_in_process("explain", target, "-c", "example-h200")
    assert rc == 0 and "memory fit" in out
    rc, out, err = cli_in_process("build", "//models/qwen:qwen3-32b-planned")
    assert rc == 0, out + err
    assert "1 rendered" in out + err
    # Never over an existing file without --force; with it, replaced.
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--write", target)
    assert rc == 1 and "exists; pass --force" in err and "Traceback" not in err
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--write", target, "--force")
    assert rc == 0, err


def test_write_stays_in_the_workspace(workspace, tmp_path):
    outside = tmp_path / "outside.yaml"
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-0.6B", "-c", "example-h200", "--write", str(outside))
    assert rc == 1 and "outside the build workspace" in err and not outside.exists()
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-0.6B", "-c", "example-h200", "--write", "../up.yaml")
    assert rc == 1 and "outside the build workspace" in err and not (tmp_path / "up.yaml").exists()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", workspace / "models" / "link")
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-0.6B", "-c", "example-h200", "--write", "models/link/x.yaml")
    assert rc == 1 and "Traceback" not in err and not (tmp_path / "elsewhere" / "x.yaml").exists()
    os.chdir(tmp_path)
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-0.6B", "-c", str(workspace / "clusters/example-h200.yaml"),
                                  "--write", "x.yaml")
    assert rc == 1 and "no" in err and "workspace" in err and not (tmp_path / "x.yaml").exists()


def test_write_refuses_a_layout_another_cluster_target_cannot_build(workspace):
    """b200 has 4 GPUs a node on example-gb200 and 8 on the others: a TP8 b200 spec would fail the
    build on example-gb200, so --write names that cluster instead of writing it."""
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-32B", "-c", "example-stateless-b200", "-o", "json")
    rank = next(p["rank"] for p in json.loads(out)["proposed"] if p["layout"]["tp"] == 8)
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-32B", "-c", "example-stateless-b200", "--pick", str(rank),
                                  "--write", "models/qwen/tp8.yaml")
    assert rc == 1 and "example-gb200" in err and "Traceback" not in err
    assert not (workspace / "models/qwen/tp8.yaml").exists()


@pytest.mark.integration
def test_a_refused_layout_is_refused_by_render_with_the_same_message(workspace):
    from manifesto.cluster import load_cluster

    report = _plan("deepseek-ai/DeepSeek-V3", [load_cluster(c) for c in CLUSTERS], max_model_len=32768)
    miss = report.nearest_misses()[0]
    path = _write_spec(workspace / "models", miss.data, "refused")
    cluster = f"clusters/{miss.cluster}.yaml"
    rc, out, err = cli_in_process("render", "manifest", str(path), "-c", cluster)
    assert rc == 1 and f"roles[0].parallelism: {miss.error}" in err.replace("\nerror: ", "\n")


def test_starting_from_a_spec_keeps_its_settings(workspace):
    rc, out, err = cli_in_process("plan", "models/qwen/h200-aggregated.yaml", "-c", "example-h200", "-o", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["model"] == "Qwen/Qwen3-30B-A3B-Instruct-2507"
    assert {p["kv_cache_dtype"] for p in data["proposed"]} == {"fp8"}  # the spec's own
    assert {p["max_model_len"] for p in data["proposed"]} == {32768}


def test_explain_prints_the_arithmetic_of_the_pick(workspace):
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--max-model-len", "32768",
                                  "--explain")
    assert rc == 0, err
    assert "memory fit      per GPU (tp=1 pp=1 ep=off)" in out and "KV per token    262144 bytes" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["plan", "nobody/NoSuchModel", "-c", "example-h200"], "neither a model id with an architecture record"),
    (["plan", "models/poolside/laguna-S-2.1-NVFP4.yaml", "-c", "example-h200"], "no architecture record"),
    (["plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--max-model-len", "1000000"],
     "exceeds Qwen/Qwen3-32B's max_position_embeddings 40960"),
    (["plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--concurrency", "0"], "0 is not a positive number"),
    (["plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--pick", "999", "--explain"], "--pick 999"),
    (["plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--explain", "-o", "json"], "--explain prints text"),
    (["plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--force"], "--force replaces"),
    (["plan", "Qwen/Qwen3-32B", "//models/qwen:aggregated"], "names no cluster target"),
    (["plan", "models/qwen/aggregated.yaml", "-c", "example-h200", "--topology", "pd"], "plan keeps a spec's roles"),
])
def test_bad_input_is_one_error_without_a_traceback(workspace, argv, message):
    rc, out, err = cli_in_process(*argv)
    assert rc in (1, 2) and message in err, err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error:") or ": error:" in line]) == 1


def test_pd_says_both_roles_get_the_same_layout(workspace):
    """--topology pd lays prefill and decode out alike; text, markdown and JSON say so, and the
    replicas the concurrency needs are decode's alone."""
    argv = ("plan", "Qwen/Qwen3-32B", "-c", "example-h200", "--topology", "pd", "--max-model-len", "32768",
            "--concurrency", "16")
    rc, out, err = cli_in_process(*argv)
    assert rc == 0, err
    assert "Roles prefill, decode get the same layout" in out and "not planned role by role" in out
    rc, md, err = cli_in_process(*argv, "-o", "markdown")
    assert rc == 0 and "Roles `prefill`, `decode` get the same layout" in md
    rc, js, err = cli_in_process(*argv, "-o", "json")
    data = json.loads(js)
    assert data["roles"]["names"] == ["prefill", "decode"] and data["roles"]["replicated"] == "decode"
    assert "not planned role by role" in data["roles"]["note"]
    report = _plan("Qwen/Qwen3-32B", [c for c in _clusters() if c.name == "example-h200"], max_model_len=32768,
                   concurrency=16, topology="pd")
    one = next(o for o in report.proposed if o.candidate.tp * o.candidate.pp == 1)  # 7 sequences a GPU: 3 replicas
    roles = {r["name"]: (r["parallelism"], r["lws"]) for r in one.data["roles"]}
    assert roles["prefill"][0] == roles["decode"][0]
    assert (roles["prefill"][1]["replicas"], roles["decode"][1]["replicas"]) == (1, 3)
    assert one.budget.gpus == 4


@pytest.mark.integration
def test_pd_topology_plans_both_roles(workspace):
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-0.6B", "-c", "example-h200", "--topology", "pd",
                                  "--max-model-len", "8192", "--write", "models/qwen/pd-planned.yaml")
    assert rc == 0, err
    rc, rendered, err = cli_in_process("render", "manifest", "models/qwen/pd-planned.yaml", "-c", "example-h200")
    assert rc == 0, err
    assert "prefill" in rendered and "decode" in rendered and "NixlConnector" in rendered


def test_the_written_header_cannot_be_broken_by_a_name(workspace):
    """The comment quotes the command; a line break in a path stays inside the comment."""
    from manifesto import capacity
    from manifesto.cluster import load_cluster
    from manifesto.load.yamlio import parse_yaml

    report = _plan("Qwen/Qwen3-0.6B", [load_cluster("clusters/example-h200.yaml")], max_model_len=4096)
    text = capacity.spec_text(report, report.proposed[0], "manifesto plan x --write 'a\nrelease: evil'")
    data, _ = parse_yaml(text, "written")
    assert data["release"] != "evil" and data == report.proposed[0].data


def test_tp_crosses_nodes_only_in_an_nvlink_domain():
    """GB200 trays (4 GPUs) share a rack-wide NVLink domain: TP may span them. An H200 node's
    8 GPUs are the limit there, and so are a B200 node's 4 on the same GB200 cluster."""
    report = _plan("deepseek-ai/DeepSeek-V3", max_model_len=32768)
    tp = {}
    for o in report.proposed + report.refused:
        key = (o.cluster, o.accelerator)
        tp[key] = max(tp.get(key, 0), o.candidate.tp)
    assert tp[("example-gb200", "gb200")] == 64 and tp[("example-gb200", "b200")] == 4
    assert tp[("example-h200", "h200")] == 8 and tp[("example-stateless-b200", "b200")] == 8


def test_without_a_workspace_the_clusters_must_be_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-0.6B")
    assert rc == 1 and "name the clusters with --cluster" in err and "Traceback" not in err
    rc, out, err = cli_in_process("plan", "Qwen/Qwen3-0.6B", "-c", str(REPO_ROOT / "clusters/example-h200.yaml"),
                                  "-o", "json")
    assert rc == 0 and json.loads(out)["clusters"] == ["example-h200"]


def test_nothing_fits_prints_the_misses_and_exits_1(workspace):
    small = workspace / "clusters" / "example-small.yaml"
    small.write_text((workspace / "clusters/example-h200.yaml").read_text()
                     .replace("name: example-h200", "name: example-small").replace("memory: 141G", "memory: 8Gi"))
    rc, out, err = cli_in_process("plan", "deepseek-ai/DeepSeek-V3", "//clusters:example-small",
                                  "--max-model-len", "32768")
    assert rc == 1 and "no layout fits" in out and "Traceback" not in err
    miss = next(line for line in out.splitlines() if line.startswith("  example-small/h200"))
    assert "(64 GPU(s))" in miss and "does not fit: its weights need" in miss
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        "error: no layout of deepseek-ai/DeepSeek-V3 fits on example-small (the nearest misses above say why)"]
    rc, out, err = cli_in_process("plan", "deepseek-ai/DeepSeek-V3", "//clusters:example-small", "--write",
                                  "models/x.yaml")
    assert rc == 1 and "so there is none to write" in err and not (workspace / "models/x.yaml").exists()


def test_a_spec_without_a_length_needs_max_model_len(workspace):
    spec = workspace / "models/qwen/fit-memory.yaml"
    spec.write_text((workspace / "models/qwen/aggregated.yaml").read_text().replace("max_model_len: 32768",
                                                                                    "max_model_len: -1"))
    rc, out, err = cli_in_process("plan", str(spec), "-c", "example-h200")
    assert rc == 1 and "give --max-model-len" in err and "Traceback" not in err
    rc, out, err = cli_in_process("plan", str(spec), "-c", "example-h200", "--max-model-len", "8192", "-o", "json")
    assert rc == 0 and {p["max_model_len"] for p in json.loads(out)["proposed"]} == {8192}
