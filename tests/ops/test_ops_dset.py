"""Cluster workflows on a DisaggregatedSet: deploy's pre-flight and kind transitions, stop's
phases, ready across a rollout, status with idle-shutdown scaling (pure functions)."""

from __future__ import annotations

import copy

import pytest

from kit import REPO_ROOT, plan_of
from manifesto.ops.deploy import pod_requests, required_apis, transitions
from manifesto.ops.discovery import Live
from manifesto.ops.lifecycle import ready_report, teardown_phases
from manifesto.ops.targets import object_states
from manifesto.render.k8s import objects, with_digest

K3 = REPO_ROOT / "models" / "kimi-k3" / "1P-1D-DP4-TP4.yaml"
LWS010 = REPO_ROOT / "clusters" / "example-gb200-lws.yaml"
GB200 = REPO_ROOT / "clusters" / "example-gb200.yaml"
QUEUE = "kueue.x-k8s.io/queue-name"
DSET_NAME = "disaggregatedset.x-k8s.io/name"
COMPONENT = "app.kubernetes.io/component"


@pytest.fixture(scope="module")
def dset():
    plan = plan_of(K3, LWS010)[0]
    return plan, objects(plan)


@pytest.fixture(scope="module")
def pair():
    plan = plan_of(K3, GB200)[0]
    return plan, objects(plan)


def _live(kind: str, name: str, **labels: str) -> Live:
    return Live(kind, name, tuple(sorted(labels.items())))


def test_deploy_needs_both_apis_for_a_set(dset, pair):
    apis = [api for api, _ in required_apis(dset[1], None, False)]
    assert apis == ["leaderworkerset.x-k8s.io/v1", "disaggregatedset.x-k8s.io/v1"]
    assert [api for api, _ in required_apis(pair[1], None, False)] == ["leaderworkerset.x-k8s.io/v1"]


def test_moving_into_a_set_deletes_the_pairs_leaderworkersets_first(dset):
    plan, objs = dset
    live = [_live("LeaderWorkerSet", f"{plan.instance}-decode"), _live("LeaderWorkerSet", f"{plan.instance}-prefill"),
            # the set's own children, created by its controller, stay
            _live("LeaderWorkerSet", f"{plan.instance}-0-0123abcd-decode", **{DSET_NAME: plan.instance}),
            _live("DisaggregatedSet", plan.instance),
            _live("Deployment", f"{plan.instance}-infpool-epp", **{COMPONENT: "endpoint-picker"})]
    model = {COMPONENT: "model-server"}
    live[:2] = [_live("LeaderWorkerSet", o.name, **model) for o in live[:2]]
    live.append(_live("Deployment", f"{plan.instance}-prefill-old", **model))  # a one-node role of before
    assert [(o.name, why) for o, why in transitions(objs, live)] == [
        (f"{plan.instance}-decode", f"its role moves into DisaggregatedSet {plan.instance}"),
        (f"{plan.instance}-prefill", f"its role moves into DisaggregatedSet {plan.instance}"),
        (f"{plan.instance}-prefill-old", f"its role moves into DisaggregatedSet {plan.instance}")]


def test_moving_out_of_a_set_deletes_it_first(pair):
    plan, objs = pair
    live = [_live("DisaggregatedSet", plan.instance),
            _live("LeaderWorkerSet", f"{plan.instance}-0-0123abcd-decode", **{DSET_NAME: plan.instance}),
            _live("LeaderWorkerSet", f"{plan.instance}-decode")]
    assert [(o.kind, o.name, why) for o, why in transitions(objs, live)] == [
        ("DisaggregatedSet", plan.instance, "its roles move out into their own workloads")]


def test_a_queue_change_recreates_the_set(dset):
    plan, objs = dset
    queued = copy.deepcopy(objs)
    for o in queued:
        if o["kind"] == "DisaggregatedSet":
            o["metadata"]["labels"][QUEUE] = "gpu-queue"
    live = [_live("DisaggregatedSet", plan.instance)]
    assert [why for _, why in transitions(queued, live)] == [
        f"DisaggregatedSet {plan.instance} changes Kueue queue (none) -> gpu-queue"]
    assert transitions(objs, live) == []


