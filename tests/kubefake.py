"""Shared harness for tests that drive kubectl-using commands against tests/fake_kubectl.py.

``install`` puts a fake ``kubectl`` alone on PATH (the rest of the environment is
already isolated by conftest's ``isolated_env``); ``FakeCluster``
reads the fake's object state and call log and runs CLI commands in-process.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Callable

FAKE = Path(__file__).resolve().parent / "fake_kubectl.py"
TOKEN = "hf_SeCrEt_token_123"


def fake_kubectl(tmp_path: Path, script: str | None = None, bin_name: str = "bin") -> tuple[Path, Path]:
    """(bin dir holding ``script``, default the fake, as ``kubectl``; an empty state dir) for
    tests that run kubectl in subprocesses: put the bin dir on PATH, the state in FAKE_KUBE_DIR."""
    bin_dir = tmp_path / bin_name
    bin_dir.mkdir()
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(f"#!{sys.executable}\n" + (FAKE.read_text() if script is None else script))
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IEXEC)
    state = tmp_path / "kube"
    state.mkdir()
    return bin_dir, state


def install(tmp_path: Path, monkeypatch, script: str) -> Path:
    """Write ``script`` (Python source) as ``kubectl`` on a PATH of its own; returns the state dir."""
    bin_dir, state = fake_kubectl(tmp_path, script)
    monkeypatch.setenv("PATH", str(bin_dir))  # no fzf: the picker falls back to a numbered prompt
    monkeypatch.setenv("FAKE_KUBE_DIR", str(state))
    monkeypatch.setenv("FAKE_KUBE_LOG_STDIN", "1")  # the tests check what was sent over stdin
    monkeypatch.setenv("MANIFESTO_NO_CACHE", "1")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.chdir(tmp_path)
    return state


class FakeCluster:
    def __init__(self, root: Path, capsys, main: Callable[[list[str]], int]) -> None:
        self.dir = root
        self.capsys = capsys
        self.main = main

    @property
    def state(self) -> dict:
        path = self.dir / "state.json"
        return json.loads(path.read_text()) if path.exists() else {"objects": [], "config": {}}

    def _write(self, state: dict) -> None:
        (self.dir / "state.json").write_text(json.dumps(state))

    def configure(self, **config) -> None:
        state = self.state
        state["config"].update(config)
        self._write(state)

    def seed(self, *objs: dict) -> None:
        state = self.state
        state["objects"].extend(objs)
        self._write(state)

    def calls(self) -> list[dict]:
        path = self.dir / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def argvs(self, owner_reads: bool = True) -> list[list[str]]:
        """Every call's argv; without ``owner_reads``, less deploy's reads of the objects it is
        about to apply by name (``get KIND NAME... --ignore-not-found``, to refuse others' objects)."""
        return [c["argv"] for c in self.calls()
                if owner_reads or not ("get" in c["argv"] and "--ignore-not-found" in c["argv"])]

    def reset_log(self) -> None:
        (self.dir / "calls.jsonl").unlink(missing_ok=True)

    def objects(self, kind: str) -> list[str]:
        return sorted(o["metadata"]["name"] for o in self.state["objects"] if o["kind"] == kind)

    def created(self, kind: str) -> dict:
        return next(json.loads(c["stdin"]) for c in self.calls()
                    if c["argv"][-3:] == ["create", "-f", "-"] and json.loads(c["stdin"])["kind"] == kind)

    def applied(self) -> list[dict]:
        import yaml

        return [d for c in self.calls() if "apply" in c["argv"] and c["stdin"]
                for d in yaml.safe_load_all(c["stdin"]) if d and d.get("kind") != "Secret"]

    def run(self, *argv: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        rc = self.main(list(argv))
        out, err = self.capsys.readouterr()
        return rc, out, err
