"""A representative set of artifacts applied for real, then applied again: the second
apply changes nothing (no object's content, generation and field ownership included,
moves, and ``kubectl diff --server-side`` finds no difference in between)."""

from __future__ import annotations

import pytest

import kit
from realkube import MARKS, documents, namespaces

pytestmark = MARKS

REPRESENTATIVE = {
    "aggregated Deployment": "out/example-gb200/qwen/aggregated.yaml",
    "multi-node LWS": "tests/golden/tp2-pp2-two-nodes-lws/expected.yaml",
    "P/D pair of LWS": "out/example-gb200/deepseek-v4/1P-EP8-1D-EP8.yaml",
    "P/D pair of Deployments": "out/example-gb200/qwen/qwen3-0.6b-pd.yaml",
    "DisaggregatedSet": "out/example-gb200-lws/deepseek-v4/1P-EP8-1D-EP8.yaml",
    "routing stack with Gateway": "tests/golden/load-aware-gateway/expected.yaml",
    "DRA": "tests/golden/dra-cluster/expected.yaml",
    "Kueue": "tests/golden/kueue-lws/expected.yaml",
    "monitoring": "out/monitoring/example-gb200.yaml",
    "GitOps": "out/gitops/argocd.yaml",
    "bootstrap": "tests/golden/bootstrap/expected.yaml",
}


# Written by the deployment controller, not by the apply.
_CONTROLLER_ANNOTATIONS = {"deployment.kubernetes.io/revision"}


def _content(cluster, path) -> dict[tuple[str, str, str], dict]:
    """(kind, namespace, name) -> the live object without status, resourceVersion and
    the managedFields' timestamps: what an apply that changes something would change."""
    live = cluster.get("-f", str(path))
    out = {}
    for obj in live.get("items", [live]):
        meta = obj["metadata"]
        obj.pop("status", None)
        meta.pop("resourceVersion", None)
        for entry in meta.get("managedFields", []):
            entry.pop("time", None)
        for key in _CONTROLLER_ANNOTATIONS:
            meta.get("annotations", {}).pop(key, None)
        out[(obj["kind"], meta.get("namespace", ""), meta["name"])] = obj
    return out


def _leaves(node, prefix=()) -> dict[tuple, object]:
    if isinstance(node, dict):
        return {k: v for key, child in node.items() for k, v in _leaves(child, (*prefix, key)).items()}
    if isinstance(node, list):
        return {k: v for i, child in enumerate(node) for k, v in _leaves(child, (*prefix, i)).items()}
    return {prefix: node}


def _changed(before: dict, after: dict) -> list[str]:
    """The paths whose values differ, with both values."""
    old, new = _leaves(before), _leaves(after)
    return [f"{'.'.join(map(str, path))}: {old.get(path)!r} -> {new.get(path)!r}"
            for path in sorted(old.keys() | new.keys(), key=str) if old.get(path) != new.get(path)]


@pytest.mark.parametrize("what", sorted(REPRESENTATIVE))
def test_second_apply_changes_nothing(real_cluster, what):
    path = kit.REPO_ROOT / REPRESENTATIVE[what]
    docs = documents(path)
    assert docs
    for ns in sorted(namespaces(docs)):
        real_cluster.ensure_namespace(ns)
    try:
        first = real_cluster.kubectl("apply", "--server-side", "-f", str(path))
        assert first.stdout.count("serverside-applied") == len(docs), first.stdout
        # Controllers write status and their own annotations; settle on the spec side.
        diff = real_cluster.kubectl("diff", "--server-side", "-f", str(path), check=False)
        assert diff.returncode == 0, f"kubectl diff after apply:\n{diff.stdout}{diff.stderr}"
        before = _content(real_cluster, path)
        real_cluster.kubectl("apply", "--server-side", "-f", str(path))
        after = _content(real_cluster, path)
        # Not resourceVersion: the API server writes a PersistentVolumeClaim once more on
        # its first re-apply (a plain one from kubectl too) without changing its content.
        moved = {key: _changed(before[key], after[key]) for key in before if before[key] != after[key]}
        assert not moved, f"the second apply changed: {moved}"
    finally:
        real_cluster.kubectl("delete", "-f", str(path), "--ignore-not-found", "--wait=true", "--timeout=120s",
                             check=False)
