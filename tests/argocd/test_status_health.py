"""``manifesto status ADDR`` reports the health Argo CD's checks give the live objects: the
same verdict as the Lua scripts on the very objects the cluster returns, through a
deployment, a rollout and an idle shutdown (against the fake kubectl)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kubefake import FAKE, FakeCluster, install
from lua_health import run_health
from manifesto.cli import main

pytestmark = pytest.mark.integration  # runs the fake kubectl

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ROOT / "manifesto" / "data" / "argocd" / "resource_customizations"
SCRIPTS = {p.parent.name: p.read_text(encoding="utf-8") for p in CHECKS.glob("*/*/health.lua")}
BUILD = """\
options:
  default: {user: ci, namespace: ci}
targets:
  - kind: cluster
    path: clusters
    sources: ["*.yaml"]
  - kind: model
    path: models
    sources: ["**/*.yaml", "!**/*-base.yaml"]
  - kind: deployment
    name: dsv4
    model: //models/deepseek-v4:1P-EP8-1D-EP8
    cluster: lab
    namespace: demo
    user: alice
    context: lab-admin
"""


@pytest.fixture
def fake(tmp_path, monkeypatch, capsys) -> FakeCluster:
    cluster = FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)
    root = tmp_path / "ws"
    shutil.copytree(ROOT / "models" / "deepseek-v4", root / "models" / "deepseek-v4")
    (root / "clusters").mkdir()
    (root / "BUILD.yaml").write_text(BUILD)
    (root / "clusters/lab.yaml").write_text((ROOT / "clusters/example-gb200.yaml").read_text()
                                            .replace("name: example-gb200", "name: lab"))
    monkeypatch.chdir(root)
    cluster.configure(current_context="lab-admin")
    rc, out, err = cluster.run("build", "//:dsv4")
    assert rc == 0, out + err
    assert cluster.run("deploy", "//:dsv4")[0] == 0
    return cluster


def _report(fake) -> tuple[int, dict]:
    rc, out, err = fake.run("status", "//:dsv4", "-o", "json")
    assert out, err
    return rc, json.loads(out)


def _edit(fake, kind: str, edit) -> None:
    state = fake.state
    for obj in state["objects"]:
        if obj["kind"] == kind:
            edit(obj)
    fake._write(state)


def _agrees_with_lua(fake, report: dict) -> dict[str, str]:
    """Each checked object's reported health is the Lua verdict on its live object; returns kind -> status."""
    live = {(o["kind"], o["metadata"]["name"]): o for o in fake.state["objects"]}
    seen = {}
    for row in report["objects"]:
        if row["kind"] in SCRIPTS:
            assert row["health"] == run_health(SCRIPTS[row["kind"]], live[row["kind"], row["name"]]), row
            seen[row["name"]] = row["health"]["status"]
        else:
            assert "health" not in row
    return seen


def test_status_reports_the_argo_cd_health_of_each_live_object(fake):
    rc, report = _report(fake)
    assert rc == 0 and report["status"] == "in-sync"
    # Just applied: the LWS controller has not observed them; no Gateway reports on the pool.
    seen = _agrees_with_lua(fake, report)
    assert sorted(seen.values()) == ["Healthy", "Progressing", "Progressing"] and report["health"] == "Progressing"

    def ready(obj):
        obj["status"] = {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
                         "observedGeneration": obj["metadata"]["generation"],
                         "conditions": [{"type": "Available", "status": "True", "reason": "AllGroupsReady"}]}

    _edit(fake, "LeaderWorkerSet", ready)
    rc, report = _report(fake)
    assert set(_agrees_with_lua(fake, report).values()) == {"Healthy"} and report["health"] == "Healthy"

    rc, out, _ = fake.run("status", "//:dsv4")
    assert rc == 0 and out.startswith("//:dsv4  in-sync") and "\n  health: Healthy\n" in out
    assert "      health: Healthy: All 1 groups are ready" in out


def test_an_instance_the_idle_controller_shut_down_reads_suspended_and_idle(fake):
    """What the controller does at shutdown (idle_controller.Controller.shutdown): workloads
    to 0, the pool stamped. status: idle, not drifted, and every checked object Suspended."""

    def scale(obj):
        obj["spec"]["replicas"] = 0

    _edit(fake, "LeaderWorkerSet", scale)
    _edit(fake, "Deployment", scale)
    stamp = {"manifesto.llm-d.ai/idle-shutdown-at": "2026-12-01T03:12:09Z"}
    _edit(fake, "InferencePool", lambda o: o["metadata"]["annotations"].update(stamp))
    rc, report = _report(fake)
    assert rc == 0 and report["status"] == "idle", report
    assert set(_agrees_with_lua(fake, report).values()) == {"Suspended"} and report["health"] == "Suspended"
    pool = next(o for o in report["objects"] if o["kind"] == "InferencePool")
    assert pool["status"] == "idle"


def test_a_stamped_pool_without_an_idle_shutdown_is_still_drift(fake):
    """Only a stamp (non-empty) is the controller's: emptied by hand to something else is drift."""
    _edit(fake, "InferencePool", lambda o: o["metadata"]["annotations"].update(
        {"manifesto.llm-d.ai/idle-shutdown-at": 5}))
    rc, report = _report(fake)
    assert rc == 1 and report["status"] == "drifted"


def test_cluster_text_in_a_health_message_is_escaped_on_the_terminal(fake):
    def rejected(obj):
        obj["status"] = {"parents": [{"parentRef": {"name": "gw", "kind": "Gateway"}, "conditions": [
            {"type": "Accepted", "status": "False", "reason": "NotSupportedByParent", "message": "bad\x1b[2Jthing"}]}]}

    _edit(fake, "InferencePool", rejected)
    rc, out, _ = fake.run("status", "//:dsv4")
    assert "\x1b" not in out and "health: Degraded: Gateway gw: Accepted is False (NotSupportedByParent)" in out
    rc, report = _report(fake)
    assert report["health"] == "Degraded"
