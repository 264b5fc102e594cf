"""Model-server objects: pods, Deployments / LeaderWorkerSets, Services, claim templates."""

from __future__ import annotations

from typing import Any

from manifesto.resolve import names
from manifesto.resolve.names import ACCELERATOR_CLAIM
from manifesto.render.k8s.common import (
    KUEUE_PRIORITY, KUEUE_QUEUE, env_entry, gpu_claim_spec, gpu_claim_template, gpu_claim_template_name, meta,
    pod_defaults,
)
from manifesto.render.k8s.sidecars import exporter_containers, exporter_volumes, pd_proxy
from manifesto.render.launch import K8S, launch_script

__all__ = ["model_objects", "claim_template_name", "serving_service_name", "model_service_account"]

LWS_API = "leaderworkerset.x-k8s.io/v1"
DSET_API = "disaggregatedset.x-k8s.io/v1"
GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"
#: How a DisaggregatedSet rolls a role to a new revision (docs/decisions.md, "A DisaggregatedSet
#: rolls out one replica at a time"). The set's controller (LWS v0.10.0) plans every role's
#: rollout from this (pkg/controllers/disaggregatedset/executor.go:268-300): with maxSurge 0 it
#: needs no GPUs beyond the role's, and maxUnavailable 1 stops one old replica at a time, each
#: after the new revision's replicas are ready (executor.go:148-154), so a role of two or more
#: replicas keeps serving. The LeaderWorkerSet default the pair keeps, maxUnavailable 100%,
#: drained every role of the old revision to zero before the new one started.
SET_ROLLING_UPDATE = {"maxSurge": 0, "maxUnavailable": 1}
STARTUP_PERIOD = 10
STARTUP_FAILURES = 720  # two hours for large MoE checkpoints to load and compile


def model_service_account(plan) -> str | None:
    return names.model_account(plan.instance) if plan.openshift_scc else None


def serving_service_name(plan, role) -> str:
    return f"{role.workload_name}-http" if role.workload_name != plan.instance else f"{plan.instance}-http"


def _claim_spec(plan, role) -> dict:
    return gpu_claim_spec(plan.accelerator.device_class_name, role.resources.gpus)


def claim_template_name(plan, role) -> str:
    return gpu_claim_template_name(role.workload_name, _claim_spec(plan, role))


def _resources(plan, role) -> dict:
    r = role.resources
    requests: dict[str, Any] = {"cpu": r.cpu, "memory": r.memory}
    limits: dict[str, Any] = {"memory": r.memory}
    if r.ephemeral_storage:
        requests["ephemeral-storage"] = limits["ephemeral-storage"] = r.ephemeral_storage
    acc = plan.accelerator
    if acc.backend != "dra":
        requests[acc.resource_name] = limits[acc.resource_name] = str(r.gpus)
    for name, value in r.extra:
        requests[name] = limits[name] = value
    out: dict[str, Any] = {"requests": requests, "limits": limits}
    claims = ([{"name": ACCELERATOR_CLAIM}] if acc.backend == "dra" else []) + [{"name": c.name} for c in role.claims]
    if claims:
        out["claims"] = claims
    return out


def _probe_exec(role, serving: tuple[int, ...] | None, port: int) -> dict:
    """A bash-only HTTP check (no curl needed); nodes outside ``serving`` report healthy."""
    check = (
        f'exec 3<>/dev/tcp/127.0.0.1/{port} && printf "GET /health HTTP/1.0\\r\\n\\r\\n" >&3 '
        '&& head -n 1 <&3 | grep -q " 200 "'
    )
    if serving is not None:
        cases = "|".join(str(i) for i in serving)
        check = f'case "${{LWS_WORKER_INDEX:-0}}" in {cases}) {check} ;; *) exit 0 ;; esac'
    return {"exec": {"command": ["/bin/bash", "-c", check]}}


def _probe_ports(ports: tuple[int, ...]) -> dict:
    """Healthy when every independent server of the pod answers /health."""
    checks = " && ".join(
        f'{{ exec 3<>/dev/tcp/127.0.0.1/{p} && printf "GET /health HTTP/1.0\\r\\n\\r\\n" >&3 '
        '&& head -n 1 <&3 | grep -q " 200 "; }' for p in ports)
    return {"exec": {"command": ["/bin/bash", "-c", checks]}}


