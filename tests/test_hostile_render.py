"""Hostile input for rendering (issue 10 classes 1, 2, 4): refused with one exact line, or rendered valid.

Every ``REFUSED`` case of ``hostile_cases`` runs through the real CLI entry point
(``manifesto.cli.main``, in-process) as ``config validate`` and ``render manifest`` and must
exit 1 with exactly its expected stderr, no stdout and no traceback. Every ``ACCEPTED`` case
must render: Kubernetes output passes the published schemas, Slurm output passes ``bash -n``
and shellcheck. One Slurm case is submitted to the local Slurm kit to show the payload it
carries never runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import kit
from hostile_cases import ACCEPTED, REFUSED, Case
from test_slurm_render import check_script

COMMANDS = [("config", "validate"), ("render", "manifest")]


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A working directory with no user catalog and no render cache (the autouse isolated_env
    already drops ambient MANIFESTO_* settings, keeping the kits' MANIFESTO_SHARED_DIR)."""
    monkeypatch.setenv("MANIFESTO_CONFIG_HOME", str(tmp_path / "config-home"))
    monkeypatch.setenv("MANIFESTO_NO_CACHE", "1")
    monkeypatch.setenv("USER", "tester")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def arguments(case: Case, work: Path) -> list[str]:
    """Write the case's files; return SPEC --cluster CLUSTER FLAGS."""
    out = []
    for name, text in (("spec.yaml", case.spec), ("cluster.yaml", case.cluster)):
        if "\n" in text:
            (work / name).write_text(text, encoding="utf-8")
            out.append(name)
        else:
            out.append(text)  # a bundled catalog name
    return [out[0], "--cluster", out[1], *case.flags]


def run_case(case: Case, command: tuple[str, ...], work: Path, monkeypatch) -> tuple[int, str, str]:
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    return kit.cli_in_process(*command, *arguments(case, work))


def test_corpus_size_and_unique_ids():
    ids = [c.id for c in REFUSED + ACCEPTED]
    assert len(ids) == len(set(ids))
    assert len(REFUSED) >= 60
    assert all(c.expected for c in REFUSED)
    for prefix in ("u19-", "k19-", "b19-"):  # issue 19: classes 4, 6 and 7 of the render side
        assert sum(c.id.startswith(prefix) for c in REFUSED) >= 10, prefix


@pytest.mark.parametrize("command", COMMANDS, ids=["config-validate", "render-manifest"])
@pytest.mark.parametrize("case", REFUSED, ids=[c.id for c in REFUSED])
def test_refused_with_one_exact_line(case, command, scratch, monkeypatch):
    rc, out, err = run_case(case, command, scratch, monkeypatch)
    assert "Traceback" not in err
    assert err == case.expected + "\n"
    assert (rc, out) == (1, "")
    assert len(err.splitlines()) == 1


SUBPROCESS_SAMPLE = ("release-makes-names-too-long", "raw-arg-semicolon", "nul-in-model-id", "user-flag-parent-dirs")


@pytest.mark.integration
@pytest.mark.parametrize("case", [c for c in REFUSED if c.id in SUBPROCESS_SAMPLE], ids=SUBPROCESS_SAMPLE)
def test_refused_in_a_real_process(case, scratch):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANIFESTO_") or k == "MANIFESTO_SHARED_DIR"}
    env.update(MANIFESTO_CONFIG_HOME=str(scratch / "home"), MANIFESTO_NO_CACHE="1", **case.env)
    proc = kit.run_cli("render", "manifest", *arguments(case, scratch), cwd=scratch, env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", case.expected + "\n")


def render(case: Case, work: Path, monkeypatch) -> str:
    rc, out, err = run_case(case, ("render", "manifest"), work, monkeypatch)
    assert (rc, err) == (0, ""), err
    return out


K8S_ACCEPTED = [c for c in ACCEPTED if "platform: slurm" not in c.cluster]
SLURM_ACCEPTED = [c for c in ACCEPTED if "platform: slurm" in c.cluster]


@pytest.mark.integration
@pytest.mark.k8s_schemas
@pytest.mark.parametrize("case", K8S_ACCEPTED, ids=[c.id for c in K8S_ACCEPTED])
def test_accepted_kubernetes_output_is_valid(case, scratch, monkeypatch):
    """The published schemas accept every object; every script in a container command passes shellcheck."""
    text = render(case, scratch, monkeypatch)
    kit.validate_manifests(text)
    scripts = kit.extract_scripts(text)
    assert scripts
    for script in scripts:
        kit.shellcheck(script, script.shell)


@pytest.mark.integration
@pytest.mark.parametrize("case", SLURM_ACCEPTED, ids=[c.id for c in SLURM_ACCEPTED])
def test_accepted_slurm_script_is_valid_shell(case, scratch, monkeypatch):
    """``bash -n`` and shellcheck on the script and every script it embeds (the Slurm tests' checker)."""
    check_script(render(case, scratch, monkeypatch))
