"""Golden renders: tests/golden/<case>/{model,cluster}.yaml (+ args.txt) -> expected.yaml.

Refresh with ``uv run pytest tests/test_golden.py --update-golden``.
"""

from __future__ import annotations

import difflib
import shlex
from pathlib import Path

import pytest

from kit import extract_scripts, run_cli, shellcheck, validate_manifests

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir()
               if p.is_dir() and ((p / "model.yaml").is_file() or (p / "command.txt").is_file()))


def _render(case: Path) -> str:
    """``command.txt`` holds a whole command; otherwise ``render manifest`` plus ``args.txt``."""
    command = case / "command.txt"
    if command.is_file():
        proc = run_cli(*shlex.split(command.read_text()), cwd=case)
        assert proc.returncode == 0, f"{case.name}: exit {proc.returncode}\n{proc.stderr}"
        return proc.stdout
    args_file = case / "args.txt"
    extra = shlex.split(args_file.read_text()) if args_file.is_file() else []
    # Relative paths keep the provenance header free of machine-specific prefixes.
    proc = run_cli("render", "manifest", "model.yaml", "--cluster", "cluster.yaml",
                   "--user", "golden-user", "--namespace", "golden-ns", *extra, cwd=case)
    assert proc.returncode == 0, f"{case.name}: exit {proc.returncode}\n{proc.stderr}"
    return proc.stdout


def test_cases_exist():
    assert {"single-gpu-deployment", "tp4-one-node", "tp2-pp2-two-nodes-lws",
            "dp16-ep-decode-4-nodes", "pd-nixl", "stateless-cluster", "vllm-env",
            "load-aware-standalone", "load-aware-gateway", "dra-cluster", "kueue-lws", "openshift",
            "bootstrap"} <= set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_golden(name, update_golden):
    case = GOLDEN / name
    expected_file = case / "expected.yaml"
    actual = _render(case)
    if update_golden:
        expected_file.write_text(actual)
        return
    assert expected_file.is_file(), f"{expected_file} missing: run with --update-golden"
    expected = expected_file.read_text()
    if actual != expected:
        diff = "".join(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            fromfile=f"{name}/expected.yaml", tofile=f"{name} (rendered)"))
        pytest.fail(f"golden mismatch for {name} (refresh with --update-golden):\n{diff}",
                    pytrace=False)


def test_golden_files_are_valid(update_golden):
    """All expected files in one validator call; every launch script passes shellcheck."""
    if update_golden:
        pytest.skip("golden files are being rewritten; run again without --update-golden")
    texts = []
    for name in CASES:
        expected = GOLDEN / name / "expected.yaml"
        if not expected.is_file():
            pytest.fail(f"{expected} missing: run with --update-golden")
        texts.append(expected.read_text())
    validate_manifests("".join(t if t.endswith("\n") else t + "\n" for t in texts))
    for name, text in zip(CASES, texts):
        for script in extract_scripts(text):
            try:
                shellcheck(script, script.shell)
            except AssertionError as exc:
                raise AssertionError(f"{name}, {script.where}:\n{exc}") from None
