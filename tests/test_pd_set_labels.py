"""The pods a DisaggregatedSet's controller creates, with the labels LeaderWorkerSet v0.10.0
puts on them, read from its Go source: the InferencePool, the model Services, the idle
controller and the routing sidecar must still reach exactly the serving pods.

The source is the kubernetes-sigs/lws git mirror (``MANIFESTO_LWS_GIT``, default
``/work/.mirror/kubernetes-sigs+lws/repo``) at tag v0.10.0; without it the tests skip.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from kit import REPO_ROOT, plan_of
from manifesto.render.k8s import objects

pytestmark = pytest.mark.integration

LWS_GIT = Path(os.environ.get("MANIFESTO_LWS_GIT", "/work/.mirror/kubernetes-sigs+lws/repo"))
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


def _source(path: str) -> str:
    if not (LWS_GIT / "HEAD").exists() and not (LWS_GIT / ".git").exists():
        pytest.skip(f"no kubernetes-sigs/lws mirror at {LWS_GIT} (set MANIFESTO_LWS_GIT)")
    proc = subprocess.run(["git", "-C", str(LWS_GIT), "show", f"{TAG}:{path}"], capture_output=True, text=True)
    if proc.returncode:
        pytest.skip(f"{TAG}:{path} is not in {LWS_GIT}: {proc.stderr.strip()}")
    return proc.stdout


def _constants(text: str) -> dict[str, str]:
    """``Name string = "value"`` constants of a Go file."""
    return dict(re.findall(r'^\s*(\w+)\s+string\s*=\s*"([^"]*)"', text, re.M))


def _function(text: str, name: str) -> str:
    start = text.index(f"func {name}(")
    return text[start:text.index("\n}\n", start)]


@pytest.fixture(scope="module")
def controller():
    """What the v0.10.0 controllers put on a pod of role R, slice 0, group g, worker w."""
    ds_keys = _constants(_source("api/disaggregatedset/v1/disaggregatedset_types.go"))
    lws_keys = _constants(_source("api/leaderworkerset/v1/leaderworkerset_types.go"))
    utils = _source("pkg/utils/disaggregatedset/utils.go")
    manager = _source("pkg/controllers/disaggregatedset/lws_manager.go")
    # GenerateLabels: the map the DisaggregatedSet controller adds to both pod templates.
    body = _function(utils, "GenerateLabels")
    entries = re.findall(r'^\s*("app"|disaggregatedsetv1\.(\w+)):\s*(.+?),\s*$', body, re.M)
    assert len(entries) == 5, body
    # Both pod templates get mergeLabels(template labels, those labels): the set's labels win.
    for template in ("WorkerTemplate", "LeaderTemplate"):
        assert (f"LeaderWorkerTemplate.{template}.Labels = mergeLabels(config.Spec.LeaderWorkerTemplate.{template}"
                f".Labels, params.Labels)") in manager
    merge = _function(manager, "mergeLabels")
    assert merge.index("maps.Copy(merged, userLabels)") < merge.index("maps.Copy(merged, autoLabels)")
    app = re.search(r'"app":\s*fmt\.Sprintf\("([^"]+)", baseName, slice, role\)', body).group(1)

    def labels(ds: str, role: str, group: int, worker: int) -> dict[str, str]:
        values = {"RoleLabelKey": role, "SliceLabelKey": "0", "SetNameLabelKey": ds, "RevisionLabelKey": REVISION}
        out = {}
        for literal, const, _ in entries:
            if literal == '"app"':
                out["app"] = app.replace("%s", ds, 1).replace("%d", "0", 1).replace("%s", role, 1)
            else:
                out[ds_keys[const]] = values[const]
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
    assert {p["worker"] for p in proxied} >= {p["worker"] for p in pods if p["role"] == target and p["serving"]}


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
