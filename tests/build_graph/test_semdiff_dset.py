"""``diff --base`` on prefill/decode rendered as one DisaggregatedSet: a role's template change
rolls every role together, a role added or removed recreates, replica counts scale in place."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from kit import REPO_ROOT
from manifesto.review.semdiff import Impact, classify, diff_artifacts
from manifesto.cluster import load_cluster
from manifesto.render import render
from manifesto.spec import load_spec

LWS010 = REPO_ROOT / "clusters" / "example-gb200-lws.yaml"
GB200 = REPO_ROOT / "clusters" / "example-gb200.yaml"

PD = {
    "release": "review-set", "topology": "pd",
    "model": {"id": "Qwen/Qwen3-0.6B", "label": "Qwen3-0.6B", "image_ref": "vllm.standard"},
    "routing": {"kind": "pd", "target_role": "decode"}, "runtime": {"sidecars": []},
    "roles": [{"name": n, "workload": "leaderworkerset", "parallelism": {"tp": 1, "dp": False, "ep": False},
               "kv_transfer_config": {"kv_connector": "NixlConnector", "kv_role": "kv_both"},
               "vllm": {"max_model_len": 8192}} for n in ("prefill", "decode")],
}


def _render(tmp_path: Path, spec: dict, name: str, cluster: Path = LWS010) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return render(load_spec(str(path), load_cluster(str(cluster))), user="tester", namespace="demo")


def _edited(change) -> dict:
    spec = copy.deepcopy(PD)
    change(spec)
    return spec


def _role(spec: dict, name: str) -> dict:
    return next(r for r in spec["roles"] if r["name"] == name)


def _set_change(d):
    (change,) = [o for o in d.objects if o.kind == "DisaggregatedSet"]
    return change


def _third_role(spec):
    spec["roles"].insert(1, copy.deepcopy(_role(spec, "prefill")) | {"name": "prefill-long"})


OUTAGE = "and the rollout leaves prefill, decode with no serving replica: an outage"


def _two_each(spec):
    for role in spec["roles"]:
        role["lws"] = {"replicas": 2}


def _both(*changes):
    def change(spec):
        for c in changes:
            c(spec)
    return change


CASES = [
    # One replica a role: the set's rollout (maxSurge 0) stops each role's only replica before
    # its new one is ready: an outage, reviewed as a recreate.
    ("decode-arg", lambda s: _role(s, "decode")["vllm"].update(max_num_seqs=64), Impact.RECREATE,
     "pod template of decode changed: the DisaggregatedSet rolls every role (prefill, decode) out together to a "
     f"new revision, {OUTAGE}", "decode: args: +--max-num-seqs 64"),
    ("prefill-tp", lambda s: _role(s, "prefill")["parallelism"].update(tp=2), Impact.RECREATE,
     "pod template of prefill changed", "prefill: TP 1\u21922; +1 GPUs"),
    ("group-size", lambda s: _role(s, "decode").update(lws={"size": 2}, parallelism={"tp": 8}), Impact.RECREATE,
     "decode group size 1\u21922: the DisaggregatedSet rolls every role", "decode: TP 1\u21928"),
    ("replicas", lambda s: _role(s, "prefill").update(lws={"replicas": 3}), Impact.IN_PLACE,
     "no pod template change (replicas and slices scale without a rollout)", "prefill: +2 pods; +2 GPUs"),
    ("role-added", _third_role, Impact.RECREATE,
     "role prefill-long added: every role gets new LeaderWorkerSets of a new revision", "prefill-long: added"),
]


@pytest.mark.parametrize("change,impact,why,line", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_set_change_gets_its_impact(tmp_path, change, impact, why, line):
    old = _render(tmp_path, PD, "before")
    new = _render(tmp_path, _edited(change), "after")
    d = diff_artifacts("c/m.yaml", old, new)
    assert d is not None and d.impact is impact, [(o.kind, o.name, o.impact, o.why) for o in d.objects]
    change = _set_change(d)
    assert change.impact is impact and why in change.why, change.why
    assert any(r.startswith(line) for r in d.roles), d.roles


def test_a_role_removed_recreates(tmp_path):
    three = _edited(_third_role)
    d = diff_artifacts("c/m.yaml", _render(tmp_path, three, "before"), _render(tmp_path, PD, "after"))
    change = _set_change(d)
    assert change.impact is Impact.RECREATE and change.why.startswith("role prefill-long removed")
    assert any(r.startswith("prefill-long: removed (was 1 pods") for r in d.roles), d.roles


def test_the_set_reports_both_roles_gpus(tmp_path):
    d = diff_artifacts("c/m.yaml", None, _render(tmp_path, PD, "new"))
    assert d.status == "added" and d.after.gpus == 2 and d.after.pods == 2
    assert sorted(r.split(":")[0] for r in d.roles) == ["decode", "prefill"]


def test_moving_from_the_pair_to_the_set(tmp_path):
    """The same spec on a cluster that now declares LWS 0.10: the pair's LeaderWorkerSets go
    (their servers stop) and the set comes; the roles themselves do not change."""
    d = diff_artifacts("c/m.yaml", _render(tmp_path, PD, "pair", GB200), _render(tmp_path, PD, "set"))
    changes = {(o.kind, o.name): (o.change, o.impact) for o in d.objects}
    assert changes[("DisaggregatedSet", "review-set")] == ("added", Impact.IN_PLACE)
    assert changes[("LeaderWorkerSet", "review-set-decode")] == ("removed", Impact.RECREATE)
    assert d.impact is Impact.RECREATE
    assert not any(r.startswith(("decode:", "prefill:")) and "TP" in r for r in d.roles), d.roles


def test_going_back_to_the_pair_stops_the_sets_servers(tmp_path):
    pair = PD | {"pd_workload": "lws-pair"}
    d = diff_artifacts("c/m.yaml", _render(tmp_path, PD, "set"), _render(tmp_path, pair, "pair"))
    changes = {(o.kind, o.name): (o.change, o.impact, o.why) for o in d.objects}
    assert changes[("DisaggregatedSet", "review-set")] == ("removed", Impact.RECREATE, "its model servers stop")
    assert changes[("LeaderWorkerSet", "review-set-prefill")][:2] == ("added", Impact.IN_PLACE)


@pytest.mark.parametrize("old,new,impact", [
    ([("p", 1, {"size": 1, "x": 1}), ("d", 1, {"size": 1})], [("p", 2, {"size": 1, "x": 1}), ("d", 5, {"size": 1})],
     Impact.IN_PLACE),
    ([("p", 1, {"size": 1}), ("d", 1, {"size": 1})], [("p", 1, {"size": 1}), ("d", 1, {"size": 2})], Impact.ROLLING),
    ([("p", 1, {"size": 1}), ("d", 1, {"size": 1})], [("d", 1, {"size": 1}), ("p", 1, {"size": 1})], Impact.RECREATE),
    ([("p", 1, {"size": 1}), ("d", 1, {"size": 1})], [("p", 1, {"size": 1})], Impact.RECREATE),
], ids=["replicas", "size", "reordered", "removed"])
def test_classify_a_set(old, new, impact):
    def ds(roles):
        return {"kind": "DisaggregatedSet", "metadata": {"name": "s"},
                "spec": {"roles": [{"name": n, "spec": {"replicas": r, "leaderWorkerTemplate": t}} for n, r, t in roles]}}
    assert classify("DisaggregatedSet", ds(old), ds(new))[0] is impact


def test_two_replicas_a_role_keep_serving_through_a_rollout(tmp_path):
    """maxSurge 0, maxUnavailable 1 (what the set renders): one old replica stops at a time, after
    the new revision's are ready, so each role of two keeps one serving."""
    two = _edited(_two_each)
    d = diff_artifacts("c/m.yaml", _render(tmp_path, two, "before"),
                       _render(tmp_path, _edited(_both(_two_each, lambda s: _role(s, "decode")["vllm"].update(
                           max_num_seqs=64))), "after"))
    change = _set_change(d)
    assert change.impact is Impact.ROLLING and d.impact is Impact.ROLLING
    assert change.why.endswith("to a new revision, each role keeping replicas serving throughout"), change.why
    # Before: maxUnavailable 100% (the LeaderWorkerSet's own setting) drained both roles to zero.
    old, new = (yaml.safe_load_all(_render(tmp_path, two, n)) for n in ("b", "a"))
    (old,) = [o for o in old if o and o["kind"] == "DisaggregatedSet"]
    (new,) = [o for o in new if o and o["kind"] == "DisaggregatedSet"]
    for role in new["spec"]["roles"]:
        role["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]["x"] = "y"
    assert classify("DisaggregatedSet", old, new)[0] is Impact.ROLLING
    for role in (*old["spec"]["roles"], *new["spec"]["roles"]):
        role["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] = {"maxUnavailable": "100%"}
    impact, why = classify("DisaggregatedSet", old, new)
    assert impact is Impact.RECREATE and OUTAGE in why, why


def _set(**role_fields):
    def role(name):
        entry = {"name": name, "metadata": {"labels": {"a": "1"}},
                 "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 1, "workerTemplate": {}},
                          "rolloutStrategy": {"type": "RollingUpdate",
                                              "rollingUpdateConfiguration": {"maxSurge": 0, "maxUnavailable": 1}}}}
        for path, value in role_fields.items():
            where, key = (entry, path) if path == "metadata" else (entry["spec"], path)
            where[key] = copy.deepcopy(value)
        return entry
    return {"kind": "DisaggregatedSet", "metadata": {"name": "s"}, "spec": {"roles": [role("p"), role("d")]}}


@pytest.mark.parametrize("field,value", [
    ("metadata", {"labels": {"a": "2"}}),
    ("metadata", {"labels": {"a": "1"}, "annotations": {"n": "v"}}),
    ("startupPolicy", "LeaderReady"),
    ("networkConfig", {"subdomainPolicy": "UniquePerReplica"}),
], ids=["labels", "annotations", "startupPolicy", "networkConfig"])
def test_what_the_controller_never_copies_to_running_children_is_a_recreate(field, value):
    # lws_manager.go:59-111 (v0.10.0) creates a role's LeaderWorkerSet with these once and leaves
    # an existing one alone (:101-104); Scale (:113-131) patches replicas only; the revision
    # hashes names and leaderWorkerTemplates only (utils.go:144-169). Before: "in place".
    impact, why = classify("DisaggregatedSet", _set(), _set(**{field: value}))
    assert impact is Impact.RECREATE, why
    assert "never updates a running one" in why and "manifesto stop, then deploy" in why


def test_a_rollout_strategy_change_is_read_by_the_next_rollout():
    # executor.go:268-300 reads each role's rollingUpdateConfiguration from the set itself.
    new = _set(rolloutStrategy={"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxSurge": 1}})
    impact, why = classify("DisaggregatedSet", _set(), new)
    assert impact is Impact.IN_PLACE and why.startswith("rolloutStrategy of p, d changed: the set's next rollout"), why


