"""The pods a DisaggregatedSet's controller creates, with the labels LeaderWorkerSet v0.10.0
puts on them: the InferencePool, the model Services, the idle controller and the routing
sidecar must still reach exactly the serving pods.

The labels come from ``tests/data/lws-v0.10.0-pod-labels.json``, which
``tools/gen_lws_pod_labels.py`` derives from the kubernetes-sigs/lws Go source at that tag
(``GenerateLabels``, ``mergeLabels`` and the label constants).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kit import REPO_ROOT, plan_of
from manifesto.render.k8s import objects

TAG = "v0.10.0"
LWS010 = REPO_ROOT / "clusters" / "example-gb200-lws.yaml"
MODELS = ["cross-node-tp", REPO_ROOT / "models" / "kimi-k3" / "1P-1D-DP4-TP4.yaml",
          REPO_ROOT / "models" / "deepseek-v4" / "1P-EP8-1D-EP8.yaml",
          REPO_ROOT / "models" / "kimi-k3" / "1P-EP16-1D-EP16.yaml"]
#: A P/D spec whose TP spans two nodes: only each group's leader serves HTTP, its worker does not.
CROSS_NODE = """\
release: xnode
topology: pd
model: {id: Qwen/Qwen3-30B-A3B-Instruct-2507, label: Qwen3-30B-A3B, image_ref: vllm.standard}
routing: {kind: pd, target_role: decode}
runtime: {sidecars: []}
roles:
  - name: prefill
    lws: {size: 2, replicas: 2}
    parallelism: {tp: 8}
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
    vllm: {max_model_len: 8192}
  - name: decode
    lws: {size: 2}
    parallelism: {tp: 8}
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
    vllm: {max_model_len: 8192}
