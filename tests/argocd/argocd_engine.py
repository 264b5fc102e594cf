"""Argo CD's own health-check engine for the tests: ``tools/argocd-lua``, a Go program on
gopher-lua v1.1.2 that builds the Lua state as Argo CD v3.5.1's ``util/lua`` does and reads
``argocd-cm`` as its ``util/settings`` does (see its main.go).

Built once per test session with ``go build`` into a cache folder outside the repository
(``$XDG_CACHE_HOME/llm-manifesto-tests/argocd-lua/<hash of its sources>``), or taken from
``$ARGOCD_LUA`` (the path of a binary ``.ci/run`` built). Without Go the tests that need it
skip; under ``CI=true`` they fail.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import kit

__all__ = ["Engine", "engine"]

SOURCE = kit.REPO_ROOT / "tools" / "argocd-lua"
# Read when this module is imported, before the per-test environment (its own
# XDG_CACHE_HOME, which Go would take for an empty build cache) is set up.
_ENV = dict(os.environ)
_CACHE = Path(_ENV.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "llm-manifesto-tests" / "argocd-lua"


class Engine:
    """One built harness binary."""

    def __init__(self, binary: Path):
        self.binary = binary

    def run(self, requests: list[dict], tz: str = "UTC") -> list[dict]:
        """Each request's answer (``main.go``: status and message, ``error``, or ``none``),
        with the local time zone ``tz``."""
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in requests)
        env = _ENV | {"TZ": tz}
        proc = subprocess.run([str(self.binary), "eval"], input=text, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        answers = [json.loads(line) for line in proc.stdout.splitlines()]
        assert len(answers) == len(requests), proc.stdout
        return answers

    def script(self, script: str, obj: dict, open_libs: bool, tz: str = "UTC") -> dict:
        return self.run([{"script": script, "openLibs": open_libs, "object": obj}], tz)[0]


def _digest() -> str:
    h = hashlib.sha256()
    for path in sorted(SOURCE.iterdir()):
        if path.is_file():
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


_built: Engine | None = None


def engine() -> Engine:
    """The harness, built on first use (skips without Go; fails under ``CI=true``)."""
    global _built
    if _built is not None:
        return _built
    given = _ENV.get("ARGOCD_LUA")
    if given:
        _built = Engine(Path(given))
        return _built
    go = shutil.which("go", path=_ENV.get("PATH")) or next(
        (p for p in ("/usr/local/go/bin/go",) if os.access(p, os.X_OK)), None)
    if go is None:
        kit.unavailable("Go is not installed (needed to build tools/argocd-lua)")
    folder = _CACHE / _digest()
    binary = folder / "argocd-lua"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:  # xdist workers build it once between them
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            tmp = folder / f"argocd-lua.{os.getpid()}"
            proc = subprocess.run([go, "build", "-trimpath", "-buildvcs=false", "-o", str(tmp), "."], cwd=SOURCE,
                                  capture_output=True, text=True, env=_ENV)
            if proc.returncode != 0:
                raise RuntimeError(f"go build tools/argocd-lua failed:\n{proc.stderr}")
            tmp.replace(binary)
    _built = Engine(binary)
    return _built