def _probes(role, template_nodes: tuple[int, ...]) -> dict:
    """Startup and readiness probes for a pod template used by ``template_nodes``."""
    lay = role.layout
    serving = [n for n in template_nodes if n in lay.serving_nodes]
    if not serving:
        return {}
    if lay.launch == "multi-port":
        handler = {"httpGet": {"path": "/health", "port": "dp-supervisor"}}
    elif lay.launch == "independent" and len(lay.backend_ports) > 1:
        handler = _probe_ports(lay.backend_ports)
    elif len(serving) == len(template_nodes):
        handler = {"httpGet": {"path": "/health", "port": lay.backend_ports[0]}}
    else:
        handler = _probe_exec(role, tuple(serving), lay.backend_ports[0])
    return {
        "startupProbe": {**handler, "periodSeconds": STARTUP_PERIOD, "timeoutSeconds": 5,
                         "failureThreshold": STARTUP_FAILURES},
        "readinessProbe": {**handler, "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3},
    }


def _ports(role) -> list[dict]:
    lay = role.layout
    ports = [{"name": f"vllm-{i}", "containerPort": p, "protocol": "TCP"} for i, p in enumerate(lay.backend_ports)]
    if lay.launch == "multi-port":
        ports.append({"name": "dp-supervisor", "containerPort": lay.supervisor_port, "protocol": "TCP"})
    if lay.dp > 1 and lay.nodes > 1 and lay.launch != "independent":
        ports.append({"name": "dp-rpc", "containerPort": lay.rpc_port, "protocol": "TCP"})
    return ports


def _volumes(plan, role) -> tuple[list[dict], list[dict]]:
    st = role.storage
    vols = [{"name": v.name, **v.source} for v in st.volumes]
    mounts = []
    for m in st.mounts:
        entry: dict[str, Any] = {"name": m.name, "mountPath": m.path}
        if m.read_only:
            entry["readOnly"] = True
        if m.sub_path:
            entry["subPath"] = m.sub_path
        mounts.append(entry)
    shm: dict[str, Any] = {"medium": "Memory"}
    if role.resources.shm_size:
        shm["sizeLimit"] = role.resources.shm_size
    vols.append({"name": "dshm", "emptyDir": shm})
    mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    for i, dev in enumerate(plan.placement.extra_devices):
        vols.append({"name": f"device-{i}", "hostPath": {"path": dev}})
        mounts.append({"name": f"device-{i}", "mountPath": dev})
    return vols, mounts


def _container(plan, role, template_nodes: tuple[int, ...]) -> dict:
    vols, mounts = _volumes(plan, role)
    c: dict[str, Any] = {
        "name": "vllm",
        "image": role.image,
        "command": ["/bin/bash", "-c", launch_script(plan, role, K8S)],
        "env": [env_entry(v) for v in role.env],
        "ports": _ports(role),
        "resources": _resources(plan, role),
        "volumeMounts": mounts,
    }
    p = plan.placement
    if p.image_pull_policy:
        c["imagePullPolicy"] = p.image_pull_policy
    if p.working_dir:
        c["workingDir"] = p.working_dir
    if p.container_security_context:
        c["securityContext"] = dict(p.container_security_context)
    c.update(_probes(role, template_nodes))
    return c


def _affinity(plan, role, spec: dict) -> None:
    if role.workload_kind != "LeaderWorkerSet" or not role.same_topology_key:
        return
    affinity = spec.setdefault("affinity", {})
    terms = affinity.setdefault("podAffinity", {}).setdefault("requiredDuringSchedulingIgnoredDuringExecution", [])
    term = {
        "labelSelector": {"matchLabels": dict(role.selector)},
        "matchLabelKeys": [GROUP_KEY],
        "topologyKey": role.same_topology_key,
    }
    lay = role.layout
    if lay.rank_groups > 1 and lay.replicas == lay.rank_groups:
        # One DP world made of one group per rank: keep the whole world (the role) together,
        # not just each rank. With several worlds only each rank's pods can be tied together.
        del term["matchLabelKeys"]
    terms.append(term)


def _pod_template(plan, role, template_nodes: tuple[int, ...], *, queue_on_pod: bool) -> dict:
    vols, _ = _volumes(plan, role)
    labels = dict(role.labels)
    if not any(n in role.layout.serving_nodes for n in template_nodes):
        # Pods that serve no HTTP (headless workers) stay out of the InferencePool.
        labels.pop("llm-d.ai/inferenceServing", None)
    if queue_on_pod and plan.kueue_queue:
        labels[KUEUE_QUEUE] = plan.kueue_queue
    spec: dict[str, Any] = {}
    if role.proxy and any(n in role.layout.serving_nodes for n in template_nodes):
        # The P/D routing sidecar fronts a pod that serves HTTP; headless workers (cross-node
        # TP/PP ranks past the first pod) get none. LWS v0.10.0 runs the leader template (the
        # worker template when there is none) on each group's pod 0
        # (pkg/controllers/leaderworkerset_controller.go:777-781) and the worker template on
        # the rest (pkg/controllers/pod_controller.go:391, 438-444).
        spec["initContainers"] = [pd_proxy(plan, role)]
    spec["containers"] = [_container(plan, role, template_nodes), *exporter_containers(plan)]
    spec["volumes"] = vols + exporter_volumes(plan)
    sa = model_service_account(plan)
    if sa:
        spec["serviceAccountName"] = sa
    claims = []
    if plan.accelerator.backend == "dra":
        claims.append({"name": ACCELERATOR_CLAIM, "resourceClaimTemplateName": claim_template_name(plan, role)})
    claims += [{"name": c.name, "resourceClaimTemplateName": c.template} for c in role.claims]
    if claims:
        spec["resourceClaims"] = claims
    pod_defaults(plan, spec, gpu=True)
    _affinity(plan, role, spec)
    metadata: dict[str, Any] = {"labels": labels}
    annotations = dict(plan.placement.annotations)
    if role.routing_label is not None:
        annotations["inference.networking.k8s.io/active-ports"] = ",".join(map(str, role.layout.public_ports))
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    return {"metadata": metadata, "spec": spec}


def _workload_labels(plan, role) -> dict[str, str]:
    return _queued(plan, role.labels)


def _queued(plan, own: dict[str, str]) -> dict[str, str]:
    """``own`` plus the Kueue queue and priority labels of a queued workload."""
    labels = dict(own)
    if plan.kueue_queue:
        labels[KUEUE_QUEUE] = plan.kueue_queue
        if plan.kueue_priority_class:
            labels[KUEUE_PRIORITY] = plan.kueue_priority_class
    return labels


def _deployment(plan, role) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(role.workload_name, plan.namespace, _workload_labels(plan, role)),
        "spec": {
            "replicas": role.layout.replicas,
            "selector": {"matchLabels": dict(role.selector)},
            # Replace pods rather than surge: a second copy of a GPU pod rarely fits.
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "100%"}},
            "template": _pod_template(plan, role, (0,), queue_on_pod=True),
        },
    }


