"""`manifesto init`: a workspace that builds, checks, has a CI matrix and deploys (fake kubectl)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from manifesto.cli import main

from kubefake import FAKE, FakeCluster, install

pytestmark = pytest.mark.integration  # every test here starts processes

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fake(tmp_path, monkeypatch, capsys) -> FakeCluster:
    return FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)


def test_init_scaffolds_a_workspace_that_builds_and_deploys(fake, tmp_path, monkeypatch):
    rc, _, err = fake.run("init", "ws", "--user", "alice", "--namespace", "demo", "--context", "lab")
    assert rc == 0, err
    ws = tmp_path / "ws"
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_file()) == [
        ".github/workflows/manifesto.yml", ".gitignore", "BUILD.yaml", "clusters/example-gb200.yaml",
        "models/qwen3-0.6b.yaml"]
    assert "out/.cache/" in (ws / ".gitignore").read_text().splitlines()
    assert "extends" not in (ws / "models/qwen3-0.6b.yaml").read_text()
    workflow = yaml.safe_load((ws / ".github/workflows/manifesto.yml").read_text())
    steps = " ".join(s.get("run", "") for s in workflow["jobs"]["check"]["steps"])
    assert "manifesto build --check '//::'" in steps and "manifesto matrix '//::' --format github" in steps
    assert workflow["jobs"]["render"]["if"] == "${{ needs.check.outputs.matrix != '' }}"

    monkeypatch.chdir(ws)
    rc, out, err = fake.run("build")
    assert rc == 0 and out == "2 rendered, 0 up to date, 0 skipped, 0 failed\n", err
    assert fake.run("build", "--check")[0] == 0
    rc, out, _ = fake.run("matrix", "--format", "github")
    assert json.loads(out) == {"include": [{"model": "//:qwen3-0-6b-example-gb200", "cluster": "example-gb200"},
                                           {"model": "//models:qwen3-0.6b", "cluster": "example-gb200"}]}
    fake.configure(current_context="lab")
    rc, _, err = fake.run("deploy", "//:qwen3-0-6b-example-gb200")
    assert rc == 0, err
    assert fake.run("status", "//:qwen3-0-6b-example-gb200")[0] == 0
    deployed = [o for o in fake.state["objects"] if o["kind"] == "Deployment"]
    assert {o["metadata"]["namespace"] for o in deployed} == {"demo"}


def test_a_private_cluster_is_an_ordinary_target(fake, tmp_path, monkeypatch):
    private = tmp_path / "local-slurm.yaml"
    private.write_text((ROOT / "clusters/example-slurm.yaml").read_text().replace("name: example-slurm",
                                                                                  "name: local-slurm"))
    rc, _, err = fake.run("init", "ws", "--cluster", str(private), "--user", "bob", "--context", "x")
    assert rc == 0, err
    monkeypatch.chdir(tmp_path / "ws")
    rc, out, err = fake.run("build", "--cluster", "local-slurm")
    assert rc == 0, err
    assert (tmp_path / "ws/out/local-slurm/qwen3-0.6b.sbatch").is_file()


def test_init_never_overwrites(fake, tmp_path):
    assert fake.run("init", "ws", "--user", "a", "--context", "x")[0] == 0
    (tmp_path / "ws/BUILD.yaml").write_text("# mine\n")
    rc, _, err = fake.run("init", "ws", "--user", "a", "--context", "x")
    assert rc == 1
    assert err.startswith("error: ws: .github/workflows/manifesto.yml, .gitignore, BUILD.yaml, ")
    assert (tmp_path / "ws/BUILD.yaml").read_text() == "# mine\n"


def test_init_refuses_names_kubernetes_would_refuse(fake):
    rc, _, err = fake.run("init", "ws", "--namespace", "Team_A", "--user", "a", "--context", "x")
    assert rc == 1
    assert err == ("error: --namespace 'Team_A': use lowercase letters, digits and '-' (a DNS label), as it names "
                   "Kubernetes objects\n")


def test_the_workflow_scripts_pass_shellcheck():
    from kit import shellcheck

    from manifesto.scaffold import WORKFLOW

    workflow = yaml.safe_load(WORKFLOW)
    scripts = [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    assert len(scripts) == 5
    for script in scripts:  # an expression becomes a plain word, as Actions substitutes it before bash runs
        shellcheck(script.replace("${{", "X").replace("}}", "X"))
