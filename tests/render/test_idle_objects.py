"""Kubernetes objects of the idle-shutdown controller, built from real Plans."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys

import pytest
import yaml

from kit import REPO_ROOT, plan_of, validate_manifests
from manifesto.render.k8s.idle import SCRIPT_ANNOTATION, controller_script, expected_targets, idle_objects
from manifesto.render.k8s.model import model_objects
from manifesto.util.yamlemit import dump_all

SCRIPT = REPO_ROOT / "manifesto" / "render" / "k8s" / "idle_controller.py"
KINDS = ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment"]
LWS = "leaderworkerset.sigs.k8s.io/worker-index"


def _controller_module():
    spec = importlib.util.spec_from_file_location("idle_controller_for_objects", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Model and cluster variants written next to the bundled ones they extend."""
    d = tmp_path_factory.mktemp("idle-objects")
    models = REPO_ROOT / "models"
    (d / "pd-gateway.yaml").write_text(
        f"extends: {models / 'qwen' / 'qwen3-0.6b-pd.yaml'}\nrouting: {{frontend: gateway}}\n")
    (d / "cross-node-tp.yaml").write_text(
        f"extends: {models / 'qwen' / 'qwen3-0.6b.yaml'}\nrelease: qwen-xtp\n"
        "roles:\n  decode:\n    lws: {size: 2, replicas: 2}\n    parallelism: {tp: 8}\n")
    (d / "disabled.yaml").write_text(
        f"extends: {models / 'qwen' / 'aggregated.yaml'}\nruntime: {{idle_shutdown: {{enabled: false}}}}\n")
    cluster = yaml.safe_load((REPO_ROOT / "clusters" / "example-h200.yaml").read_text())
    cluster["name"] = "example-openshift"
    cluster["platform"] = "openshift"
    cluster["kueue"] = {"local_queue": "gpu-queue"}
    cluster.setdefault("pod_defaults", {}).update({
        "image_pull_secrets": ["registry-credentials"],
        "image_pull_policy": "IfNotPresent",
        "node_selector": {"gpu": "yes"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "security_context": {"fsGroup": 1000},
    })
    (d / "openshift.yaml").write_text(yaml.safe_dump(cluster, sort_keys=False))
    return d


CASES = {
    # name: (model, cluster); "@" marks a file from the `files` fixture
    "direct": ("models/qwen/qwen3-0.6b.yaml", "example-gb200"),
    "routed-lws": ("models/deepseek-v4/3P-EP8-1D-EP16.yaml", "example-gb200"),
    "pd-gateway-openshift": ("@pd-gateway.yaml", "@openshift.yaml"),
    "cross-node-tp": ("@cross-node-tp.yaml", "example-gb200"),
}


@pytest.fixture(scope="module")
def make_plan(files):
    cache = {}

    def make(case: str, **options):
        key = (case, tuple(sorted(options.items())))
        if key not in cache:
            model, cluster = CASES.get(case, (case, "example-gb200"))
            model = files / model[1:] if model.startswith("@") else REPO_ROOT / model
            cluster = files / cluster[1:] if cluster.startswith("@") else cluster
            cache[key] = plan_of(model, cluster, **options)[0]
        return cache[key]

    return make


def _by_kind(objs) -> dict[str, dict]:
    return {o["kind"]: o for o in objs}


def _env(objs) -> dict[str, str]:
    container = _by_kind(objs)["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in container["env"]}


def _labels_everywhere(obj):
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "labels" and isinstance(value, dict):
                yield from value
            yield from _labels_everywhere(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _labels_everywhere(item)


def test_disabled_renders_nothing(make_plan, files):
    assert idle_objects(make_plan("direct", idle_shutdown=False)) == []
    assert idle_objects(make_plan("@disabled.yaml")) == []
    assert idle_objects(make_plan("@disabled.yaml", idle_shutdown=True)) != []


@pytest.mark.integration
@pytest.mark.parametrize("case", CASES)
def test_objects_order_names_and_schema(make_plan, case):
    plan = make_plan(case)
    objs = idle_objects(plan)
    name = f"{plan.instance}-idle-shutdown"
    assert [o["kind"] for o in objs] == KINDS
    assert {o["metadata"]["name"] for o in objs} == {name}
    assert {o["metadata"]["namespace"] for o in objs} == {"ns"}
    for o in objs:
        assert o["metadata"]["labels"] == {**plan.labels, "app.kubernetes.io/component": "idle-shutdown"}
    binding = _by_kind(objs)["RoleBinding"]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": name, "namespace": "ns"}]
    text = dump_all(objs)
    assert text == dump_all(idle_objects(plan))  # deterministic
    validate_manifests(text)


def _rule(role, group):
    return [r for r in role["rules"] if r["apiGroups"] == [group]]


def test_rbac_direct_deployment(make_plan):
    objs = idle_objects(make_plan("direct"))
    assert _by_kind(objs)["Role"]["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {"apiGroups": ["apps"], "resources": ["deployments"],
         "resourceNames": ["qwen3-0-6b-decode", "qwen3-0-6b-idle-shutdown"], "verbs": ["get", "patch"]},
    ]


def test_rbac_routed_leaderworkersets(make_plan):
    plan = make_plan("routed-lws")
    role = _by_kind(idle_objects(plan))["Role"]
    assert _rule(role, "apps") == [{"apiGroups": ["apps"], "resources": ["deployments"],
                                    "resourceNames": [f"{plan.instance}-infpool-epp", f"{plan.instance}-idle-shutdown"],
                                    "verbs": ["get", "patch"]}]
    assert _rule(role, "leaderworkerset.x-k8s.io") == [{
        "apiGroups": ["leaderworkerset.x-k8s.io"], "resources": ["leaderworkersets"],
        "resourceNames": ["dsv4-decode-ep16", "dsv4-prefill-ep8"], "verbs": ["get", "patch"]}]
    assert _rule(role, "gateway.networking.k8s.io") == []
    assert _rule(role, "inference.networking.k8s.io") == [{
        "apiGroups": ["inference.networking.k8s.io"], "resources": ["inferencepools"],
        "resourceNames": [f"{plan.instance}-infpool"], "verbs": ["patch"]}]


def test_rbac_gateway_frontend(make_plan):
    plan = make_plan("pd-gateway-openshift")
    role = _by_kind(idle_objects(plan))["Role"]
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {"apiGroups": ["apps"], "resources": ["deployments"],
         "resourceNames": ["qwen3-0-6b-pd-prefill", "qwen3-0-6b-pd-decode", "qwen3-0-6b-pd-infpool-epp",
                           "qwen3-0-6b-pd-idle-shutdown"], "verbs": ["get", "patch"]},
        {"apiGroups": ["gateway.networking.k8s.io"], "resources": ["gateways"],
         "resourceNames": ["qwen3-0-6b-pd-gateway"], "verbs": ["delete"]},
        {"apiGroups": ["inference.networking.k8s.io"], "resources": ["inferencepools"],
         "resourceNames": ["qwen3-0-6b-pd-infpool"], "verbs": ["patch"]},
    ]


@pytest.mark.parametrize("case", CASES)
def test_rbac_is_least_privilege(make_plan, case):
    for rule in _by_kind(idle_objects(make_plan(case)))["Role"]["rules"]:
        assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]
        if rule["resources"] == ["pods"]:
            assert rule["verbs"] == ["get", "list"]
        else:  # everything that changes state names its objects
            assert rule["resourceNames"]
            assert set(rule["verbs"]) <= {"get", "patch", "delete"}


