"""``ready`` holds LeaderWorkerSets and DisaggregatedSets to having rolled out what was applied,
on status documents shaped as LeaderWorkerSet v0.10.0 writes them
(api/leaderworkerset/v1/leaderworkerset_types.go:364-392: conditions, readyReplicas,
updatedReplicas, replicas, hpaPodSelector, observedGeneration; zero counts left out, as Go's
omitempty does) and children named and labelled as its DisaggregatedSet controller makes them
(pkg/utils/disaggregatedset/utils.go:93-111, lws_manager.go:59-99). v0.10.0 writes no status
on the set itself."""

from __future__ import annotations

import copy

import pytest

from kit import REPO_ROOT, plan_of
from manifesto.ops.lifecycle import ready_report
from manifesto.ops.lws_ready import lws_waiting, set_waiting, template_within
from manifesto.render.k8s import objects

K3 = REPO_ROOT / "models" / "kimi-k3" / "1P-1D-DP4-TP4.yaml"
LWS010 = REPO_ROOT / "clusters" / "example-gb200-lws.yaml"
GB200 = REPO_ROOT / "clusters" / "example-gb200.yaml"
EPP = {"status": {"conditions": [{"type": "Available", "status": "True"}]}}


def _status(generation: int, replicas: int, *, observed: int | None = None, updated: int | None = None,
            ready: int | None = None, available: bool | None = None, name: str = "x") -> dict:
    """A LeaderWorkerSet status as v0.10.0 writes it (leaderworkerset_controller.go:420-545)."""
    observed = generation if observed is None else observed
    updated = replicas if updated is None else updated
    ready = replicas if ready is None else ready
    available = ready == replicas and updated == replicas if available is None else available
    kind = "Available" if available else "Progressing"
    status = {"conditions": [{"type": kind, "status": "True", "observedGeneration": observed,
                              "lastTransitionTime": "2026-12-07T10:00:00Z", "reason": "AllGroupsReady" if available
                              else "GroupsProgressing", "message": "All replicas are ready" if available
                              else "Replicas are progressing"}],
              "hpaPodSelector": f"leaderworkerset.sigs.k8s.io/name={name},leaderworkerset.sigs.k8s.io/worker-index=0",
              "observedGeneration": observed}
    for key, value in (("readyReplicas", ready), ("updatedReplicas", updated), ("replicas", replicas)):
        if value:
            status[key] = value
    return status


def _lws(name: str, replicas: int, generation: int = 1, **status) -> dict:
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": name, "generation": generation},
            "spec": {"replicas": replicas}, "status": _status(generation, replicas, name=name, **status)}


# -- one LeaderWorkerSet -----------------------------------------------------------------

def test_a_rolled_out_ready_lws_is_ready():
    assert lws_waiting(_lws("a", 2)) is None
    assert lws_waiting(_lws("a", 0)) is None


def test_a_status_of_an_older_generation_is_not_ready():
    # Right after an apply: the template changed (generation 3), the controller has not
    # reconciled, and the old groups are ready and Available.
    lws = _lws("a", 2, generation=3, observed=2, available=True)
    assert lws_waiting(lws) == "LeaderWorkerSet a: its controller has not seen generation 3 yet (status is of 2)"


def test_old_groups_ready_are_not_updated_ones():
    lws = _lws("a", 2, updated=0, ready=2, available=False)
    assert lws_waiting(lws) == "LeaderWorkerSet a: 0/2 groups on the current template"
    assert lws_waiting(_lws("a", 2, updated=2, ready=1)) == "LeaderWorkerSet a: 1/2 groups ready"


def test_an_available_condition_of_an_older_generation_does_not_count():
    lws = _lws("a", 1, generation=2)
    lws["status"]["conditions"][0]["observedGeneration"] = 1
    assert lws_waiting(lws) == "LeaderWorkerSet a: not Available"


def test_a_release_before_0_9_writes_no_observed_generation():
    lws = _lws("a", 1, generation=4)
    del lws["status"]["observedGeneration"]
    del lws["status"]["conditions"][0]["observedGeneration"]
    assert lws_waiting(lws) is None