def test_a_template_change_carries_the_copied_fields():
    """With a pod template change every role gets LeaderWorkerSets of a new revision, made from
    the set as it is: the labels come with the rollout."""
    new = _set(metadata={"labels": {"a": "2"}}, leaderWorkerTemplate={"size": 1, "workerTemplate": {"x": 1}})
    impact, why = classify("DisaggregatedSet", _set(), new)
    assert impact is Impact.ROLLING and "each role keeping replicas serving" in why, why


@pytest.mark.parametrize("rolling,replicas", [({"maxUnavailable": "lots"}, 1), ({"maxUnavailable": 1}, 5000),
                                              ({"maxUnavailable": "-5%"}, 2)])
def test_a_rollout_it_cannot_plan_is_said_so(rolling, replicas):
    old = _set(replicas=replicas, rolloutStrategy={"type": "RollingUpdate", "rollingUpdateConfiguration": rolling})
    new = copy.deepcopy(old)
    new["spec"]["roles"][0]["spec"]["leaderWorkerTemplate"]["workerTemplate"] = {"x": 1}
    impact, why = classify("DisaggregatedSet", old, new)
    assert impact is Impact.ROLLING and "is not worked out" in why, why


def test_a_set_with_an_odd_rollout_value_is_one_error(tmp_path):
    text = _render(tmp_path, PD, "odd").replace("maxUnavailable: 1", "maxUnavailable: [1]", 1)
    from manifesto.errors import BuildError

    with pytest.raises(BuildError) as err:
        diff_artifacts("c/m.yaml", _render(tmp_path, PD, "ok"), text)
    assert "expected" in str(err.value) and "maxUnavailable" in str(err.value)