def test_env_routed_leaderworkersets(make_plan):
    plan = make_plan("routed-lws")
    env = _env(idle_objects(plan))
    inst = plan.instance
    assert env["NAMESPACE"] is None  # from the downward API
    assert env["POD_SELECTOR"] == f"app.kubernetes.io/instance={inst},app.kubernetes.io/component=model-server"
    assert env["TIMEOUT_SECONDS"] == "5400"  # the spec's 90 minutes
    assert env["POLL_SECONDS"] == "60"
    # decode: 1 replica x 4 serving pods x 4 ports; prefill: 3 replicas x 2 serving pods x 4 ports
    assert env["EXPECTED_TARGETS"] == "40" == str(expected_targets(plan))
    assert json.loads(env["TARGETS"]) == {
        "decode": {"ports": [8200, 8201, 8202, 8203], "serving_worker_indices": None},
        "prefill": {"ports": [8000, 8001, 8002, 8003], "serving_worker_indices": None},
    }
    lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/ns/leaderworkersets"
    assert json.loads(env["WORKLOADS"]) == [
        {"name": "dsv4-decode-ep16", "path": f"{lws}/dsv4-decode-ep16", "replicas": 1},
        {"name": "dsv4-prefill-ep8", "path": f"{lws}/dsv4-prefill-ep8", "replicas": 3},
        {"name": f"{inst}-infpool-epp", "path": f"/apis/apps/v1/namespaces/ns/deployments/{inst}-infpool-epp",
         "replicas": 1},
    ]
    assert json.loads(env["GATEWAY"]) is None
    assert json.loads(env["CONTROLLER"]) == {
        "name": f"{inst}-idle-shutdown", "path": f"/apis/apps/v1/namespaces/ns/deployments/{inst}-idle-shutdown"}


