"""``manifesto status`` and Argo CD give every object the same health: the Python checks
(``manifesto.ops.health``) and the Lua scripts, run as Argo CD runs them, agree on the
status and the message of every test object and of half-written ones."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lua_health import health_cases, run_health
from manifesto.ops.health import CHECKS, HEALTH_ORDER, health, worst

ROOT = Path(__file__).resolve().parents[2] / "manifesto" / "data" / "argocd" / "resource_customizations"
FOLDERS = {p.parent.name: p.parent for p in ROOT.glob("*/*/health.lua")}
CASES = [(kind, path, obj) for kind, folder in sorted(FOLDERS.items()) for path, obj, _want in health_cases(folder)]

#: Objects a cluster could hold mid-way or after a hand edit: every field of the wrong type somewhere.
ODD = [
    {}, {"metadata": None, "spec": None, "status": None},
    {"spec": {"replicas": "two", "roles": "x", "slices": "2"}},
    {"metadata": {"generation": 2}, "spec": {"replicas": 2},
     "status": {"observedGeneration": 2, "readyReplicas": 2.0,
                "conditions": [{"type": "Available", "status": "True"}]}},
    {"metadata": {"generation": 2, "annotations": {"manifesto.llm-d.ai/progress-deadline-seconds": " 0x10 "}},
     "spec": {"replicas": 3.0},
     "status": {"observedGeneration": 2, "conditions": [{"type": "Progressing", "status": "True",
                                                         "lastTransitionTime": "2026-13-40T25:61:61Z"}]}},
    {"metadata": {"annotations": {"manifesto.llm-d.ai/progress-deadline-seconds": "1e3"}},
     "status": {"observedGeneration": 1, "conditions": [{"type": "UpdateInProgress", "status": "True",
                                                         "lastTransitionTime": "2020-01-01T00:00:00Z"}]}},
    {"metadata": {"annotations": {"manifesto.llm-d.ai/idle-shutdown-at": 5}},
     "status": {"parents": [{}, "x", {"parentRef": {"name": 3}, "conditions": [{"type": "Accepted"}]}]}},
    {"metadata": {"generation": 4}, "status": {"parents": [
        {"parentRef": {"name": "gw", "kind": "Gateway"},
         "conditions": [{"type": "Accepted", "status": "True", "observedGeneration": 4}]},
        {"parentRef": {"name": "b", "namespace": "ns", "kind": "Mesh"},
         "conditions": [{"type": "ResolvedRefs", "status": "False"}]}]}},
    {"spec": {"slices": 2, "roles": [{"name": "prefill", "spec": {"replicas": 0}},
                                     {"name": "decode", "scaling": {"mode": "External"}}, "x"]}},
    {"spec": {"slices": 2, "roles": [{"name": "prefill", "spec": {"replicas": 1}},
                                     {"name": "decode", "scaling": {"mode": "External"}}]},
     "status": {"roleStatuses": [{"name": "prefill", "readyReplicas": 2, "updatedReplicas": 2},
                                 {"name": "decode", "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3}, "x"]}},
    {"spec": {"roles": [{"name": "a"}, {"name": "b"}]},
     "status": {"roleStatuses": [{"name": "a"}], "conditions": [{"type": "Degraded", "status": "True"}]}},
    {"spec": {"roles": [{"name": "a"}, {"name": "b"}]},
     "status": {"conditions": [{"type": "Available", "status": "True"}]}},
]


@pytest.mark.parametrize(("kind", "path", "obj"), CASES, ids=[f"{k}:{p}" for k, p, _ in CASES])
def test_python_and_lua_agree_on_every_test_object(kind, path, obj):
    assert health(obj) == run_health((FOLDERS[kind] / "health.lua").read_text(encoding="utf-8"), obj)


@pytest.mark.parametrize("kind", sorted(CHECKS))
@pytest.mark.parametrize("n", range(len(ODD)))
def test_python_and_lua_agree_on_half_written_objects(kind, n):
    obj = {"apiVersion": "x/v1", "kind": kind, **ODD[n]}
    assert health(obj) == run_health((FOLDERS[kind] / "health.lua").read_text(encoding="utf-8"), obj)


def test_every_check_has_a_python_twin_and_nothing_else_gets_a_verdict():
    assert set(FOLDERS) == set(CHECKS)
    assert health({"kind": "Deployment", "spec": {"replicas": 0}}) is None and health("x") is None


def test_the_idle_marker_is_the_one_the_idle_controller_writes():
    from manifesto.render.k8s.idle import IDLE_ANNOTATION

    assert f'"{IDLE_ANNOTATION}"' in (FOLDERS["InferencePool"] / "health.lua").read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "DisaggregatedSet"])
@pytest.mark.parametrize("zone", ["Asia/Kolkata", "America/Los_Angeles", "UTC"])
def test_the_progress_deadline_counts_from_utc_whatever_the_local_zone(kind, zone, monkeypatch):
    """Argo CD's os.time reads a date table as local time; a controller outside UTC must
    not call an object Degraded half an hour into its hour (or give it hours more)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1800))
    late = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3700))
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        for when, want in ((stamp, "Progressing"), (late, "Degraded")):
            obj = {"kind": kind, "metadata": {"generation": 1},
                   "spec": {"replicas": 2, "roles": [{"name": "a"}, {"name": "b"}]},
                   "status": {"observedGeneration": 1, "conditions": [
                       {"type": "Progressing", "status": "True", "lastTransitionTime": when}]}}
            got = run_health((FOLDERS[kind] / "health.lua").read_text(encoding="utf-8"), obj)
            assert got["status"] == want and got == health(obj), (zone, when)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_worst_ranks_as_argo_cd_does():
    assert worst(["Healthy", "Suspended"]) == "Suspended"
    assert worst(["Progressing", "Degraded", "Healthy"]) == "Degraded"
    assert worst([None, "x"]) is None and HEALTH_ORDER[0] == "Healthy"
