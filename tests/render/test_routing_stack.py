"""The llm-d routing layer: pool, picker config, frontends, bootstrap."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kit import run_cli, validate_manifests

pytestmark = pytest.mark.integration  # every test here starts a process

REPO = Path(__file__).resolve().parents[2]


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def _render(*args: str) -> str:
    proc = run_cli("render", "manifest", *args, "--user", "u", "--namespace", "ns", env={"MANIFESTO_NO_CACHE": "1"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _kind(docs, kind, name=None):
    return [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]


def test_epp_configmap_holds_exactly_the_selected_profile():
    text = _render("qwen/aggregated", "--cluster", "example-gb200", "--routing-profile", "kv-aware")
    docs = _docs(text)
    (cm,) = [d for d in _kind(docs, "ConfigMap") if d["metadata"]["name"].endswith("-epp-config")]
    assert cm["data"] == {"plugins.yaml": (REPO / "routing" / "kv-aware.yaml").read_text()}
    (epp,) = _kind(docs, "Deployment", cm["metadata"]["name"].replace("-epp-config", "-infpool-epp"))
    args = epp["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--config-file=/etc/epp/plugins.yaml" in args


def test_changing_the_profile_changes_nothing_in_model_workloads():
    a = _docs(_render("qwen/aggregated", "--cluster", "example-gb200", "--routing-profile", "kv-aware"))
    b = _docs(_render("qwen/aggregated", "--cluster", "example-gb200"))
    from manifesto.render.k8s import DIGEST_ANNOTATION

    def model(docs):  # the artifact digest differs with any change; the workloads must not
        found = [d for d in docs if d["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "model-server"]
        for d in found:
            d["metadata"]["annotations"].pop(DIGEST_ANNOTATION, None)
        return found

    assert model(a) == model(b) and model(a)
    assert [d for d in a if d["kind"] == "ConfigMap"] != [d for d in b if d["kind"] == "ConfigMap"]


def test_pool_targets_every_serving_rank_port():
    docs = _docs(_render("qwen/h200-aggregated", "--cluster", "example-h200"))
    (pool,) = _kind(docs, "InferencePool")
    (workload,) = [d for d in docs if d["kind"] == "Deployment"
                   and d["metadata"]["labels"]["app.kubernetes.io/component"] == "model-server"]
    ports = [p["containerPort"] for p in workload["spec"]["template"]["spec"]["containers"][0]["ports"]
             if p["name"].startswith("vllm-")]
    assert [p["number"] for p in pool["spec"]["targetPorts"]] == ports == [8000, 8001, 8002, 8003]
    assert pool["spec"]["endpointPickerRef"]["port"] == {"number": 9002}


def test_standalone_frontend_exposes_port_80_and_runs_envoy():
    docs = _docs(_render("qwen/aggregated", "--cluster", "example-gb200"))
    (svc,) = [d for d in _kind(docs, "Service") if d["metadata"]["name"].endswith("-infpool-epp")]
    assert {p["name"]: (p["port"], p["targetPort"]) for p in svc["spec"]["ports"]} == {
        "grpc": (9002, 9002), "http": (80, 8081)}
    (envoy_cm,) = [d for d in _kind(docs, "ConfigMap") if d["metadata"]["name"].endswith("-envoy-config")]
    config = yaml.safe_load(envoy_cm["data"]["envoy.yaml"])
    clusters = {c["name"]: c for c in config["static_resources"]["clusters"]}
    assert clusters["picked-endpoint"]["original_dst_lb_config"]["http_header_name"] == "x-gateway-destination-endpoint"
    assert not _kind(docs, "Gateway")


def test_gateway_frontend(tmp_path):
    spec = tmp_path / "gw.yaml"
    spec.write_text((REPO / "models/qwen/aggregated.yaml").read_text()
                    .replace("target_role: decode}", "target_role: decode, frontend: gateway}"))
    docs = _docs(_render(str(spec), "--cluster", "example-gb200"))
    (gw,) = _kind(docs, "Gateway")
    (route,) = _kind(docs, "HTTPRoute")
    (pool,) = _kind(docs, "InferencePool")
    assert route["spec"]["parentRefs"][0]["name"] == gw["metadata"]["name"]
    assert route["spec"]["rules"][0]["backendRefs"][0]["name"] == pool["metadata"]["name"]
    (epp,) = [d for d in _kind(docs, "Deployment") if d["metadata"]["name"].endswith("-infpool-epp")]
    assert [c["name"] for c in epp["spec"]["template"]["spec"]["containers"]] == ["epp"]


def test_pd_decode_pods_carry_the_proxy_and_both_roles_are_labelled():
    docs = _docs(_render("qwen/qwen3-0.6b-pd", "--cluster", "example-gb200"))
    roles = {}
    for d in docs:
        if d["kind"] == "Deployment" and d["metadata"]["labels"].get("app.kubernetes.io/component") == "model-server":
            tpl = d["spec"]["template"]
            roles[tpl["metadata"]["labels"]["llm-d.ai/role"]] = tpl["spec"]
    assert set(roles) == {"prefill", "decode"}
    assert [c["name"] for c in roles["decode"].get("initContainers", [])] == ["routing-proxy"]
    assert "initContainers" not in roles["prefill"]


def test_render_routing_is_the_routing_subset():
    proc = run_cli("render", "routing", "qwen/aggregated", "--cluster", "example-gb200", "--user", "u",
                   "--namespace", "ns")
    assert proc.returncode == 0, proc.stderr
    kinds = [d["kind"] for d in _docs(proc.stdout)]
    assert "InferencePool" in kinds and "LeaderWorkerSet" not in kinds
    assert all(d["metadata"]["labels"]["app.kubernetes.io/component"] != "model-server" for d in _docs(proc.stdout))
    validate_manifests(proc.stdout)


def test_render_routing_refuses_unrouted_specs():
    proc = run_cli("render", "routing", "qwen/qwen3-0.6b", "--cluster", "example-gb200", "--user", "u",
                   "--namespace", "ns")
    assert proc.returncode == 1 and "routing disabled" in proc.stderr and "Traceback" not in proc.stderr


def test_routed_rank_spanning_nodes_keeps_headless_pods_out_of_the_pool(tmp_path):
    """One LeaderWorkerSet group per DP rank: only leaders (rank heads) match the pool selector."""
    spec = tmp_path / "wide.yaml"
    spec.write_text("release: wide\nmodel: {id: org/m}\nrouting: {kind: load_aware}\nroles:\n"
                    "  - name: decode\n    lws: {size: 4}\n    parallelism: {tp: 8, dp: 2}\n")
    proc = run_cli("render", "manifest", str(spec), "--cluster", "example-gb200", "--user", "u", "--namespace", "ns")
    assert proc.returncode == 0, proc.stderr
    validate_manifests(proc.stdout)
    docs = _docs(proc.stdout)
    pool = next(d for d in docs if d["kind"] == "InferencePool")
    lws = next(d for d in docs if d["kind"] == "LeaderWorkerSet")
    assert (lws["spec"]["replicas"], lws["spec"]["leaderWorkerTemplate"]["size"]) == (2, 2)
    selector = pool["spec"]["selector"]["matchLabels"]
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"]["labels"]
    worker = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]
    assert selector.items() <= leader.items()
    assert not selector.items() <= worker.items()