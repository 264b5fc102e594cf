"""Deployment targets: one model on one cluster with its own namespace, user and context,
built into out/deploy/<name> and addressable like every other target."""

from __future__ import annotations

import json

import pytest

from buildkit import BUILD_YAML, Runner, make_tree

pytestmark = pytest.mark.integration  # every test here starts processes

DEPLOYMENTS = BUILD_YAML + """\
  - kind: deployment
    name: qwen-prod
    model: //models/qwen:aggregated
    cluster: gpu
    namespace: prod
    user: svc-qwen
    context: gpu-admin
  - kind: deployment
    name: wide-slurm
    model: models/wide/1p1d.yaml
    cluster: //clusters:slurm
    slurm_host: login1
    options: {extends: default, idle_timeout_minutes: 30}
"""


def _runner(tmp_path, extra=None) -> Runner:
    return Runner(make_tree(tmp_path / "tree", {"BUILD.yaml": DEPLOYMENTS, **(extra or {})}), tmp_path / "log")


def test_a_deployment_builds_into_out_deploy_with_its_own_options(tmp_path):
    run = _runner(tmp_path)
    run("build", "//:qwen-prod")
    assert run.renders() == [("qwen/aggregated.yaml", "gpu")]
    text = (run.root / "out/deploy/qwen-prod.yaml").read_text()
    assert text.startswith("# options: svc-qwen prod None None\n")
    run("build", "//:wide-slurm")
    assert (run.root / "out/deploy/wide-slurm.sbatch").read_text().startswith("# options: test-user test-ns None 30\n")


def test_addresses_name_deployments_everywhere(tmp_path):
    run = _runner(tmp_path)
    assert run("list", "//:").stdout.split() == ["//:qwen-prod", "//:wide-slurm"]
    assert "//:qwen-prod" in run("list", "//::").stdout.split()
    rows = json.loads(run("matrix", "//:qwen-prod").stdout)
    assert rows == [{"artifact": "out/deploy/qwen-prod.yaml", "cluster": "gpu", "model": "//:qwen-prod",
                     "status": "ok"}]
    assert run("deps", "//:qwen-prod").stdout.split() == ["clusters/gpu.yaml", "models/qwen/aggregated.yaml"]
    run("build")
    dependents = run("dependents", "models/qwen/aggregated.yaml").stdout.split()
    assert "out/deploy/qwen-prod.yaml" in dependents and "out/gpu/qwen/aggregated.yaml" in dependents
    # a cluster target selects the deployments rendered against it
    gpu = json.loads(run("matrix", "//clusters:gpu").stdout)
    assert "//:qwen-prod" in {r["model"] for r in gpu}


def test_editing_the_model_rebuilds_its_deployment(tmp_path):
    run = _runner(tmp_path)
    run("build")
    run.renders()
    (run.root / "models/qwen/aggregated.yaml").write_text("release: qwen2\n")
    run("build")
    assert ("qwen/aggregated.yaml", "gpu") in run.renders()
    assert "release: qwen2" in (run.root / "out/deploy/qwen-prod.yaml").read_text()
    assert run("build", "--check").returncode == 0


def test_an_incompatible_deployment_is_an_error_not_a_skip(tmp_path):
    """laguna pins b200, which hopper does not offer: in the matrix a skip, as a deployment an error."""
    text = DEPLOYMENTS.replace("model: //models/qwen:aggregated\n    cluster: gpu",
                               "model: //models/qwen:laguna\n    cluster: hopper")
    run = _runner(tmp_path, {"BUILD.yaml": text})
    proc = run("build", "//:qwen-prod", check=False)
    assert proc.returncode == 1 and "error: //:qwen-prod @ hopper:" in proc.stderr
    assert run("build", "//models/qwen:laguna", check=False).returncode == 0


def test_a_removed_deployment_is_pruned(tmp_path):
    run = _runner(tmp_path)
    run("build")
    assert (run.root / "out/deploy/qwen-prod.yaml").is_file()
    (run.root / "BUILD.yaml").write_text(DEPLOYMENTS.split("  - kind: deployment")[0])
    run("build")
    assert not (run.root / "out/deploy/qwen-prod.yaml").exists()


def test_a_cluster_named_deploy_is_refused(tmp_path):
    run = _runner(tmp_path, {"clusters/deploy.yaml": "accelerators: gb200\n"})
    proc = run("build", check=False)
    assert proc.returncode == 1
    assert "a cluster target is named 'deploy'" in proc.stderr
