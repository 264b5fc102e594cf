"""Drift that kubectl diff cannot see: live fields another writer added, read from the live
object's managedFields (manifesto.ops.targets.foreign_fields). The same rule runs against
the real API in tests/cluster/test_lifecycle.py."""

from __future__ import annotations

import json

from manifesto.ops.targets import foreign_fields


def _entry(manager: str, fields: dict, **extra) -> dict:
    return {"manager": manager, "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
            "fieldsV1": fields, **extra}


def _key(**item) -> str:
    return "k:" + json.dumps(item, separators=(",", ":"))


WANT = {"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "m", "labels": {"app": "m"}},
        "spec": {"template": {"spec": {"containers": [{"name": "vllm", "image": "v:1",
                                                        "env": [{"name": "A", "value": "1"}]}]}}}}


def _live(*entries: dict, labels=None, env=None) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "m", "labels": labels or {"app": "m"}, "managedFields": list(entries),
                         "annotations": {"deployment.kubernetes.io/revision": "2"}},
            "spec": {"revisionHistoryLimit": 10, "template": {"spec": {"containers": [
                {"name": "vllm", "image": "v:1", "imagePullPolicy": "IfNotPresent",
                 "env": env or [{"name": "A", "value": "1"}]}]}}},
            "status": {"replicas": 1}}


OURS = _entry("kubectl-client-side-apply", {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                                            "f:spec": {"f:revisionHistoryLimit": {}}})


def test_server_defaults_under_our_own_writes_are_not_drift():
    # revisionHistoryLimit and imagePullPolicy were defaulted in our apply: ours, or no one's
    assert foreign_fields(WANT, _live(OURS)) == []


def test_a_label_and_an_env_var_added_by_others_are_drift_named_with_their_writer():
    label = _entry("kubectl-label", {"f:metadata": {"f:labels": {"f:team": {}}}})
    env = _entry("kubectl-edit", {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        _key(name="vllm"): {"f:env": {_key(name="B"): {".": {}, "f:name": {}, "f:value": {}}}}}}}}})
    live = _live(OURS, label, env, labels={"app": "m", "team": "x"},
                 env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    assert foreign_fields(WANT, live) == [
        ("metadata.labels.team", "x", "kubectl-label"),
        ("spec.template.spec.containers[name=vllm].env[name=B]", {"name": "B", "value": "2"}, "kubectl-edit")]


def test_a_field_of_the_file_changed_by_another_writer_is_left_to_kubectl_diff():
    image = _entry("kubectl-set", {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        _key(name="vllm"): {"f:image": {}}}}}}})
    assert foreign_fields(WANT, _live(OURS, image)) == []


def test_status_subresources_controller_annotations_and_skipped_fields_are_not_drift():
    status = _entry("kube-controller-manager", {"f:metadata": {"f:annotations": {
        "f:deployment.kubernetes.io/revision": {}}}, "f:status": {"f:replicas": {}}}, subresource="status")
    revision = _entry("some-controller", {"f:metadata": {"f:annotations": {
        "f:deployment.kubernetes.io/revision": {}}}})
    stamp = _entry("idle", {"f:metadata": {"f:labels": {"f:stamp": {}}}})
    live = _live(OURS, status, revision, stamp, labels={"app": "m", "stamp": "t"})
    assert foreign_fields(WANT, live, skip=("metadata.labels.stamp",)) == []


def test_a_field_owned_but_no_longer_live_and_malformed_entries_are_ignored():
    gone = _entry("kubectl-label", {"f:metadata": {"f:labels": {"f:gone": {}}}})
    odd = [None, "x", _entry("m", "not a mapping"), _entry("m", {"k:not json": {}, "i:x": {}, "v:[": {}})]
    assert foreign_fields(WANT, _live(OURS, gone, *odd)) == []


def test_a_map_the_file_lacks_is_named_field_by_field():
    added = _entry("kubectl-annotate", {"f:metadata": {"f:annotations": {".": {}, "f:a": {}, "f:b": {}}}})
    live = _live(OURS, added)
    live["metadata"]["annotations"].update(a="1", b="2")
    assert foreign_fields(WANT, live) == [("metadata.annotations.a", "1", "kubectl-annotate"),
                                          ("metadata.annotations.b", "2", "kubectl-annotate")]


def test_set_items_and_positions():
    want = {"metadata": {"finalizers": ["a"]}, "spec": {"args": ["--x"]}}
    live = {"metadata": {"finalizers": ["a", "b"], "managedFields": [_entry("other", {
        "f:metadata": {"f:finalizers": {"v:\"a\"": {}, "v:\"b\"": {}}},
        "f:spec": {"f:args": {"i:0": {}, "i:1": {}}}})]}, "spec": {"args": ["--x", "--y"]}}
    assert foreign_fields(want, live) == [('metadata.finalizers["b"]', "b", "other"), ("spec.args[1]", "--y", "other")]
