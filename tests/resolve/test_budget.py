"""GPU budget: per role and per artifact in explain, per pair in `build -o json`, per cluster in
the build's text report, with cost when the cluster profile prices its accelerator."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

import kit
from kit import cli_in_process, plan_of

REPO = kit.REPO_ROOT
CLUSTERS = REPO / "clusters"

PD = """\
release: bud
topology: pd
model: {id: Qwen/Qwen3-0.6B, image_ref: vllm.standard}
routing: {kind: pd, target_role: decode}
runtime: {sidecars: []}
roles:
  - name: prefill
    lws: {replicas: 3}
    parallelism: {tp: 2}
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
  - name: decode
    lws: {size: 2}
    parallelism: {tp: 8, dp: 2}
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
"""


def _files(tmp_path, price: str = "hourly_price: 3.5"):
    model = tmp_path / "models" / "bud.yaml"
    model.parent.mkdir(parents=True, exist_ok=True)
    model.write_text(PD)
    cluster = tmp_path / "clusters" / "priced.yaml"
    cluster.parent.mkdir(parents=True, exist_ok=True)
    cluster.write_text((CLUSTERS / "example-h200.yaml").read_text().replace(
        "memory: 141G", f"memory: 141G\n      {price}" if price else "memory: 141G"))
    return model, cluster


def test_budget_per_role_and_in_total_with_cost(tmp_path):
    model, cluster = _files(tmp_path)
    b = plan_of(model, cluster)[0].budget
    # prefill: 3 pods of 2 GPUs, four to an 8-GPU node; decode: 2 pods of 8 GPUs.
    assert [(r.role, r.gpus, r.nodes, r.pods, r.hourly_cost) for r in b.roles] == [
        ("prefill", 6, 1, 3, 21.0), ("decode", 16, 2, 2, 56.0)]
    assert (b.gpus, b.nodes, b.pods, b.accelerator, b.hourly_price, b.hourly_cost) == (22, 3, 5, "h200", 3.5, 77.0)


def test_slurm_counts_a_node_per_pod():
    plan = plan_of(REPO / "models/qwen/qwen3-0.6b-pd.yaml", CLUSTERS / "example-slurm.yaml")[0]
    assert [(r.role, r.gpus, r.nodes, r.pods) for r in plan.budget.roles] == [("prefill", 1, 1, 1), ("decode", 1, 1, 1)]
    assert plan.budget.hourly_cost is None


def test_explain_shows_the_budget(tmp_path):
    model, cluster = _files(tmp_path)
    out = cli_in_process("explain", str(model), "--cluster", str(cluster), "-n", "ns")
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert "GPU budget      22 h200 GPU(s) on 3 node(s) in 5 pod(s), 77 per hour at 3.5 per GPU-hour" in lines
    assert "GPU budget      6 GPU(s) on 1 node(s) in 3 pod(s), 21 per hour" in lines
    assert "GPU budget      16 GPU(s) on 2 node(s) in 2 pod(s), 56 per hour" in lines
    data = json.loads(cli_in_process("explain", str(model), "--cluster", str(cluster), "-n", "ns", "-o", "json").stdout)
    assert data["budget"]["gpus"] == 22 and data["budget"]["roles"][1]["nodes"] == 2


@pytest.mark.integration
def test_build_reports_budget_per_pair_and_per_cluster(tmp_path, monkeypatch):
    model, cluster = _files(tmp_path)
    unpriced = tmp_path / "clusters" / "plain.yaml"  # a second cluster, without a price
    unpriced.write_text((CLUSTERS / "example-h200.yaml").read_text().replace("name: example-h200", "name: plain"))
    (tmp_path / "clusters" / "priced.yaml").write_text(
        cluster.read_text().replace("name: example-h200", "name: priced"))
    (tmp_path / "BUILD.yaml").write_text(textwrap.dedent("""\
        options:
          default: {user: u, namespace: ns}
        targets:
          - {kind: cluster, path: clusters, sources: ["*.yaml"]}
          - {kind: model, path: models, sources: ["*.yaml"], options: default}
        """))
    monkeypatch.chdir(tmp_path)
    out = cli_in_process("build", "//::", "--jobs", "1")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[-2:] == [
        "budget      plain: 22 GPUs, 3 nodes, 5 pods over 1 deployment",
        "budget      priced: 22 GPUs, 3 nodes, 5 pods over 1 deployment, 77 per hour",
    ]
    assert not (tmp_path / "out/.cache/budgets").exists()  # kept with the render's record, no cache of its own
    report = json.loads(cli_in_process("build", "//::", "-o", "json").stdout)
    budgets = {row["cluster"]: row["budget"] for row in report["pairs"]}
    assert budgets["priced"]["hourly_cost"] == 77.0 and budgets["plain"]["hourly_cost"] is None
    assert [r["gpus"] for r in budgets["plain"]["roles"]] == [6, 16]
    # A no-op build reads the budgets from the manifest: same lines, nothing rendered.
    again = cli_in_process("build", "//::")
    assert again.stderr.splitlines()[-2:] == out.stderr.splitlines()[-2:]
    assert again.stdout == "0 rendered, 2 up to date, 0 skipped, 0 failed\n"


@pytest.mark.integration
def test_build_counts_each_deployment_once(tmp_path, monkeypatch):
    """A model deployed by a deployment target is counted as that target, not again as its matrix
    artifact for the same cluster; two targets of it are two deployments."""
    model, cluster = _files(tmp_path)
    build = textwrap.dedent("""\
        options:
          default: {user: u, namespace: ns}
        targets:
          - {kind: cluster, path: clusters, sources: ["*.yaml"]}
          - {kind: model, path: models, sources: ["*.yaml"], options: default}
          - {kind: deployment, name: one, model: //models:bud, cluster: priced, namespace: a, user: u, context: c}
        """)
    (tmp_path / "BUILD.yaml").write_text(build)
    monkeypatch.chdir(tmp_path)
    out = cli_in_process("build", "//::", "--jobs", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "2 rendered, 0 up to date, 0 skipped, 0 failed\n"
    assert out.stderr.splitlines()[-1] == "budget      priced: 22 GPUs, 3 nodes, 5 pods over 1 deployment, 77 per hour"
    (tmp_path / "BUILD.yaml").write_text(
        build + "  - {kind: deployment, name: two, model: //models:bud, cluster: priced, namespace: b, user: u, "
                "context: c}\n")
    out = cli_in_process("build", "//::", "--jobs", "1")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[-1] == "budget      priced: 44 GPUs, 6 nodes, 10 pods over 2 deployments, 154 per hour"
