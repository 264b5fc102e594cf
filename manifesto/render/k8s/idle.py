"""Idle-shutdown controller objects: ServiceAccount, Role, RoleBinding, ConfigMap, Deployment.

The controller script is ``idle_controller.py`` beside this module, shipped verbatim in
the ConfigMap; everything it needs to know about the instance travels in its env.
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

from manifesto.util.hashing import sha256_hex
from manifesto.resolve import names
from manifesto.resolve.names import COMPONENT_LABEL, INSTANCE_LABEL
from manifesto.render.k8s.common import meta, pod_defaults

__all__ = [
    "SCRIPT_ANNOTATION",
    "SCRIPT_KEY",
    "SCRIPT_PATH",
    "IDLE_ANNOTATION",
    "controller_script",
    "expected_targets",
    "idle_objects",
    "pool_annotations",
]

SCRIPT_KEY = "idle_controller.py"
SCRIPT_DIR = "/opt/manifesto"
SCRIPT_PATH = f"{SCRIPT_DIR}/{SCRIPT_KEY}"
#: The controller's DisaggregatedSet extension, shipped and run only for an instance rendered as one.
DSET_KEY = "idle_dset.py"
SCRIPT_ANNOTATION = "manifesto.llm-d.ai/idle-shutdown-script-sha256"
#: On the InferencePool: when the controller scaled the instance to zero, empty while it serves.
IDLE_ANNOTATION = "manifesto.llm-d.ai/idle-shutdown-at"
COMPONENT = "idle-shutdown"
RUN_AS_USER = 65532
POLL_SECONDS = 60

LWS_GROUP = "leaderworkerset.x-k8s.io"
DSET_GROUP = "disaggregatedset.x-k8s.io"
GATEWAY_GROUP = "gateway.networking.k8s.io"
POOL_GROUP = "inference.networking.k8s.io"
POD_SELECTOR_LABELS = (INSTANCE_LABEL, COMPONENT_LABEL)


@cache
def shipped(key: str) -> str:
    """A file of the controller shipped in its ConfigMap (``SCRIPT_KEY``, ``DSET_KEY``), as it is:
    read once per process (a package file, like the code: its bytes are in the code fingerprint)."""
    with open(os.path.join(os.path.dirname(__file__), key), encoding="utf-8") as fh:
        return fh.read()


def controller_script() -> str:
    """The controller's source, exactly as it is shipped."""
    return shipped(SCRIPT_KEY)


@cache
def _scripts_digest(texts: tuple[str, ...]) -> str:
    """SHA-256 of the shipped files' ``texts`` joined: taken once per process (every render
    ships the same texts, read once by :func:`shipped`, so the lookup hashes nothing again)."""
    return sha256_hex("".join(texts).encode("utf-8"))


def _scripts(plan) -> dict[str, str]:
    """ConfigMap key -> source of every file the controller of ``plan`` runs."""
    out = {SCRIPT_KEY: controller_script()}
    if plan.pd_set is not None:
        out[DSET_KEY] = shipped(DSET_KEY)
    return out


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _workload_path(namespace: str, kind: str, name: str) -> str:
    if kind == "DisaggregatedSet":
        return f"/apis/{DSET_GROUP}/v1/namespaces/{namespace}/disaggregatedsets/{name}"
    if kind == "LeaderWorkerSet":
        return f"/apis/{LWS_GROUP}/v1/namespaces/{namespace}/leaderworkersets/{name}"
    return f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}"


def _serving_indices(role) -> list[str] | None:
    """LWS worker indices that host API servers, or None when every pod does."""
    lay = role.layout
    if role.workload_kind != "LeaderWorkerSet" or tuple(lay.serving_nodes) == tuple(range(lay.nodes)):
        return None
    return [str(i) for i in lay.serving_nodes]


def expected_targets(plan) -> int:
    """vLLM API servers of a fully ready instance: replicas x serving pods x backend ports."""
    return sum(r.layout.replicas * len(r.layout.serving_nodes) * len(r.layout.backend_ports) for r in plan.roles)


def _targets(plan) -> dict[str, dict]:
    return {r.name: {"ports": list(r.layout.backend_ports), "serving_worker_indices": _serving_indices(r)}
            for r in plan.roles}


def _workloads(plan) -> list[dict]:
    """Everything scaled to zero, in order: model workloads, then the endpoint picker."""
    if plan.pd_set is not None:
        # One object, every role in one patch (idle_dset.py); replicas: its groups in all.
        out = [{"name": plan.pd_set, "path": _workload_path(plan.namespace, "DisaggregatedSet", plan.pd_set),
                "replicas": sum(r.layout.replicas for r in plan.roles)}]
    else:
        out = [{"name": r.workload_name, "path": _workload_path(plan.namespace, r.workload_kind, r.workload_name),
                "replicas": r.layout.replicas} for r in plan.roles]
    if plan.routing is not None:
        epp = names.epp(plan.instance)
        out.append({"name": epp, "path": _workload_path(plan.namespace, "Deployment", epp), "replicas": 1})
    return out


def _gateway(plan) -> dict | None:
    if plan.routing is None or plan.routing.frontend != "gateway":
        return None
    gw = names.gateway(plan.instance)
    return {"name": gw, "path": f"/apis/{GATEWAY_GROUP}/v1/namespaces/{plan.namespace}/gateways/{gw}"}


def _pool(plan) -> dict | None:
    """The InferencePool the controller stamps IDLE_ANNOTATION on when it shuts down."""
    if plan.routing is None:
        return None
    pool = names.pool(plan.instance)
    return {"name": pool, "path": f"/apis/{POOL_GROUP}/v1/namespaces/{plan.namespace}/inferencepools/{pool}",
            "annotation": IDLE_ANNOTATION}


