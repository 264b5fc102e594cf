"""A team's build with a shared remote cache, as ratios to ``python -c pass``.

    uv run --extra test python benchmarks/remote.py [--copies 40] [--runs N]

Starts nginx with WebDAV PUT on 127.0.0.1 (the Bazel HTTP cache layout; Debian's nginx, as
``.ci/run`` installs it), then times on the bundled tree plus N copies of every qwen spec
(40: 495 pairs): a cold build that fills the cache, a clean checkout (committed out/, no
out/.cache) building against the warm cache, that checkout's no-op build, and the cold
build without a cache for comparison.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import RUNS, baseline, report, samples
from build import _argv, _checkout, _copies_tree, _runner

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from servers import nginx  # noqa: E402  (the tests' nginx harness)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40, help="copies of every qwen spec (40: 495 pairs)")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"timed runs of the no-op build (default {RUNS})")
    args = parser.parse_args()
    if nginx.nginx_binary() is None:
        sys.exit("remote.py: nginx is not installed (apt-get install nginx-light)")
    with tempfile.TemporaryDirectory(prefix="manifesto-remote-") as tmp:
        tmp = Path(tmp)
        template = tmp / "template"
        env = _copies_tree(template, args.copies)
        server = nginx.start(tmp / "server")
        try:
            env = {**env, "MANIFESTO_REMOTE_CACHE": server.url}
            base = baseline(args.runs)
            report("python -c pass (baseline)", base, base)
            cold = _checkout(template, "cold")
            report("cold build, no cache", _runner(cold, {k: v for k, v in env.items()
                                                           if k != "MANIFESTO_REMOTE_CACHE"})("build", "//::"), base)
            filler = _checkout(template, "filler")
            report("cold build, filling the cache", _runner(filler, env)("build", "//::"), base)
            shutil.copytree(filler / "out", template / "out", ignore=shutil.ignore_patterns(".cache"))
            clean = _checkout(template, "clean")  # committed out/, no out/.cache: a fresh CI runner
            warm = _runner(clean, env)
            report("clean checkout, warm remote", warm("build", "//::"), base)
            proc = subprocess.run(_argv("build", "//::", "--output", "json"), cwd=clean,
                                  env={**__import__("os").environ, **env}, capture_output=True, text=True)
            rows = json.loads(proc.stdout)["pairs"]
            print(f"{'  pairs':<36} {len(rows):8d}  ({sum(r['status'] == 'rendered' for r in rows)} rendered "
                  "on the no-op run)")
            times = samples(_argv("build", "//::"), args.runs, env=env, cwd=clean)
            report("no-op build (remote configured)", statistics.median(times), base, 4.0, spread=times)
            print(f"{'  cache':<36} {sum(1 for _ in (server.root / 'ac').iterdir()):8d} action entries, "
                  f"{sum(1 for _ in (server.root / 'cas').iterdir())} blobs")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