def test_the_pair_waits_for_its_leaderworkersets():
    plan = plan_of(K3, GB200)[0]
    pods = [{"metadata": {"labels": {**r.selector}}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
            for r in plan.roles for _ in range(r.layout.replicas * r.layout.nodes)]
    # The old behaviour: the pods of the old template, all ready, were enough.
    assert ready_report(plan, pods, EPP, None) == []
    live = [_lws(r.workload_name, r.layout.replicas, generation=2, observed=1) for r in plan.roles]
    assert ready_report(plan, pods, EPP, None, {"lws": live, "set": None}) == [
        f"LeaderWorkerSet {r.workload_name}: its controller has not seen generation 2 yet (status is of 1)"
        for r in plan.roles]
    live = [_lws(r.workload_name, r.layout.replicas, generation=2) for r in plan.roles]
    assert ready_report(plan, pods, EPP, None, {"lws": live, "set": None}) == []
    assert ready_report(plan, pods, EPP, None, {"lws": live[:1], "set": None}) == [
        f"LeaderWorkerSet {plan.roles[1].workload_name}: not in the cluster"]


# -- a DisaggregatedSet --------------------------------------------------------------------

SET_LABELS = ("app", "disaggregatedset.x-k8s.io/role", "disaggregatedset.x-k8s.io/slice",
              "disaggregatedset.x-k8s.io/name", "disaggregatedset.x-k8s.io/revision")


def _children(dset: dict, revision: str, replicas: dict | None = None, **status) -> list[dict]:
    """The set's LeaderWorkerSets as the controller makes them (lws_manager.go:59-99): the
    role's spec, its replicas, the set's labels on the object and the pod templates."""
    name = dset["metadata"]["name"]
    out = []
    for role in dset["spec"]["roles"]:
        added = dict(zip(SET_LABELS, (f"{name}-0-{role['name']}", role["name"], "0", name, revision)))
        spec = copy.deepcopy(role["spec"])
        if replicas is not None:
            spec["replicas"] = replicas[role["name"]]
        for key in ("leaderTemplate", "workerTemplate"):
            if key in spec["leaderWorkerTemplate"]:
                meta = spec["leaderWorkerTemplate"][key]["metadata"]
                meta["labels"] = {**meta["labels"], **added}
        # Server defaults the CRD and the LWS webhook add.
        spec["leaderWorkerTemplate"]["restartPolicy"] = "RecreateGroupOnPodRestart"
        spec["startupPolicy"] = "LeaderCreated"
        spec["networkConfig"] = {"subdomainPolicy": "Shared"}
        child = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                 "metadata": {"name": f"{name}-0-{revision}-{role['name']}", "generation": 1,
                              "labels": {**role["metadata"]["labels"], **added}},
                 "spec": spec}
        child["status"] = _status(1, spec["replicas"], name=child["metadata"]["name"], **status)
        out.append(child)
    return out


@pytest.fixture(scope="module")
def dset():
    plan = plan_of(K3, LWS010)[0]
    (ds,) = [o for o in objects(plan) if o["kind"] == "DisaggregatedSet"]
    live = copy.deepcopy(ds) | {"metadata": {**ds["metadata"], "generation": 2}}  # no status: v0.10.0
    return plan, ds, live


def _changed(ds: dict) -> dict:
    """The set as it ran before one role's template change."""
    old = copy.deepcopy(ds)
    container = old["spec"]["roles"][1]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    container["command"] = [*container["command"][:-1], container["command"][-1] + " --max-num-seqs 16"]
    return old


def test_a_set_whose_revision_has_rolled_out_is_ready(dset):
    plan, ds, live = dset
    assert set_waiting(ds, live, _children(ds, "aaaa1111")) == []
    # ... with the old revision scaled to zero, not yet deleted.
    old = _children(_changed(ds), "bbbb2222", {"prefill": 0, "decode": 0})
    assert set_waiting(ds, live, _children(ds, "aaaa1111") + old) == []