def pool_annotations(plan) -> dict[str, str]:
    """Annotations of the rendered InferencePool: IDLE_ANNOTATION, empty, when the controller
    may stamp it, so that applying the instance again (which wakes it) empties it again."""
    return {IDLE_ANNOTATION: ""} if plan.idle.enabled and plan.routing is not None else {}


def _pod_selector(plan) -> str:
    return f"{INSTANCE_LABEL}={plan.instance},{COMPONENT_LABEL}=model-server"


def _env(plan) -> list[dict]:
    name = names.idle(plan.instance)
    values = [
        ("POD_SELECTOR", _pod_selector(plan)),
        ("TIMEOUT_SECONDS", str(plan.idle.timeout_minutes * 60)),
        ("POLL_SECONDS", str(POLL_SECONDS)),
        ("EXPECTED_TARGETS", str(expected_targets(plan))),
        ("TARGETS", _compact(_targets(plan))),
        ("WORKLOADS", _compact(_workloads(plan))),
        ("GATEWAY", _compact(_gateway(plan))),
        ("POOL", _compact(_pool(plan))),
        ("CONTROLLER", _compact({"name": name, "path": _workload_path(plan.namespace, "Deployment", name)})),
        ("PYTHONUNBUFFERED", "1"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
    ]
    return [{"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            *({"name": k, "value": v} for k, v in values)]


def _labels(plan) -> dict[str, str]:
    return {**plan.labels, COMPONENT_LABEL: COMPONENT}


def _rules(plan) -> list[dict]:
    """Least privilege: read pods, get/patch exactly the scaled objects, delete exactly the Gateway."""
    deployments = [r.workload_name for r in plan.roles if r.workload_kind == "Deployment"]
    if plan.routing is not None:
        deployments.append(names.epp(plan.instance))
    deployments.append(names.idle(plan.instance))
    lws = [r.workload_name for r in plan.roles if r.workload_kind == "LeaderWorkerSet" and plan.pd_set is None]
    rules: list[dict] = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": deployments, "verbs": ["get", "patch"]},
    ]
    # An empty resourceNames list would grant every object, so a rule is emitted only with names.
    if lws:
        rules.append({"apiGroups": [LWS_GROUP], "resources": ["leaderworkersets"], "resourceNames": lws,
                      "verbs": ["get", "patch"]})
    if plan.pd_set is not None:
        rules.append({"apiGroups": [DSET_GROUP], "resources": ["disaggregatedsets"], "resourceNames": [plan.pd_set],
                      "verbs": ["get", "patch"]})
    gateway = _gateway(plan)
    if gateway is not None:
        rules.append({"apiGroups": [GATEWAY_GROUP], "resources": ["gateways"], "resourceNames": [gateway["name"]],
                      "verbs": ["delete"]})
    pool = _pool(plan)
    if pool is not None:
        rules.append({"apiGroups": [POOL_GROUP], "resources": ["inferencepools"], "resourceNames": [pool["name"]],
                      "verbs": ["patch"]})
    return rules


def _security_context(plan) -> tuple[dict, dict]:
    pod: dict[str, Any] = {"runAsNonRoot": True}
    if plan.platform != "openshift":  # OpenShift assigns the UID from the namespace range
        pod["runAsUser"] = RUN_AS_USER
    pod["seccompProfile"] = {"type": "RuntimeDefault"}
    container = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                 "capabilities": {"drop": ["ALL"]}}
    return pod, container


def _deployment(plan, scripts: dict[str, str]) -> dict:
    name = names.idle(plan.instance)
    labels = _labels(plan)
    pod_security, container_security = _security_context(plan)
    run = DSET_KEY if DSET_KEY in scripts else SCRIPT_KEY
    container: dict[str, Any] = {
        "name": "controller",
        "image": plan.images["sidecars.idle_shutdown"],
        "command": ["python", f"{SCRIPT_DIR}/{run}"],
        "env": _env(plan),
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}},
        "securityContext": container_security,
        "volumeMounts": [{"name": "script", "mountPath": f"{SCRIPT_DIR}/{key}", "subPath": key, "readOnly": True}
                         for key in scripts],
    }
    if plan.placement.image_pull_policy:
        container["imagePullPolicy"] = plan.placement.image_pull_policy
    spec: dict[str, Any] = {
        "serviceAccountName": name,
        "securityContext": pod_security,
        "containers": [container],
        "volumes": [{"name": "script", "configMap": {"name": name}}],
    }
    pod_defaults(plan, spec, gpu=False)
    # The controller's text alone when it runs alone, so those instances' bytes never change.
    digest = _scripts_digest(tuple(scripts.values()))
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, plan.namespace, labels),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {k: labels[k] for k in POD_SELECTOR_LABELS}},
            # Never two controllers at once: the old pod stops before the new one starts.
            "strategy": {"type": "Recreate"},
            "template": {"metadata": {"labels": labels, "annotations": {SCRIPT_ANNOTATION: digest}}, "spec": spec},
        },
    }


def idle_objects(plan) -> list[dict]:
    """The controller's objects in apply order, or [] when idle shutdown is off."""
    if not plan.idle.enabled:
        return []
    name = names.idle(plan.instance)
    labels = _labels(plan)
    scripts = _scripts(plan)
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, plan.namespace, labels)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(name, plan.namespace, labels),
         "rules": _rules(plan)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": meta(name, plan.namespace, labels),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": plan.namespace}]},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(name, plan.namespace, labels),
         "data": scripts},
        _deployment(plan, scripts),
    ]
