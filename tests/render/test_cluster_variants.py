"""Kueue, DRA and OpenShift behaviour, asserted on the golden renders' objects."""

from __future__ import annotations

from pathlib import Path

import yaml

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
QUEUE = "kueue.x-k8s.io/queue-name"


def _docs(case: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((GOLDEN / case / "expected.yaml").read_text()) if d]


def _gpu_workloads(docs):
    return [d for d in docs if d["kind"] in ("Deployment", "LeaderWorkerSet")
            and d["metadata"]["labels"].get("app.kubernetes.io/component") == "model-server"]


def _templates(workload) -> list[dict]:
    if workload["kind"] == "Deployment":
        return [workload["spec"]["template"]]
    lwt = workload["spec"]["leaderWorkerTemplate"]
    return [t for t in (lwt.get("leaderTemplate"), lwt["workerTemplate"]) if t]


def test_kueue_labels_follow_the_workload_kind():
    docs = _docs("kueue-lws")
    for wl in _gpu_workloads(docs):
        assert wl["metadata"]["labels"][QUEUE] == "golden-gpu-queue"
        for tpl in _templates(wl):
            on_pod = QUEUE in tpl["metadata"]["labels"]
            assert on_pod == (wl["kind"] == "Deployment"), wl["metadata"]["name"]
    gpu = {id(w) for w in _gpu_workloads(docs)}
    for other in (d for d in docs if id(d) not in gpu):
        assert QUEUE not in other["metadata"].get("labels", {}), other["metadata"]["name"]
        spec = other.get("spec") or {}
        assert "suspend" not in spec


def test_dra_claims_replace_the_gpu_resource():
    docs = _docs("dra-cluster")
    (tmpl,) = [d for d in docs if d["kind"] == "ResourceClaimTemplate"]
    name = tmpl["metadata"]["name"]
    assert len(name) <= 63
    request = tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert request == {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 4}
    (wl,) = _gpu_workloads(docs)
    pod = wl["spec"]["template"]["spec"]
    assert {c["name"]: c["resourceClaimTemplateName"] for c in pod["resourceClaims"]} == {
        "accelerator": name, "compute-domain-channel": "golden-imex-channel"}
    vllm, *others = pod["containers"]
    assert [c["name"] for c in vllm["resources"]["claims"]] == ["accelerator", "compute-domain-channel"]
    assert "nvidia.com/gpu" not in vllm["resources"]["limits"]
    assert vllm["resources"]["requests"]["example.com/rdma"] == "1"
    assert all("claims" not in (c.get("resources") or {}) for c in others)


def test_openshift_binds_the_scc_and_drops_node_exporter():
    docs = _docs("openshift")
    (wl,) = _gpu_workloads(docs)
    pod = wl["spec"]["template"]["spec"]
    names = [c["name"] for c in pod["containers"]]
    assert "dcgm-exporter" in names and "node-exporter" not in names
    (binding,) = [d for d in docs if d["kind"] == "RoleBinding" and d["roleRef"]["kind"] == "ClusterRole"]
    assert binding["roleRef"]["name"] == "system:openshift:scc:golden-gpu-scc"
    assert binding["subjects"][0]["name"] == pod["serviceAccountName"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["USER"]
    for d in docs:
        spec = (d.get("spec") or {}).get("template", {}).get("spec")
        if spec is not None:
            assert spec.get("imagePullSecrets") == [{"name": "golden-registry"}], d["metadata"]["name"]
