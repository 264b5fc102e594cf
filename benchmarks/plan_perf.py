"""The roofline (manifesto.perf.roofline) against AIConfigurator on every layout its tables cover.

uv run --extra test python benchmarks/plan_perf.py [--isl N] [--osl N] [--concurrency N]

Plans Qwen3-32B (dense), Qwen3-30B-A3B (MoE) and DeepSeek-V3 (MLA) on H100 (a profile made
here), H200 and B200 (the example clusters) with performance, and for each layout AIConfigurator
estimated, computes the roofline for the same layout and batch. Prints the signed error
(roofline / AIConfigurator - 1) of ITL, TTFT and output tokens/s per GPU: median of the
absolute errors, worst, and the median signed error (the bias), per model and in all.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

H100 = """\
name: bench-h100
accelerators:
  default: h100
  profiles:
    h100:
      gpus_per_node: 8
      part: H100-SXM5-80GB
      allocation:
        extended_resource:
          resource_name: nvidia.com/gpu
      gpu_arch: h100
"""
MODELS = ("Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B", "deepseek-ai/DeepSeek-V3")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--isl", type=int, default=2048)
    ap.add_argument("--osl", type=int, default=512)
    ap.add_argument("--concurrency", type=int, default=64)
    opts = ap.parse_args()
    from manifesto import capacity
    from manifesto.perf import engine as perf
    from manifesto.cluster import load_cluster
    from manifesto.resolve.accelerator import project_accelerator
    from manifesto.resolve.options import Options

    with tempfile.TemporaryDirectory() as tmp:
        h100 = Path(tmp) / "bench-h100.yaml"
        h100.write_text(H100)
        clusters = [load_cluster(h100), load_cluster(REPO / "clusters/example-h200.yaml"),
                    load_cluster(REPO / "clusters/example-stateless-b200.yaml")]
    engine = perf.Engine()
    work = perf.PerfWorkload(opts.isl, opts.osl, opts.concurrency)
    every: dict[str, list[float]] = {"itl": [], "ttft": [], "gpu": []}
    print(f"isl {opts.isl}, osl {opts.osl}, concurrency {opts.concurrency}; aiconfigurator-core {engine.version}")
    for model in MODELS:
        start = capacity.start_from(model)
        arch, _ = capacity._architecture(start, None)
        planner = perf.Planner(engine, work, model)
        report = capacity.plan_model(start, clusters, capacity.Demand(opts.isl + opts.osl, opts.concurrency),
                                     Options(user="plan"), performance=planner)
        errs: dict[str, list[float]] = {"itl": [], "ttft": [], "gpu": []}
        for o in report.proposed:
            p = o.performance
            if p.kind != "aiconfigurator":
                continue
            cluster = next(c for c in clusters if c.name == o.cluster)
            accel = project_accelerator(cluster.profile, o.accelerator)
            part = perf.part_of(cluster, o.accelerator, accel.gpu_arch)
            roof = perf.roofline(arch, part, o.candidate, o.fit, p.batch, accel.gpus_per_node, False, work)
            roof.scale(o.candidate.replicas, o.budget.gpus, None, work)
            errs["itl"].append(roof.itl_ms / p.itl_ms - 1)
            errs["ttft"].append(roof.ttft_ms / p.ttft_ms - 1)
            errs["gpu"].append(roof.gpu_tokens_s / p.gpu_tokens_s - 1)
        _print(model, errs)
        for k in every:
            every[k] += errs[k]
    _print("all", every)


def _print(name: str, errs: dict[str, list[float]]) -> None:
    n = len(errs["itl"])
    parts = []
    for k, label in (("itl", "ITL"), ("ttft", "TTFT"), ("gpu", "tok/s/GPU")):
        a = [abs(e) for e in errs[k]] or [0.0]
        parts.append(f"{label} median {statistics.median(a) * 100:.0f}% worst {max(a) * 100:.0f}% "
                     f"bias {statistics.median(errs[k] or [0.0]) * 100:+.0f}%")
    print(f"{name} ({n} layouts): " + "; ".join(parts))


if __name__ == "__main__":
    main()