"""
REVISION = "0123abcd"  # any revision: the controller's own hash of the templates


@pytest.fixture(scope="module")
def controller():
    """What the v0.10.0 controllers put on a pod of role R, slice 0, group g, worker w."""
    table = json.loads((REPO_ROOT / "tests" / "data" / f"lws-{TAG}-pod-labels.json").read_text())
    assert table["source"] == f"kubernetes-sigs/lws {TAG}"
    # Both pod templates get mergeLabels(template labels, the set's labels): the set's win.
    assert table["both_templates_merged"] and table["set_labels_win"]
    app, set_keys, lws_keys = table["app_format"], table["set_labels"], table["lws_labels"]
    assert set(set_keys) == {"RoleLabelKey", "SliceLabelKey", "SetNameLabelKey", "RevisionLabelKey"}

    def labels(ds: str, role: str, group: int, worker: int) -> dict[str, str]:
        values = {"RoleLabelKey": role, "SliceLabelKey": "0", "SetNameLabelKey": ds, "RevisionLabelKey": REVISION}
        out = {"app": app.replace("%s", ds, 1).replace("%d", "0", 1).replace("%s", role, 1)}
        for const, key in set_keys.items():
            out[key] = values[const]
        lws_name = f"{ds}-0-{REVISION}-{role}"
        lws = {lws_keys["SetNameLabelKey"]: lws_name, lws_keys["GroupIndexLabelKey"]: str(group),
               lws_keys["WorkerIndexLabelKey"]: str(worker)}
        return {"set": out, "lws": lws}

    return labels


def _pods(plan, objs, controller) -> list[dict]:
    """Every pod of the set: role, worker index, serving, its labels and its template."""
    (ds,) = [o for o in objs if o["kind"] == "DisaggregatedSet"]
    pods = []
    for role in ds["spec"]["roles"]:
        lay = plan.role(role["name"]).layout
        lwt = role["spec"]["leaderWorkerTemplate"]
        for group in range(role["spec"]["replicas"]):
            for worker in range(lwt["size"]):
                template = lwt.get("leaderTemplate") if worker == 0 and "leaderTemplate" in lwt else lwt["workerTemplate"]
                added = controller(ds["metadata"]["name"], role["name"], group, worker)
                labels = {**template["metadata"].get("labels", {}), **added["set"], **added["lws"]}
                pods.append({"role": role["name"], "worker": worker, "serving": worker in lay.serving_nodes,
                             "labels": labels, "template": template, "set_keys": set(added["set"])})
    return pods


@pytest.fixture
def spec_path(tmp_path):
    def find(model) -> Path:
        if model != "cross-node-tp":
            return model
        path = tmp_path / "xnode.yaml"
        path.write_text(CROSS_NODE)
        return path
    return find


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


@pytest.mark.parametrize("model", MODELS, ids=lambda p: getattr(p, "stem", p))
def test_the_pool_and_services_select_exactly_the_serving_pods(model, controller, spec_path):
    plan = plan_of(spec_path(model), LWS010)[0]
    assert plan.pd_set is not None
    objs = objects(plan)
    pods = _pods(plan, objs, controller)
    (pool,) = [o for o in objs if o["kind"] == "InferencePool"]
    selector = pool["spec"]["selector"]["matchLabels"]
    assert not set(selector) & set().union(*(p["set_keys"] for p in pods)), "the set's labels would overwrite them"
    assert [p for p in pods if _selects(selector, p["labels"])] == [p for p in pods if p["serving"]]
    if model == "cross-node-tp":
        assert sum(not p["serving"] for p in pods) == 3  # the workers of 2 + 1 groups
        assert all("leaderTemplate" in r["spec"]["leaderWorkerTemplate"]
                   for o in objs if o["kind"] == "DisaggregatedSet" for r in o["spec"]["roles"])
    for role in plan.roles:
        (svc,) = [o for o in objs if o["kind"] == "Service" and o["metadata"]["name"] == f"{role.workload_name}-http"]
        chosen = [p for p in pods if _selects(svc["spec"]["selector"], p["labels"])]
        assert chosen == [p for p in pods if p["role"] == role.name and p["serving"]], role.name


@pytest.mark.parametrize("model", MODELS, ids=lambda p: getattr(p, "stem", p))
def test_the_routing_sidecar_runs_in_the_serving_decode_pods_only(model, controller, spec_path):
    plan = plan_of(spec_path(model), LWS010)[0]
    pods = _pods(plan, objects(plan), controller)
    proxied = [p for p in pods if any(c["name"] == "routing-proxy" for c in p["template"]["spec"].get("initContainers", []))]
    target = plan.routing.target_role
    assert proxied and all(p["role"] == target for p in proxied)
    # Exactly the serving ones: the headless workers of a cross-node TP decode used to run one too.
    assert [p["worker"] for p in proxied] == [p["worker"] for p in pods if p["role"] == target and p["serving"]]


@pytest.mark.parametrize("model", MODELS, ids=lambda p: getattr(p, "stem", p))
def test_the_idle_controller_watches_every_model_pod_of_the_set(model, controller, spec_path):
    plan = plan_of(spec_path(model), LWS010)[0]
    objs = objects(plan)
    pods = _pods(plan, objs, controller)
    (idle,) = [o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-idle-shutdown")]
    env = {e["name"]: e.get("value") for e in idle["spec"]["template"]["spec"]["containers"][0]["env"]}
    selector = dict(part.split("=", 1) for part in env["POD_SELECTOR"].split(","))
    assert all(_selects(selector, p["labels"]) for p in pods)
    targets = json.loads(env["TARGETS"])
    counted = sum(len(targets[p["labels"]["manifesto.llm-d.ai/role"]]["ports"]) for p in pods
                  if (targets[p["labels"]["manifesto.llm-d.ai/role"]]["serving_worker_indices"] is None
                      or p["labels"]["leaderworkerset.sigs.k8s.io/worker-index"]
                      in targets[p["labels"]["manifesto.llm-d.ai/role"]]["serving_worker_indices"]))
    assert counted == int(env["EXPECTED_TARGETS"])