def _leaderworkerset(plan, role) -> dict:
    lay = role.layout
    workers = tuple(range(1, lay.nodes))
    worker = _pod_template(plan, role, workers or (0,), queue_on_pod=False)
    leader = _pod_template(plan, role, (0,), queue_on_pod=False) if workers else worker
    lwt: dict[str, Any] = {"size": lay.nodes}
    if leader != worker:  # probes, the serving label, the routing sidecar
        lwt["leaderTemplate"] = leader
    lwt["workerTemplate"] = worker
    return {
        "apiVersion": LWS_API,
        "kind": "LeaderWorkerSet",
        "metadata": meta(role.workload_name, plan.namespace, _workload_labels(plan, role)),
        "spec": {
            "replicas": lay.replicas,
            "leaderWorkerTemplate": lwt,
            "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxUnavailable": "100%"}},
        },
    }


def _disaggregated_set(plan) -> dict:
    """Every role as one DisaggregatedSet: each role entry is the role's own LeaderWorkerSet
    (its metadata and spec, the Kueue labels included, which the controller copies onto the
    LeaderWorkerSet it creates), so sizes, parallelism, resources and NIXL settings stay per
    role while one object rolls both out together."""
    roles = []
    for role in plan.roles:
        lws = _leaderworkerset(plan, role)
        spec = {**lws["spec"], "rolloutStrategy": {"type": "RollingUpdate",
                                                   "rollingUpdateConfiguration": dict(SET_ROLLING_UPDATE)}}
        roles.append({"name": role.name, "metadata": {"labels": lws["metadata"]["labels"]}, "spec": spec})
    # The queue labels on the set too: ``deploy`` reads them there for its Kueue checks.
    labels = _queued(plan, {**plan.labels, names.COMPONENT_LABEL: "model-server"})
    return {
        "apiVersion": DSET_API,
        "kind": "DisaggregatedSet",
        "metadata": meta(plan.pd_set, plan.namespace, labels),
        "spec": {"roles": roles},
    }


def _service(plan, role) -> dict:
    lay = role.layout
    selector = dict(role.selector)
    if role.workload_kind == "LeaderWorkerSet" and lay.serving_nodes == (0,):
        selector[names.LWS_WORKER_INDEX_LABEL] = "0"
    ports = [{"name": f"http-{i}", "port": p, "targetPort": p, "protocol": "TCP"} for i, p in enumerate(lay.public_ports)]
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(serving_service_name(plan, role), plan.namespace, role.labels),
        "spec": {"type": "ClusterIP", "selector": selector, "ports": ports},
    }


def _claim_template(plan, role) -> dict:
    return gpu_claim_template(role.workload_name, plan.namespace, role.labels, plan.accelerator.device_class_name,
                              role.resources.gpus)


def model_objects(plan) -> dict[str, list[dict]]:
    """Model-server objects grouped by kind for the caller's fixed ordering."""
    out: dict[str, list[dict]] = {"ResourceClaimTemplate": [], "Service": [], "workload": []}
    for role in plan.roles:
        if plan.accelerator.backend == "dra":
            out["ResourceClaimTemplate"].append(_claim_template(plan, role))
        out["Service"].append(_service(plan, role))
        if plan.pd_set is None:
            out["workload"].append(_leaderworkerset(plan, role) if role.workload_kind == "LeaderWorkerSet"
                                   else _deployment(plan, role))
    if plan.pd_set is not None:
        out["workload"].append(_disaggregated_set(plan))
    return out