def test_env_gateway_pd(make_plan):
    env = _env(idle_objects(make_plan("pd-gateway-openshift")))
    assert env["TIMEOUT_SECONDS"] == "2700"  # 45 minutes by default
    assert env["EXPECTED_TARGETS"] == "2"
    # decode metrics are read on vLLM's backend port, behind the P/D proxy
    assert json.loads(env["TARGETS"]) == {"prefill": {"ports": [8000], "serving_worker_indices": None},
                                          "decode": {"ports": [8200], "serving_worker_indices": None}}
    assert [w["name"] for w in json.loads(env["WORKLOADS"])] == [
        "qwen3-0-6b-pd-prefill", "qwen3-0-6b-pd-decode", "qwen3-0-6b-pd-infpool-epp"]
    assert json.loads(env["GATEWAY"]) == {
        "name": "qwen3-0-6b-pd-gateway",
        "path": "/apis/gateway.networking.k8s.io/v1/namespaces/ns/gateways/qwen3-0-6b-pd-gateway"}


def test_env_direct_and_cross_node(make_plan):
    env = _env(idle_objects(make_plan("direct", idle_timeout_minutes=15)))
    assert env["TIMEOUT_SECONDS"] == "900"
    assert json.loads(env["WORKLOADS"]) == [{"name": "qwen3-0-6b-decode", "replicas": 1,
                                             "path": "/apis/apps/v1/namespaces/ns/deployments/qwen3-0-6b-decode"}]
    assert env["EXPECTED_TARGETS"] == "1"
    env = _env(idle_objects(make_plan("cross-node-tp")))
    assert json.loads(env["TARGETS"]) == {"decode": {"ports": [8000], "serving_worker_indices": ["0"]}}
    assert env["EXPECTED_TARGETS"] == "2"  # 2 replicas x leader only x 1 port


@pytest.mark.parametrize("case", CASES)
def test_env_is_what_the_controller_reads(make_plan, case):
    plan = make_plan(case)
    objs = idle_objects(plan)
    ic = _controller_module()
    env = {**_env(objs), "NAMESPACE": "ns"}
    cfg = ic.load_config(env)
    assert cfg.expected_targets == expected_targets(plan)
    assert set(cfg.targets) == {r.name for r in plan.roles}
    assert cfg.controller.name == objs[-1]["metadata"]["name"]


@pytest.mark.parametrize("case", CASES)
def test_env_matches_the_rendered_model_workloads(make_plan, case):
    """Selector, role labels, worker indices and object names agree with what the model emitter renders."""
    plan = make_plan(case)
    objs = idle_objects(plan)
    env = _env(objs)
    selector = dict(kv.split("=", 1) for kv in env["POD_SELECTOR"].split(","))
    targets = json.loads(env["TARGETS"])
    workloads = model_objects(plan)["workload"]
    assert [w["metadata"]["name"] for w in workloads] == [w["name"] for w in json.loads(env["WORKLOADS"])][
        :len(workloads)]
    for workload in workloads:
        spec = workload["spec"]
        templates = ([spec["template"]] if workload["kind"] == "Deployment"
                     else [t for k, t in spec["leaderWorkerTemplate"].items() if k.endswith("Template")])
        for template in templates:
            labels = template["metadata"]["labels"]
            assert selector.items() <= labels.items()
            assert labels["manifesto.llm-d.ai/role"] in targets
    idle_pod_labels = objs[-1]["spec"]["template"]["metadata"]["labels"]
    assert not selector.items() <= idle_pod_labels.items()  # the controller never watches itself
    names = {w["metadata"]["name"]: w["kind"] for w in workloads}
    role = _by_kind(objs)["Role"]
    granted = {n: kind for rule in role["rules"] if rule["resources"] != ["pods"] for n in rule["resourceNames"]
               for kind in [{"deployments": "Deployment", "leaderworkersets": "LeaderWorkerSet",
                             "gateways": "Gateway", "inferencepools": "InferencePool"}[rule["resources"][0]]]}
    assert names.items() <= granted.items()


