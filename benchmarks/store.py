"""The build's store on a synthetic workspace of about 10,000 pairs (issue 26): its size beside
the artifacts', the peak memory and time of a no-op build, and ``clean --gc``.

    uv run python benchmarks/store.py [--pairs 10000] [--jobs 2] [--edits 1000]

The tree is ``build.py``'s real one (variants of every bundled spec against the bundled
Kubernetes clusters). Prints, after a cold ``build //::``: the bytes of out/'s artifacts and
of the store (``out/.cache/tasks``: apparent size, and the disk blocks its files take), by
kind; the peak RSS and CPU of no-op builds; then, after ``--edits`` specs were edited and
built again (their old entries are stale), ``clean --gc`` with a bound just over what the
last build uses: the bytes before and after, and whether every entry the last build uses
(each pair's result, its products and their texts) is still there and reads back. Nothing
here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from build import _argv, _real_tree

PEAK = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def main() -> None:
    args = _parser().parse_args()
    with tempfile.TemporaryDirectory(prefix="manifesto-store-") as tmp:
        root = Path(tmp) / "tree"
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "", **_real_tree(root, args.pairs)}
        started = time.perf_counter()
        rows = _build(root, env, "--jobs", str(args.jobs))
        rendered = sum(r["status"] == "rendered" for r in rows)
        print(f"{len(rows)} pairs ({rendered} render an artifact); cold build --jobs {args.jobs}: "
              f"{time.perf_counter() - started:.1f} s wall; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        artifacts = _artifact_bytes(root / "out")
        _store_lines(root, artifacts)
        _noop_lines(root, env, args.runs)
        _, _, kinds = _usage(root)
        print("    after the no-op builds: " + ", ".join(f"{kind or 'other'} {count}" for kind, (count, _) in
                                                   sorted(kinds.items(), key=str)))
        _gc_lines(root, env, args.edits, args.jobs)


def _build(root: Path, env: dict, *extra: str) -> list[dict]:
    proc = subprocess.run(_argv("build", "//::", "-q", "--output", "json", *extra), cwd=root, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"build exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)["pairs"]


def _artifact_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and ".cache" not in p.relative_to(out).parts)


def _store(root: Path):
    from manifesto.store import Store

    return Store(str(root / "out" / ".cache" / "tasks"))


def _usage(root: Path) -> tuple[int, int, dict]:
    """Apparent bytes, allocated bytes and ``{kind: (files, bytes)}`` of the store."""
    store = _store(root)
    files = store.scan()
    kinds: dict = {}
    blocks = 0
    for f in files:
        count, size = kinds.get(f.kind, (0, 0))
        kinds[f.kind] = (count + 1, size + f.size)
        blocks += os.lstat(store.path(f.key)).st_blocks * 512
    return sum(f.size for f in files), blocks, kinds


def _mib(n: float) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def _store_lines(root: Path, artifacts: int) -> None:
    size, blocks, kinds = _usage(root)
    print(f"artifacts in out/: {_mib(artifacts)}")
    print(f"store: {_mib(size)} = {size / artifacts:.2f}x the artifacts (budget 1.5x); on disk {_mib(blocks)} "
          f"= {blocks / artifacts:.2f}x (4 KiB blocks)")
    for kind, (count, nbytes) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        print(f"    {kind or 'other':<10} {count:>7} files {_mib(nbytes):>12}")


def _noop_lines(root: Path, env: dict, runs: int) -> None:
    peaks, walls, cpus = [], [], []
    for _ in range(runs):
        before = _children_cpu()
        start = time.perf_counter()
        peak = subprocess.run([sys.executable, "-c", PEAK, *_argv("build", "//::")], cwd=root, env=env,
                              capture_output=True, text=True, check=True).stdout
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - before)
        peaks.append(int(peak) / 1024)
    print(f"no-op build //::: peak RSS {statistics.median(peaks):.0f} MiB (range {min(peaks):.0f}-{max(peaks):.0f}; "
          f"budget 150 MiB), wall {statistics.median(walls):.2f} s, CPU {statistics.median(cpus):.2f} s "
          f"(medians of {runs})")


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _gc_lines(root: Path, env: dict, edits: int, jobs: int) -> None:
    variants = sorted((root / "models" / "variants").glob("*.yaml"))[:edits]
    for spec in variants:  # a new release name: new Plans and texts, the old entries stale
        spec.write_text(spec.read_text().replace("release: bench-", "release: edited-"))
    time.sleep(0.05)
    rows = _build(root, env, "--jobs", str(jobs))
    print(f"after editing {len(variants)} specs: {sum(r['status'] == 'rendered' for r in rows)} pairs re-rendered")
    before, _, kinds = _usage(root)
    print("    before: " + ", ".join(f"{kind or 'other'} {count}" for kind, (count, _) in sorted(kinds.items(), key=str)))
    live = _live(root)
    bound = int(live[1] * 1.05 / 0.8)  # pruned to 80% of it: just over what the last build uses
    proc = subprocess.run(_argv("clean", "--gc", "-o", "json"), cwd=root, capture_output=True, text=True,
                          env={**env, "MANIFESTO_STORE_LIMIT": str(bound)}, check=True)
    done = json.loads(proc.stdout)
    after, _, kinds = _usage(root)
    print("    after:  " + ", ".join(f"{kind or 'other'} {count}" for kind, (count, _) in sorted(kinds.items(), key=str)))
    kept = _live(root)
    print(f"clean --gc, bound {_mib(bound)}: {_mib(before)} -> {_mib(after)} ({done['removed']} files deleted); "
          f"live entries {live[0]} ({_mib(live[1])}) before, {kept[0]} read back after; within the bound: "
          f"{after <= bound}")


def _live(root: Path) -> tuple[int, int]:
    """How many entries the last build uses read back whole (each pair's result and its
    products, texts included), and the bytes of those entries and texts."""
    from manifesto.build_graph.state import load_state
    from manifesto.tasks import entries  # noqa: F401  (the codecs)

    store = _store(root)
    state = load_state(str(root / "out" / ".cache" / "state"), print)
    sizes = {f.key: f.size for f in store.scan()}
    found: set = set()
    count = 0
    for rec in state.pairs.values():
        result = store.get(rec.key)
        for key in [rec.key, *getattr(result, "products", ())]:
            entry = store.get(key)
            if entry is not None:
                count += key not in found
                found.update(k for k in (key, getattr(entry, "text_digest", "")) if k in sizes)
    return count, sum(sizes[k] for k in found)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10_000, help="pairs in the synthetic tree (default 10000)")
    parser.add_argument("--jobs", type=int, default=2, help="--jobs of the builds (default 2)")
    parser.add_argument("--runs", type=int, default=5, help="no-op builds measured (default 5)")
    parser.add_argument("--edits", type=int, default=1000, help="specs edited before clean --gc (default 1000)")
    return parser


if __name__ == "__main__":
    main()