def test_before_the_controller_sees_a_template_change_the_old_ready_pods_do_not_count(dset):
    """Right after applying a decode template change: the only LeaderWorkerSets are the old
    revision's, all ready. ``ready`` used to count their pods and say ready."""
    plan, ds, live = dset
    old = _children(_changed(ds), "bbbb2222")
    pods = [{"metadata": {"labels": {**r.selector, "disaggregatedset.x-k8s.io/revision": "bbbb2222",
                                     "app.kubernetes.io/component": "model-server"}},
             "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
            for r in plan.roles for _ in range(r.layout.replicas * r.layout.nodes)]
    assert ready_report(plan, pods, EPP, None) == []  # the old check
    assert ready_report(plan, pods, EPP, None, {"lws": old, "set": live, "applied": ds}) == [
        f"DisaggregatedSet {ds['metadata']['name']}: its controller has not made the LeaderWorkerSets of the "
        "applied templates yet"]


def test_a_rollout_in_progress_is_not_ready(dset):
    _, ds, live = dset
    name = ds["metadata"]["name"]
    old = _children(_changed(ds), "bbbb2222")
    # initRollingUpdate (executor.go:118-126): the new revision's LeaderWorkerSets at 0 replicas.
    new = _children(ds, "aaaa1111", {"prefill": 0, "decode": 0})
    assert set_waiting(ds, live, old + new) == [
        *(f"DisaggregatedSet {name}: role {r['name']} at 0/1 replicas of revision aaaa1111"
          for r in ds["spec"]["roles"]),
        f"DisaggregatedSet {name}: rolling out, revision bbbb2222 still runs 2 group(s)"]
    # Scaled up but not ready yet, the old one drained.
    new = _children(ds, "aaaa1111", ready=0, available=False)
    drained = _children(_changed(ds), "bbbb2222", {"prefill": 0, "decode": 0})
    assert set_waiting(ds, live, drained + new) == [
        f"LeaderWorkerSet {c['metadata']['name']}: 0/1 groups ready" for c in new]
    # The old revision's groups still terminating (status.replicas) keep it rolling out.
    draining = _children(_changed(ds), "bbbb2222", {"prefill": 0, "decode": 0})
    draining[0]["status"]["replicas"] = 1
    assert set_waiting(ds, live, draining + _children(ds, "aaaa1111")) == [
        f"DisaggregatedSet {name}: rolling out, revision bbbb2222 still runs 1 group(s)"]


def test_a_set_that_writes_observed_generation_is_held_to_it(dset):
    _, ds, live = dset
    newer = copy.deepcopy(live) | {"status": {"observedGeneration": 1}}
    assert set_waiting(ds, newer, _children(ds, "aaaa1111")) == [
        f"DisaggregatedSet {ds['metadata']['name']}: its controller has not seen generation 2 yet (status is of 1)"]
    assert set_waiting(ds, None, []) == [f"DisaggregatedSet {ds['metadata']['name']}: not in the cluster"]


def test_the_template_comparison():
    # Go writes quantities back in canonical form and leaves empty fields out.
    assert template_within({"resources": {"limits": {"memory": "1024Mi"}}}, {"resources": {"limits": {"memory": "1Gi"}}})
    assert not template_within({"resources": {"limits": {"memory": "1024Mi"}}},
                               {"resources": {"limits": {"memory": "2Gi"}}})
    assert template_within({"emptyDir": {"medium": "Memory", "sizeLimit": "2048Mi"}},
                           {"emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}})
    assert template_within({"env": [], "args": None, "a": 1}, {"a": 1, "b": 2})
    # Elsewhere values compare exactly.
    assert not template_within({"env": [{"name": "N", "value": "1e3"}]}, {"env": [{"name": "N", "value": "1000"}]})
    assert not template_within({"x": True}, {"x": 1})
    assert not template_within({"c": [1, 2]}, {"c": [1, 2, 3]})


@pytest.mark.parametrize("odd", [
    {}, {"metadata": "x", "spec": [], "status": "y"},
    {"metadata": {"name": "a", "generation": "2"}, "spec": {"replicas": True}, "status": {"conditions": "no"}},
    {"metadata": {"name": "a\x1b[2J", "generation": 2}, "status": {"observedGeneration": 1.5, "updatedReplicas": None}},
])
def test_odd_live_objects_read_as_not_ready_or_absent(dset, odd):
    """Live objects are cluster text: any shape reads as data, never a crash."""
    _, ds, live = dset
    assert lws_waiting(odd) is None or isinstance(lws_waiting(odd), str)
    child = copy.deepcopy(odd)
    if isinstance(child.get("metadata"), dict):
        child["metadata"]["labels"] = {"disaggregatedset.x-k8s.io/name": ds["metadata"]["name"],
                                       "disaggregatedset.x-k8s.io/revision": ["not", "text"]}
    assert set_waiting(ds, live, [child, odd]) == [
        f"DisaggregatedSet {ds['metadata']['name']}: its controller has not made the LeaderWorkerSets of the "
        "applied templates yet"]
    assert set_waiting(ds, {"metadata": [], "status": "x"}, [odd])[0].startswith("DisaggregatedSet")


def test_ready_reads_the_set_it_waits_for_from_the_applied_objects(dset):
    """``ready`` never renders the set itself: it takes it from the artifact that was applied
    (the caller's), and an artifact without it is one clear error, not a traceback."""
    from manifesto.errors import OpsError
    from manifesto.ops.lifecycle import _applied_set

    plan, ds, _ = dset
    applied = [o for o in objects(plan) if o["kind"] != "DisaggregatedSet"]
    assert _applied_set(plan, [*applied, ds]) is ds
    assert _applied_set(plan_of(K3, GB200)[0], applied) is None  # the pair of LWS runs no set
    for wrong in (applied, [*applied, ds, ds], None):
        with pytest.raises(OpsError, match=f"DisaggregatedSets named '{ds['metadata']['name']}', not one"):
            _applied_set(plan, wrong)
    with pytest.raises(ValueError, match="needs the applied set"):
        ready_report(plan, [], EPP, None, {"lws": [], "set": None})
