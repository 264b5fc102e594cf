"""P/D on the real API: each role's Service selects exactly that role's pods, and the
InferencePool exactly the model-server pods of every role, as the API server's own label
selection answers (not computed here). Pods are matched to their Deployment through the
ownerReferences the controllers wrote.

Only Deployment-based pairs here: the LeaderWorkerSet controller is not in the shared cluster;
test_lws_controller.py runs it (v0.8.0) on a cluster of its own for an LWS pair.
"""

from __future__ import annotations

import time

import pytest

import kit
from realkube import MARKS, documents, namespaces
from test_server_dry_run import ARTIFACTS

pytestmark = MARKS


def _pd_deployment_pairs() -> list:
    out = []
    for path in ARTIFACTS:
        docs = documents(path)
        kinds = {d["kind"] for d in docs}
        roles = {d["spec"]["template"]["metadata"]["labels"].get("manifesto.llm-d.ai/role")
                 for d in docs if d["kind"] == "Deployment"}
        if "InferencePool" in kinds and not kinds & {"LeaderWorkerSet", "DisaggregatedSet"} \
                and {"prefill", "decode"} <= roles:
            out.append(path)
    return out


PAIRS = _pd_deployment_pairs()


def _selector(labels: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def test_some_pairs_were_found():
    assert len(PAIRS) >= 3


@pytest.mark.parametrize("path", PAIRS, ids=lambda p: str(p.relative_to(kit.REPO_ROOT)))
def test_selectors_match_exactly_the_serving_pods(real_cluster, path):
    docs = documents(path)
    (ns,) = namespaces(docs)
    real_cluster.ensure_namespace(ns)
    deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
    real_cluster.kubectl("apply", "--server-side", "-f", str(path))
    try:
        owner: dict[str, str] = {}  # pod -> its Deployment
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            sets = {rs["metadata"]["name"]: rs["metadata"]["ownerReferences"][0]["name"]
                    for rs in real_cluster.get("replicasets", "-n", ns)["items"]
                    if rs["metadata"].get("ownerReferences")}
            pods = real_cluster.get("pods", "-n", ns)["items"]
            owner = {p["metadata"]["name"]: sets.get(p["metadata"]["ownerReferences"][0]["name"], "")
                     for p in pods if p["metadata"].get("ownerReferences")}
            counts = {name: list(owner.values()).count(name) for name in deployments}
            if all(counts[n] == d["spec"].get("replicas", 1) for n, d in deployments.items()):
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"the Deployments' pods did not all appear: {owner}")

        def selected(labels: dict) -> set[str]:
            items = real_cluster.get("pods", "-n", ns, "-l", _selector(labels))["items"]
            return {p["metadata"]["name"] for p in items}

        def pods_of(*names: str) -> set[str]:
            return {pod for pod, deployment in owner.items() if deployment in names}

        serving = [n for n, d in deployments.items()
                   if d["spec"]["template"]["metadata"]["labels"].get("manifesto.llm-d.ai/role") in ("prefill", "decode")]
        for service in (d for d in docs if d["kind"] == "Service"):
            role = service["spec"]["selector"].get("manifesto.llm-d.ai/role")
            if role is None:
                continue
            (deployment,) = [n for n in serving
                             if deployments[n]["spec"]["template"]["metadata"]["labels"]["manifesto.llm-d.ai/role"] == role]
            assert selected(service["spec"]["selector"]) == pods_of(deployment), service["metadata"]["name"]
        (pool,) = [d for d in docs if d["kind"] == "InferencePool"]
        assert selected(pool["spec"]["selector"]["matchLabels"]) == pods_of(*serving)
    finally:
        real_cluster.kubectl("delete", "-f", str(path), "--ignore-not-found", "--wait=true", "--timeout=120s",
                             check=False)
