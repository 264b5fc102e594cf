"""``manifesto diff --base HEAD`` on a clean tree and after one change, against its 0.5 s budget.

uv run python benchmarks/review.py [--runs N]

Runs in a clone of this checkout's HEAD (out/ committed, nothing changed), so the figure does
not depend on the state of the checkout: the text report ("no artifact changed"), the JSON
report (which always carries the totals per cluster, so it reads every artifact), and the
text report after one spec changed and was built (the change plus the totals). The budget is
on the clean tree's text report, in wall seconds (issue 41). Nothing asserts on time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import RUNS, cpu_baseline, cpu_samples, report_cpu

ROOT = Path(__file__).resolve().parent.parent
BUDGET_SECONDS = 0.5
GIT = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help=f"timed runs per command (default {RUNS})")
    runs = parser.parse_args().runs
    script = Path(sys.executable).parent / "manifesto"
    manifesto = [str(script)] if script.is_file() else [sys.executable, "-m", "manifesto"]
    base = cpu_baseline(runs)
    report_cpu("python -c pass (baseline)", [base[0]], [base[1]], base)
    with tempfile.TemporaryDirectory(prefix="manifesto-review-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, env=GIT)
        env = {"XDG_CACHE_HOME": str(Path(tmp) / "cache"), **GIT}
        for name, argv in (("diff --base HEAD (clean tree)", ["diff", "--base", "HEAD"]),
                           ("diff --base HEAD -o json (clean)", ["diff", "--base", "HEAD", "-o", "json"])):
            walls, cpus = cpu_samples([*manifesto, *argv], runs, env=env, cwd=clone)
            report_cpu(name, walls, cpus, base)
            if "json" not in name:
                wall = statistics.median(walls)
                print(f"{'':<36} budget {BUDGET_SECONDS:g} s wall: "
                      f"{'ok' if wall <= BUDGET_SECONDS else 'OVER BUDGET'} ({wall:.3f} s)", flush=True)
        spec = clone / "models/qwen/aggregated.yaml"
        spec.write_text(spec.read_text().replace("max_model_len: 32768", "max_model_len: 16384", 1))
        subprocess.run([*manifesto, "build", "-q", "//models/qwen:aggregated"], check=True, cwd=clone,
                       env={**os.environ, **env}, stdout=subprocess.DEVNULL)
        walls, cpus = cpu_samples([*manifesto, "diff", "--base", "HEAD"], runs, env=env, cwd=clone)
        report_cpu("diff --base HEAD (one spec changed)", walls, cpus, base)


if __name__ == "__main__":
    main()