@pytest.mark.parametrize("case", CASES)
def test_configmap_ships_the_script(make_plan, case):
    objs = idle_objects(make_plan(case))
    script = SCRIPT.read_text(encoding="utf-8")
    assert controller_script() == script
    loaded = list(yaml.safe_load_all(dump_all(objs)))
    assert loaded[3]["data"] == {"idle_controller.py": script}  # survives the YAML round trip byte for byte
    annotations = loaded[4]["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {SCRIPT_ANNOTATION: hashlib.sha256(script.encode()).hexdigest()}


def test_deployment_pod(make_plan):
    plan = make_plan("routed-lws")
    deploy = _by_kind(idle_objects(plan))["Deployment"]
    assert deploy["spec"]["replicas"] == 1
    pod = deploy["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == plan.images["sidecars.idle_shutdown"] == "python:3.12-alpine"
    assert container["command"] == ["python", "/opt/manifesto/idle_controller.py"]
    assert container["volumeMounts"] == [{"name": "script", "mountPath": "/opt/manifesto/idle_controller.py",
                                          "subPath": "idle_controller.py", "readOnly": True}]
    assert pod["volumes"] == [{"name": "script", "configMap": {"name": f"{plan.instance}-idle-shutdown"}}]
    assert pod["serviceAccountName"] == f"{plan.instance}-idle-shutdown"
    assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": 65532,
                                      "seccompProfile": {"type": "RuntimeDefault"}}
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                            "capabilities": {"drop": ["ALL"]}}
    assert container["resources"] == {"requests": {"cpu": "10m", "memory": "32Mi"},
                                      "limits": {"cpu": "100m", "memory": "64Mi"}}
    assert "imagePullPolicy" not in container and "imagePullSecrets" not in pod


def test_openshift_cpu_only_and_pod_defaults(make_plan):
    plan = make_plan("pd-gateway-openshift")
    assert plan.platform == "openshift" and plan.kueue_queue == "gpu-queue"
    objs = idle_objects(plan)
    pod = _by_kind(objs)["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["securityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    assert pod["imagePullSecrets"] == [{"name": "registry-credentials"}]
    assert container["imagePullPolicy"] == "IfNotPresent"
    # CPU-only: no GPU placement, no GPU resources, no Kueue metadata
    assert not {"nodeSelector", "tolerations", "affinity", "resourceClaims"} & pod.keys()
    assert {k for part in container["resources"].values() for k in part} == {"cpu", "memory"}
    assert not [k for k in _labels_everywhere(objs) if k.startswith("kueue.x-k8s.io/")]


@pytest.mark.parametrize("case", CASES)
def test_the_controller_stamps_the_rendered_pool_whose_marker_starts_empty(make_plan, case):
    """The pool the controller marks idle is the one routing renders, and the rendered pool
    carries the marker empty, so applying the instance again (which wakes it) empties it."""
    from manifesto.render.k8s import objects
    from manifesto.render.k8s.idle import IDLE_ANNOTATION

    plan = make_plan(case)
    pools = [o for o in objects(plan) if o["kind"] == "InferencePool"]
    cfg = _controller_module().load_config({**_env(idle_objects(plan)), "NAMESPACE": "ns"})
    if not pools:
        assert cfg.pool is None
        return
    (pool,) = pools
    assert (cfg.pool.name, cfg.pool_annotation) == (pool["metadata"]["name"], IDLE_ANNOTATION)
    assert cfg.pool.path.endswith(f"/namespaces/{plan.namespace}/inferencepools/{pool['metadata']['name']}")
    assert pool["metadata"]["annotations"][IDLE_ANNOTATION] == ""


def test_without_idle_shutdown_the_pool_carries_no_marker(make_plan):
    """Rendering stays as it was for instances that never shut down by themselves."""
    from manifesto.render.k8s import objects

    (pool,) = [o for o in objects(make_plan("routed-lws", idle_shutdown=False)) if o["kind"] == "InferencePool"]
    assert "annotations" not in pool["metadata"]
