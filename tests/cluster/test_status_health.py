"""``manifesto status ADDR`` reports the health Argo CD's checks give the live objects: the
same verdict as the Lua scripts on the very objects the API returns, through a deployment,
a rollout and an idle shutdown.

This file ran against the stand-in kubectl, which edited its stored objects in place; it
now runs against the real API (tools/testcluster), where a controller's report is written
to the status subresource as a controller writes it, and the idle shutdown is what the
controller's requests do (spec.replicas to 0, the pool's annotation stamped). A case the
real API cannot hold (an annotation that is not a string) is gone with the stand-in.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import time

import pytest

import kit
from realkube import MARKS, Cluster, Manifesto, grant, ok

pytestmark = MARKS

NS = "status-health"
CHECKS = kit.REPO_ROOT / "manifesto" / "data" / "argocd" / "resource_customizations"
SCRIPTS = {p.parent.name: p.read_text(encoding="utf-8") for p in CHECKS.glob("*/*/health.lua")}
BUILD = f"""\
options:
  default: {{user: ci, namespace: ci}}
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
    namespace: {NS}
    user: alice
    context: alice
"""
RESOURCES = {"LeaderWorkerSet": "leaderworkersets.leaderworkerset.x-k8s.io",
             "InferencePool": "inferencepools.inference.networking.k8s.io", "Deployment": "deployments.apps"}


def _lua():
    spec = importlib.util.spec_from_file_location("lua_health", kit.REPO_ROOT / "tests" / "argocd" / "lua_health.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run_health


@pytest.fixture(scope="module")
def workspace(real_cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("status-health")
    grant(real_cluster, NS, "alice")
    root = tmp / "ws"
    shutil.copytree(kit.REPO_ROOT / "models" / "deepseek-v4", root / "models" / "deepseek-v4")
    (root / "clusters").mkdir()
    (root / "BUILD.yaml").write_text(BUILD)
    (root / "clusters/lab.yaml").write_text((kit.REPO_ROOT / "clusters/example-gb200.yaml").read_text()
                                            .replace("name: example-gb200", "name: lab"))
    run = Manifesto(real_cluster, tmp)
    ok(run("build", "//:dsv4", cwd=root))
    return run, root


@pytest.fixture
def deployed(real_cluster, workspace):
    """The target freshly deployed: its objects as apply makes them, no controller's report yet."""
    run, root = workspace
    ok(run("stop", "//:dsv4", "--context", "alice", cwd=root))
    ok(run("deploy", "//:dsv4", "--context", "alice", cwd=root))
    return real_cluster, run, root


def _report(run, root) -> tuple[int, dict]:
    proc = run("status", "//:dsv4", "--context", "alice", "-o", "json", cwd=root)
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _agrees_with_lua(cluster: Cluster, report: dict) -> dict[str, str]:
    """Each checked object's reported health is the Lua verdict on its live object, read from
    the API after the report; returns name -> status."""
    run_health = _lua()
    seen = {}
    for row in report["objects"]:
        if row["kind"] in SCRIPTS:
            live = cluster.get(RESOURCES[row["kind"]], row["name"], "-n", NS)
            assert row["health"] == run_health(SCRIPTS[row["kind"]], live), row
            seen[row["name"]] = row["health"]["status"]
        else:
            assert "health" not in row
    return seen


def _names(cluster: Cluster, kind: str) -> list[str]:
    return [o["metadata"]["name"] for o in cluster.get(RESOURCES[kind], "-n", NS)["items"]]


def _status(cluster: Cluster, kind: str, name: str, status: dict) -> None:
    """Write ``status`` as the kind's controller does: to the status subresource."""
    cluster.kubectl("-n", NS, "patch", RESOURCES[kind], name, "--subresource=status", "--type=merge",
                    "-p", json.dumps({"status": status}))


def test_status_reports_the_argo_cd_health_of_each_live_object(deployed):
    cluster, run, root = deployed
    rc, report = _report(run, root)
    assert rc == 0 and report["status"] == "in-sync", report
    # Just applied: no LWS controller has observed them; no Gateway reports on the pool.
    seen = _agrees_with_lua(cluster, report)
    assert sorted(seen.values()) == ["Healthy", "Progressing", "Progressing"] and report["health"] == "Progressing"

    for name in _names(cluster, "LeaderWorkerSet"):
        generation = cluster.get(RESOURCES["LeaderWorkerSet"], name, "-n", NS)["metadata"]["generation"]
        _status(cluster, "LeaderWorkerSet", name, {
            "replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "observedGeneration": generation,
            "conditions": [{"type": "Available", "status": "True", "reason": "AllGroupsReady",
                            "message": "All 1 groups are ready", "lastTransitionTime": "2026-12-07T00:00:00Z"}]})
    rc, report = _report(run, root)
    assert set(_agrees_with_lua(cluster, report).values()) == {"Healthy"} and report["health"] == "Healthy"

    proc = run("status", "//:dsv4", "--context", "alice", cwd=root)
    assert proc.returncode == 0 and proc.stdout.startswith("//:dsv4  in-sync") and "\n  health: Healthy\n" in proc.stdout
    assert "      health: Healthy: All 1 groups are ready" in proc.stdout


def test_an_instance_the_idle_controller_shut_down_reads_suspended_and_idle(deployed):
    """What the controller does at shutdown (idle_controller.Controller.shutdown): workloads
    to 0, the pool stamped. status: idle, not drifted, and every checked object Suspended."""
    cluster, run, root = deployed
    for kind in ("LeaderWorkerSet", "Deployment"):
        for name in _names(cluster, kind):
            cluster.kubectl("-n", NS, "patch", RESOURCES[kind], name, "--type=merge", "-p", '{"spec":{"replicas":0}}')
    for name in _names(cluster, "InferencePool"):
        cluster.kubectl("-n", NS, "annotate", "--overwrite", RESOURCES["InferencePool"], name,
                        "manifesto.llm-d.ai/idle-shutdown-at=2026-12-01T03:12:09Z")
    time.sleep(1)  # the Deployment controller writes its status after the scale
    rc, report = _report(run, root)
    assert rc == 0 and report["status"] == "idle", report
    assert set(_agrees_with_lua(cluster, report).values()) == {"Suspended"} and report["health"] == "Suspended"
    pool = next(o for o in report["objects"] if o["kind"] == "InferencePool")
    assert pool["status"] == "idle"


def test_cluster_text_in_a_health_message_is_escaped_on_the_terminal(deployed):
    cluster, run, root = deployed
    for name in _names(cluster, "InferencePool"):
        _status(cluster, "InferencePool", name, {"parents": [{
            "parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"},
            "conditions": [{"type": "Accepted", "status": "False", "reason": "NotSupportedByParent",
                            "message": "bad\x1b[2Jthing", "lastTransitionTime": "2026-12-07T00:00:00Z"}]}]})
    proc = run("status", "//:dsv4", "--context", "alice", cwd=root)
    assert "\x1b" not in proc.stdout, proc.stdout
    assert "health: Degraded: Gateway gw: Accepted is False (NotSupportedByParent)" in proc.stdout, proc.stdout
    rc, report = _report(run, root)
    assert report["health"] == "Degraded"
