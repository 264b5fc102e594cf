"""Time of ``manifesto plan`` for one model over the example clusters (issue 30: under 1 s).

uv run python benchmarks/plan.py [--runs N] [--model ID] [--perf]

Runs ``manifesto plan MODEL //clusters::`` as a whole process in the bundled workspace (the
search resolves every candidate layout through the renderer's own resolution) and prints the
median, best and worst wall time and the CPU seconds, with the bare-interpreter baseline.
With ``--perf`` (the perf extra installed: ``uv run --extra perf``) plan also estimates every
layout at 4096 input and 1024 output tokens, 64 in flight (issue 40: under 15 s).
Measured with byte-code caches, as an installed package runs (the sessions' environment sets
``PYTHONDONTWRITEBYTECODE=1``, which would add the compilation of every module to each run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from _timing import baseline, cpu_samples

REPO = Path(__file__).resolve().parent.parent
BUDGET_S = 1.0  # issue 30
PERF_BUDGET_S = 15.0  # issue 40


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--model", default="deepseek-ai/DeepSeek-V3")
    ap.add_argument("--perf", action="store_true", help="plan with performance figures (--isl 4096 --osl 1024 "
                    "--concurrency 64)")
    opts = ap.parse_args()
    base = baseline()
    argv = [sys.executable, "-m", "manifesto", "plan", opts.model, "//clusters::", "--max-model-len", "32768",
            "-o", "json"]
    if opts.perf:
        argv += ["--isl", "4096", "--osl", "1024", "--concurrency", "64"]
    budget = PERF_BUDGET_S if opts.perf else BUDGET_S
    clusters = len(list((REPO / "clusters").glob("*.yaml")))
    wall, cpu = cpu_samples(argv, opts.runs, env={"PYTHONDONTWRITEBYTECODE": ""}, cwd=REPO)
    print(f"python -c pass: {base * 1000:.0f} ms")
    what = " with performance" if opts.perf else ""
    print(f"manifesto plan {opts.model} //clusters::{what} ({clusters} clusters): median {statistics.median(wall):.2f} s wall "
          f"(best {min(wall):.2f}, worst {max(wall):.2f}), {statistics.median(cpu):.2f} s CPU; budget {budget:g} s; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
