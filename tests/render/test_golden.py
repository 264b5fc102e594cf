"""Golden renders for both platforms: one folder per case under ``tests/golden/``.

A case folder holds its inputs and one expected artifact:

* ``model.yaml`` + ``cluster.yaml`` (+ ``args.txt``, extra arguments): the case is
  ``render manifest model.yaml --cluster cluster.yaml --user golden-user --namespace golden-ns
  ARGS``; or ``command.txt``, a whole command line (with ``cluster.yaml`` and so on beside it);
* ``expected.yaml`` (Kubernetes) or ``expected.sbatch`` (Slurm);
* ``stderr.txt`` when the case expects a warning (otherwise stderr must be empty).

The CLI runs in-process (``manifesto.cli.main``) from the case folder, so provenance headers
hold relative paths. ``--update-golden`` rewrites the expected files; a mismatch fails with a
unified diff. The expected files are checked too: all the YAML in one validate-manifests call,
every launch script embedded in it with shellcheck, every batch script with ``bash -n`` and
shellcheck (and its embedded scripts).

Refresh with ``uv run --extra test pytest tests/render/test_golden.py --update-golden``.
"""

from __future__ import annotations

import difflib
import shlex
from pathlib import Path

import pytest

from kit import cli_in_process, extract_scripts, shellcheck, validate_manifests
from test_slurm_render import check_script

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
DEFAULT = ("render", "manifest", "model.yaml", "--cluster", "cluster.yaml",
           "--user", "golden-user", "--namespace", "golden-ns")
SUFFIXES = (".yaml", ".sbatch")


def _is_case(folder: Path) -> bool:
    return folder.is_dir() and ((folder / "model.yaml").is_file() or (folder / "command.txt").is_file())


CASES = sorted(p.name for p in GOLDEN.iterdir() if _is_case(p))


def argv(case: Path) -> list[str]:
    """The case's command line: ``command.txt``, else ``render manifest`` plus ``args.txt``."""
    command = case / "command.txt"
    if command.is_file():
        return shlex.split(command.read_text())
    args = case / "args.txt"
    return [*DEFAULT, *(shlex.split(args.read_text()) if args.is_file() else [])]


def expected_file(case: Path, rendered: str | None = None) -> Path:
    """The case's ``expected.yaml`` or ``expected.sbatch``; for a new case, the one that
    fits ``rendered`` (a batch script starts with ``#!``)."""
    found = [case / f"expected{s}" for s in SUFFIXES if (case / f"expected{s}").is_file()]
    assert len(found) <= 1, f"{case.name}: more than one expected file: {[p.name for p in found]}"
    if found:
        return found[0]
    if rendered is None:
        pytest.fail(f"{case}/expected.yaml or expected.sbatch missing: run with --update-golden",
                    pytrace=False)
    return case / ("expected.sbatch" if rendered.startswith("#!") else "expected.yaml")


def cases_with(suffix: str) -> list[str]:
    return [name for name in CASES if (GOLDEN / name / f"expected{suffix}").is_file()]


def render(case: Path, monkeypatch) -> str:
    monkeypatch.chdir(case)  # relative paths keep the provenance header free of machine prefixes
    rc, out, err = cli_in_process(*argv(case))
    said = case / "stderr.txt"  # a case may expect a warning, word for word
    assert (rc, err) == (0, said.read_text() if said.is_file() else ""), f"{case.name}: exit {rc}\n{err}"
    return out


def test_cases_exist():
    assert {"single-gpu-deployment", "tp4-one-node", "tp2-pp2-two-nodes-lws",
            "dp16-ep-decode-4-nodes", "pd-nixl", "stateless-cluster", "vllm-env",
            "load-aware-standalone", "load-aware-gateway", "dra-cluster", "kueue-lws", "openshift",
            "bootstrap", "slurm-qwen3-0.6b-direct", "slurm-qwen3-0.6b-pd"} <= set(CASES)
    assert set(cases_with(".yaml")) | set(cases_with(".sbatch")) == set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_golden(name, update_golden, monkeypatch):
    case = GOLDEN / name
    actual = render(case, monkeypatch)
    if update_golden:
        expected_file(case, actual).write_text(actual)
        return
    path = expected_file(case)
    expected = path.read_text()
    if actual != expected:
        diff = "".join(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            fromfile=f"{name}/{path.name}", tofile=f"{name} (rendered)"))
        pytest.fail(f"golden mismatch for {name} (refresh with --update-golden):\n{diff}",
                    pytrace=False)


@pytest.mark.integration
def test_expected_yaml_is_valid(update_golden):
    """All expected YAML in one validator call; every launch script passes shellcheck."""
    if update_golden:
        pytest.skip("golden files are being rewritten; run again without --update-golden")
    texts = [(name, (GOLDEN / name / "expected.yaml").read_text()) for name in cases_with(".yaml")]
    assert texts, "no Kubernetes golden cases"
    validate_manifests("".join(t if t.endswith("\n") else t + "\n" for _, t in texts))
    for name, text in texts:
        for script in extract_scripts(text):
            try:
                shellcheck(script, script.shell)
            except AssertionError as exc:
                raise AssertionError(f"{name}, {script.where}:\n{exc}") from None


@pytest.mark.integration
@pytest.mark.parametrize("name", cases_with(".sbatch"))
def test_expected_sbatch_passes_its_checks(name, update_golden):
    """``bash -n`` and shellcheck on the batch script and on each bash script it embeds."""
    if update_golden:
        pytest.skip("golden files are being rewritten; run again without --update-golden")
    try:
        check_script((GOLDEN / name / "expected.sbatch").read_text())
    except AssertionError as exc:
        raise AssertionError(f"{name}:\n{exc}") from None