def test_a_priority_class_change_recreates_the_set(dset):
    # The set's roles carry the priority class on their metadata only, which the controller
    # copies onto a role's LeaderWorkerSet when it creates one (lws_manager.go:59-104, v0.10.0).
    plan, objs = dset
    prioritised = copy.deepcopy(objs)
    for o in prioritised:
        if o["kind"] == "DisaggregatedSet":
            o["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    live = [_live("DisaggregatedSet", plan.instance)]
    assert [why for _, why in transitions(prioritised, live)] == [
        f"DisaggregatedSet {plan.instance} changes Kueue priority class (none) -> high"]
    assert transitions(objs, live) == []


def test_kueue_preflight_reads_every_roles_templates(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(LWS010.read_text().replace("# kueue:\n#   local_queue: demo-gpu-queue",
                                              "kueue:\n  local_queue: gpu-queue"))
    plan = plan_of(K3, path)[0]
    rows = pod_requests(objects(plan))
    where = sorted({r[0].split(" container ")[0].split(" init-container ")[0] for r in rows})
    assert where == [f"DisaggregatedSet/{plan.instance} role decode workerTemplate",
                     f"DisaggregatedSet/{plan.instance} role prefill workerTemplate"]
    assert all(req.get("nvidia.com/gpu") == "4" for name, req in rows if name.endswith("container vllm"))


def test_stop_deletes_the_set_with_the_model_workloads(dset):
    plan, _ = dset
    live = [_live("DisaggregatedSet", plan.instance),
            _live("LeaderWorkerSet", f"{plan.instance}-0-0123abcd-decode"),
            _live("InferencePool", f"{plan.instance}-infpool"), _live("Service", f"{plan.instance}-decode-http")]
    phases = dict(teardown_phases(live))
    assert [o.kind for o in phases["model workloads"]] == ["DisaggregatedSet", "LeaderWorkerSet"]


def _pod(role: str, revision: str | None, ready: bool = True) -> dict:
    labels = {"app.kubernetes.io/instance": "kimi-k3-1p-1d-dp4tp4", "app.kubernetes.io/component": "model-server",
              "manifesto.llm-d.ai/role": role}
    if revision:
        labels["disaggregatedset.x-k8s.io/revision"] = revision
    return {"metadata": {"labels": labels},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def test_ready_waits_for_a_rollout_to_finish(dset, pair):
    plan, _ = dset
    epp = {"status": {"conditions": [{"type": "Available", "status": "True"}]}}
    new = [_pod(r, "bbbb2222") for r in ("decode", "prefill") for _ in range(4)]
    assert ready_report(plan, new, epp, None) == []
    old = [_pod("decode", "aaaa1111")]
    assert ready_report(plan, new + old, epp, None) == [
        f"DisaggregatedSet {plan.instance}: rolling out (2 revisions live)"]
    # The pair has no revisions: unchanged.
    assert ready_report(pair[0], [_pod(r, None) for r in ("decode", "prefill") for _ in range(4)], epp, None) == []


def test_status_counts_both_roles_scaled_to_zero_as_idle(dset):
    _, objs = dset
    objs = with_digest(objs)
    live = {(o["kind"], o["metadata"]["name"]): copy.deepcopy(o) for o in objs}
    (ds,) = [o for o in objs if o["kind"] == "DisaggregatedSet"]
    scaled = live[("DisaggregatedSet", ds["metadata"]["name"])]
    for role in scaled["spec"]["roles"]:
        role["spec"]["replicas"] = 0
    states = {(k, n): s for k, n, s, _ in object_states(objs, live)}
    assert states[("DisaggregatedSet", ds["metadata"]["name"])] == "idle"
    # Server defaults of the CRD are no drift; another change is.
    scaled["spec"]["slices"] = 1
    scaled["spec"]["roles"][0]["spec"]["startupPolicy"] = "LeaderCreated"
    assert {(k, n): s for k, n, s, _ in object_states(objs, live)}[("DisaggregatedSet", ds["metadata"]["name"])] == "idle"
    scaled["spec"]["roles"][0]["spec"]["leaderWorkerTemplate"]["size"] = 8
    assert {(k, n): s for k, n, s, _ in object_states(objs, live)}[("DisaggregatedSet", ds["metadata"]["name"])] == \
        "drifted"
