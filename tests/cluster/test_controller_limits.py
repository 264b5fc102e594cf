"""Limits the renderer checks that only a controller enforces, confirmed on the real one.

The StatefulSet controller labels each pod ``controller-revision-hash=<StatefulSet
name>-<hash>``, the hash up to 10 characters: a name that fits a DNS label can still make
every pod creation fail. ``render/k8s/validity.py`` (REVISION_HASH) budgets for it.
"""

from __future__ import annotations

import json
import time

from manifesto.render.k8s.validity import REVISION_HASH
from realkube import MARKS

pytestmark = MARKS

NS = "controller-limits"


def _statefulset(name: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": 1, "serviceName": "none", "selector": {"matchLabels": {"set": name[:40]}},
                     "template": {"metadata": {"labels": {"set": name[:40]}},
                                  "spec": {"containers": [{"name": "c", "image": "registry.invalid/none:1"}]}}}}


def _outcome(cluster, name: str, timeout: float = 60) -> str:
    """"created" once the StatefulSet's pod exists, else the controller's FailedCreate message."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pods = cluster.get("pods", "-n", NS)["items"]
        if any(p["metadata"]["name"] == f"{name}-0" for p in pods):
            return "created"
        events = cluster.get("events", "-n", NS, "--field-selector",
                             f"involvedObject.name={name},reason=FailedCreate")["items"]
        if events:
            return events[0]["message"]
        time.sleep(0.5)
    raise AssertionError(f"neither a pod nor a FailedCreate event for StatefulSet {name}")


def test_statefulset_revision_label_limit(real_cluster):
    real_cluster.ensure_namespace(NS)
    fits = "f" * (63 - 1 - REVISION_HASH)  # 52: fits with any hash
    longest = "l" * 60                      # any hash overflows
    for name in (fits, longest):
        real_cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(_statefulset(name)))
    assert _outcome(real_cluster, fits) == "created"
    message = _outcome(real_cluster, longest)
    assert "must be no more than 63" in message and "metadata.labels" in message, message
    # (53 characters is refused or not depending on the hash's length, 9 or 10 characters.)
    label = real_cluster.get("pods", "-n", NS, "-l", f"set={fits[:40]}")["items"][0]["metadata"]["labels"]
    assert label["controller-revision-hash"].startswith(fits + "-")
    assert len(label["controller-revision-hash"]) <= len(fits) + 1 + REVISION_HASH
