"""Wall-clock timing of whole processes, reported as ratios to a bare interpreter start.

    from _timing import baseline, measure, report

    base = baseline()
    seconds = measure([sys.executable, "-m", "manifesto", "--help"])
    report("manifesto --help", seconds, base, budget=3)

The budgets (ARCHITECTURE.md, "Performance budget") are ratios to a bare
``python3 -c pass`` on the same machine, so every figure is printed as one; the
baseline uses the interpreter that runs the benchmark. Nothing asserts on time.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

__all__ = ["RUNS", "baseline", "measure", "report", "samples", "cpu_samples", "cpu_baseline", "report_cpu"]

RUNS = 15


def measure(
    argv: Sequence[str],
    runs: int = RUNS,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike | None = None,
) -> float:
    """Median wall time in seconds of ``runs`` runs of ``argv``, after one warm-up run.

    Output is discarded; a non-zero exit raises, since its time would mean nothing.
    """
    return statistics.median(samples(argv, runs, env=env, cwd=cwd))


def samples(
    argv: Sequence[str],
    runs: int = RUNS,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike | None = None,
) -> list[float]:
    """The wall times in seconds of ``runs`` runs of ``argv``, after one warm-up run."""
    return cpu_samples(argv, runs, env=env, cwd=cwd)[0]


def cpu_samples(
    argv: Sequence[str],
    runs: int = RUNS,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike | None = None,
) -> tuple[list[float], list[float]]:
    """(wall seconds, CPU seconds) of ``runs`` runs of ``argv``, after one warm-up run. CPU is
    user + system time of the process and its children (``resource.getrusage``): on a loaded
    machine it barely moves while the wall time follows the neighbours."""
    import resource

    env = {**os.environ, **env} if env is not None else None
    times, cpus = [], []
    for i in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            raise RuntimeError(
                f"{' '.join(map(str, argv))} exited {proc.returncode}:\n"
                f"{proc.stderr.decode(errors='replace')}"
            )
        if i:  # the first run only warms the OS caches
            times.append(elapsed)
            cpus.append(cpu)
    return times, cpus


def cpu_baseline(runs: int = RUNS) -> tuple[float, float]:
    """Median (wall, CPU) seconds of a bare ``python -c pass`` with this interpreter."""
    walls, cpus = cpu_samples([sys.executable, "-c", "pass"], runs)
    return statistics.median(walls), statistics.median(cpus)


def report_cpu(name: str, walls: Sequence[float], cpus: Sequence[float], base: tuple[float, float],
               budget: float | None = None) -> None:
    """One line with the median wall and CPU time of a command, each as a ratio to the
    baseline's (``cpu_baseline``); the verdict is on the CPU ratio, the steadier one."""
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    line = (f"{name:<36} wall {wall * 1000:7.1f} ms {wall / base[0]:5.2f}x"
            f"  cpu {cpu * 1000:7.1f} ms {cpu / base[1]:5.2f}x [{min(cpus) / base[1]:.2f}-{max(cpus) / base[1]:.2f}x]")
    if budget is not None:
        line += f"  (budget {budget:g}x: {'ok' if cpu / base[1] <= budget else 'OVER BUDGET'} on CPU)"
    print(line, flush=True)


def baseline(runs: int = RUNS) -> float:
    """Median wall time of a bare ``python -c pass`` with this interpreter."""
    return measure([sys.executable, "-c", "pass"], runs)


def report(name: str, seconds: float, base: float, budget: float | None = None,
           spread: Sequence[float] | None = None) -> None:
    """Print one line: time, ratio to the baseline and, when given, the budget; with
    ``spread`` (all samples) also the best and the worst run as ratios."""
    ratio = seconds / base
    line = f"{name:<36} {seconds * 1000:8.1f} ms  {ratio:5.2f}x"
    if spread:
        line += f"  [best {min(spread) / base:.2f}x, worst {max(spread) / base:.2f}x]"
    if budget is not None:
        verdict = "ok" if ratio <= budget else "OVER BUDGET"
        line += f"  (budget {budget:g}x: {verdict})"
    print(line, flush=True)
