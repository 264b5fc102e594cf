"""Start-up time of ``manifesto --help`` and of one completion TAB against the 3x budget.

uv run python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _timing import RUNS, cpu_baseline, cpu_samples, report_cpu

BUDGET = 3.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs",
        type=int,
        default=RUNS,
        help=f"timed runs per command (default {RUNS})",
    )
    runs = parser.parse_args().runs

    base = cpu_baseline(runs)
    report_cpu("python -c pass (baseline)", [base[0]], [base[1]], base)
    report_cpu("python -m manifesto --help", *cpu_samples([sys.executable, "-m", "manifesto", "--help"], runs),
               base, BUDGET)
    # One TAB: the completion scripts run `manifesto __complete SHELL -- WORDS`.
    for what, line in (("command names", "manifesto ren"),
                       ("catalog names", "manifesto render manifest qw"),
                       ("build addresses", "manifesto build //models/q")):
        argv = [sys.executable, "-m", "manifesto", "__complete", "bash", "--", line]
        report_cpu(f"__complete ({what})", *cpu_samples(argv, runs), base, BUDGET)
    # The console script of the venv running this benchmark (.venv/bin/manifesto).
    script = Path(sys.executable).parent / "manifesto"
    if script.is_file():
        report_cpu("manifesto --help (console script)", *cpu_samples([str(script), "--help"], runs), base, BUDGET)
    else:
        print(f"{script} not found: console script not measured")


if __name__ == "__main__":
    main()
