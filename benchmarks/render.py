"""Render time of the DeepSeek P/D example, in-process and as one CLI process.

uv run python benchmarks/render.py [--runs N] [--inproc-runs N]

(a) In-process: spec and cluster are loaded once, then ``resolve + render`` (the public
    ``manifesto.render.render``: the pair's RENDER task, ``manifesto.tasks.runner.run``) is
    timed; median against the 4 ms budget.
(b) One ``manifesto render manifest`` process, as a ratio to ``python3 -c pass``: cold
    (the store off; budget 10x, issue 15) and warm (a repeat of the same render, served
    from the store; budget 4x), each as the median with the best and worst run; and the
    floor under the cold figure: a process that only imports msgspec and ruamel.yaml, which
    a cold render needs (the Plan, YAML with positions; valid inputs need no pydantic-core).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from _timing import RUNS, baseline, cpu_baseline, cpu_samples, report, report_cpu

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "models" / "deepseek-v4" / "1P-EP8-1D-EP8.yaml"
CLUSTER = REPO / "clusters" / "example-gb200.yaml"
INPROC_BUDGET_MS = 4.0  # ARCHITECTURE.md: an in-process render of a large P/D spec
PROCESS_BUDGET = 4.0  # ARCHITECTURE.md: one render manifest process with a warm cache
COLD_BUDGET = 10.0  # ARCHITECTURE.md and issue 15: a cold process
#: What a cold render cannot do without: the libraries its loading and its Plan are made of.
FLOOR = "import msgspec, ruamel.yaml"


def inproc(runs: int) -> float:
    """Median seconds of resolve + render on preloaded Spec/Cluster objects."""
    from manifesto.cluster import load_cluster
    from manifesto.render import render
    from manifesto.spec import load_spec

    cluster = load_cluster(CLUSTER)
    spec = load_spec(MODEL, cluster)
    render(spec, user="bench", namespace="bench")  # warm-up: imports and caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        render(spec, user="bench", namespace="bench")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help=f"process runs (default {RUNS})")
    parser.add_argument("--inproc-runs", type=int, default=50, help="in-process runs (default 50)")
    args = parser.parse_args()

    seconds = inproc(args.inproc_runs)
    ms = seconds * 1000
    verdict = "ok" if ms <= INPROC_BUDGET_MS else "OVER BUDGET"
    print(f"{'resolve + render (in-process)':<36} {ms:8.2f} ms  "
          f"(budget {INPROC_BUDGET_MS:g} ms: {verdict})", flush=True)

    base = baseline(args.runs)
    report("python -c pass (baseline)", base, base)
    argv = [sys.executable, "-m", "manifesto", "render", "manifest", str(MODEL),
            "--cluster", str(CLUSTER), "--user", "bench", "--namespace", "bench"]
    import os
    import tempfile

    cpu_base = cpu_baseline(args.runs)
    # The floor under a cold render: importing the two libraries it needs, nothing of ours.
    report_cpu(f"floor: python -c '{FLOOR}'", *cpu_samples([sys.executable, "-c", FLOOR], args.runs), cpu_base,
               COLD_BUDGET)
    cold = {**os.environ, "MANIFESTO_NO_CACHE": "1"}
    report_cpu("render manifest, cold (no cache)", *cpu_samples(argv, args.runs, env=cold), cpu_base, COLD_BUDGET)
    with tempfile.TemporaryDirectory() as cache:
        warm = {**os.environ, "XDG_CACHE_HOME": cache}
        warm.pop("MANIFESTO_NO_CACHE", None)
        report_cpu("render manifest, warm (the store)", *cpu_samples(argv, args.runs, env=warm), cpu_base,
                   PROCESS_BUDGET)
    # An in-process ratio to the interpreter start, for comparison with the wording.
    print(f"{'in-process render / python -c pass':<36} {seconds / base:8.2f}x", flush=True)


if __name__ == "__main__":
    main()
