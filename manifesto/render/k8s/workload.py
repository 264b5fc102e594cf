"""Lower a resolved controller-neutral workload (``manifesto.resolve.workload.WorkloadPlan``)
to Kubernetes objects.

Backends: batch/v1 Job (NonIndexed unless Indexed is declared), apps/v1 Deployment and
leaderworkerset.x-k8s.io/v1 LeaderWorkerSet (with an optional, same-shaped leader template).
Grove is reserved: add its lowering to ``LOWERINGS`` (the extension point).

Applied from the cluster (``manifesto.workload.AcceleratorSettings``):

- the accelerator count on the accelerator container: extended-resource requests = limits,
  or a DRA ResourceClaimTemplate named and shaped like the serving renderer's;
- accelerator-attached platform claims (e.g. the IMEX ``compute-domain-channel``), on every
  pod template that carries accelerators (leader and workers alike);
- placement defaults; the workload's own pod spec wins where both set a value, lists merge;
- Kueue: Job and Deployment carry the queue label on the object and the pod template (a
  queued Job is created suspended); a LeaderWorkerSet carries it on the object only, and
  queue labels are removed from both pod templates, as Kueue's LWS integration requires.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any, Callable, NoReturn

from manifesto.errors import Origin, ResolveError
from manifesto.render.k8s.common import (
    KUEUE_PRIORITY, KUEUE_QUEUE, gpu_claim_spec, gpu_claim_template, gpu_claim_template_name, meta, pod_defaults,
)
from manifesto.render.k8s.model import LWS_API
from manifesto.resolve.names import ACCELERATOR_CLAIM
from manifesto.errors import format_path

__all__ = ["LOWERINGS", "ACCELERATOR_CLAIM", "workload_objects", "service_name"]

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
APP_NAME_LABEL = "app.kubernetes.io/name"
_KUEUE_LABELS = (KUEUE_QUEUE, KUEUE_PRIORITY)

Where = Callable[[tuple], "Origin | None"]


class _Ctx:
    """One lowering: the workload, the accelerator profile, and where fields came from."""

    def __init__(self, workload, accelerator, namespace: str, where: Where | None) -> None:
        self.w = workload
        self.acc = accelerator
        self.namespace = namespace
        self._where = where
        self.count = workload.accelerator_count if accelerator is not None else 0
        if workload.accelerator_count and accelerator is None:
            self.fail("the workload needs accelerators but no accelerator profile was given", ("accelerator_count",))
        explicit = workload.queue_name
        default = accelerator.queue_name if accelerator is not None and self.count else None
        self.queue = explicit or default
        self.priority = accelerator.priority_class if self.queue and accelerator is not None else None

    def fail(self, message: str, path: tuple = ()) -> NoReturn:
        origin = self._where(path) if self._where and path else None
        raise ResolveError(message, origin, format_path(path))

    # -- accelerator claims ---------------------------------------------------------------

    def claim_spec(self) -> dict:
        return gpu_claim_spec(self.acc.device_class_name, self.count)

    def dra(self) -> bool:
        return bool(self.count) and self.acc.backend == "dra"

    def claim_template_name(self) -> str:
        return gpu_claim_template_name(self.w.name, self.claim_spec())

    def claim_template(self, labels: dict[str, str]) -> dict:
        return gpu_claim_template(self.w.name, self.namespace, labels, self.acc.device_class_name, self.count)


def _placement_defaults(ctx: _Ctx) -> dict:
    """The cluster's pod defaults, through the serving renderer's ``pod_defaults``."""
    from manifesto.resolve.plan import Placement

    acc = ctx.acc
    if acc is None:
        return {}
    p = acc.placement
    placement = Placement(
        node_selector=acc.node_selector, affinity=p.affinity, tolerations=p.tolerations, annotations=p.annotations,
        image_pull_secrets=p.image_pull_secrets, image_pull_policy=p.image_pull_policy, dns_policy=p.dns_policy,
        dns_config=p.dns_config,
    )
    return pod_defaults(SimpleNamespace(placement=placement), {}, gpu=bool(ctx.count))


def _merge_defaults(spec: dict, defaults: dict) -> None:
    """Cluster defaults under the workload's own values: scalars and maps yield, lists merge."""
    for key, value in defaults.items():
        if key == "nodeSelector":
            spec[key] = {**value, **spec.get(key, {})}
        elif key == "tolerations":
            own = spec.get(key, [])
            spec[key] = [t for t in value if t not in own] + own
        elif key == "imagePullSecrets":
            own = spec.get(key, [])
            names = {s.get("name") for s in own if isinstance(s, dict)}
            spec[key] = [s for s in value if s["name"] not in names] + own
        else:
            spec.setdefault(key, value)


def _unique_claim(ctx: _Ctx, items: list, name: str, path: tuple) -> None:
    if any(isinstance(c, dict) and c.get("name") == name for c in items):
        ctx.fail(f"claim name '{name}' is already used here; Manifesto adds it for the cluster's accelerator, "
                 "so drop it from the workload", path)


def _attach_accelerator(ctx: _Ctx, spec: dict, key: str) -> None:
    """Accelerator resources and platform claims on the accelerator container of one pod spec."""
    cname = ctx.w.gpu_container
    index = next(i for i, c in enumerate(spec["containers"]) if c["name"] == cname)
    container = spec["containers"][index]
    at = (key, "spec", "containers", index)
    resources = container.setdefault("resources", {})
    if not isinstance(resources, dict):
        ctx.fail("expected a mapping of requests and limits", at + ("resources",))
    pod_claims: list[dict] = []
    container_claims: list[dict] = []
    if ctx.acc.backend == "dra":
        pod_claims.append({"name": ACCELERATOR_CLAIM, "resourceClaimTemplateName": ctx.claim_template_name()})
        container_claims.append({"name": ACCELERATOR_CLAIM})
    else:
        name, value = ctx.acc.resource_name, str(ctx.count)
        for part in ("requests", "limits"):
            table = resources.setdefault(part, {})
            if name in table and str(table[name]) != value:
                ctx.fail(f"{name} is {table[name]} here but accelerator_count is {ctx.count}; leave the "
                         "accelerator resource to accelerator_count", at + ("resources", part, name))
            table[name] = value
    for claim in ctx.acc.claims:
        pod_claims.append({"name": claim.name, "resourceClaimTemplateName": claim.resource_claim_template_name})
        container_claims.append({"name": claim.name})
    if not pod_claims:
        return
    own_pod = spec.setdefault("resourceClaims", [])
    own_container = resources.setdefault("claims", [])
    for claim in pod_claims:
        _unique_claim(ctx, own_pod, claim["name"], (key, "spec", "resourceClaims"))
    for claim in container_claims:
        _unique_claim(ctx, own_container, claim["name"], at + ("resources", "claims"))
    own_pod.extend(pod_claims)
    own_container.extend(container_claims)


def _pod_template(ctx: _Ctx, key: str, *, queue_on_pod: bool, restart: tuple[str, ...],
                  default_restart: str | None = None, extra_labels: dict[str, str] | None = None) -> dict:
    source = getattr(ctx.w, key)
    template = copy.deepcopy(source)
    metadata = template.get("metadata") or {}
    labels = {k: v for k, v in (metadata.get("labels") or {}).items() if k not in _KUEUE_LABELS}
    labels.update(extra_labels or {})
    if queue_on_pod and ctx.queue:
        labels[KUEUE_QUEUE] = ctx.queue
    annotations = dict(ctx.acc.placement.annotations) if ctx.acc is not None else {}
    annotations.update(metadata.get("annotations") or {})
    out_meta = {k: v for k, v in metadata.items() if k not in ("labels", "annotations")}
    if labels:
        out_meta["labels"] = labels
    if annotations:
        out_meta["annotations"] = dict(sorted(annotations.items()))
    spec = template["spec"]
    policy = spec.get("restartPolicy")
    if policy is None and default_restart:
        spec["restartPolicy"] = default_restart
    elif policy is not None and policy not in restart:
        ctx.fail(f"restartPolicy {policy} is not allowed for backend {ctx.w.backend}; use "
                 + " or ".join(restart), (key, "spec", "restartPolicy"))
    _merge_defaults(spec, _placement_defaults(ctx))
    pull = ctx.acc.placement.image_pull_policy if ctx.acc is not None else None
    if pull:
        for part in ("initContainers", "containers"):
            for c in spec.get(part) or []:
                if isinstance(c, dict):
                    c.setdefault("imagePullPolicy", pull)
    if ctx.count:
        _attach_accelerator(ctx, spec, key)
    return {"metadata": out_meta, "spec": spec}


def _object_labels(ctx: _Ctx) -> dict[str, str]:
    labels = {k: v for k, v in ctx.w.labels.items() if k not in _KUEUE_LABELS}
    if ctx.queue:
        labels[KUEUE_QUEUE] = ctx.queue
        if ctx.priority:
            labels[KUEUE_PRIORITY] = ctx.priority
    return labels


def _object_meta(ctx: _Ctx) -> dict:
    return meta(ctx.w.name, ctx.namespace, _object_labels(ctx), ctx.w.annotations)


def service_name(workload) -> str:
    """A LeaderWorkerSet already owns a headless Service named after itself, so its extra one is suffixed."""
    return f"{workload.name}-svc" if workload.backend == "leaderworkerset" else workload.name


def _job(ctx: _Ctx) -> tuple[dict, dict[str, str]]:
    policy = ctx.w.job
    template = _pod_template(ctx, "pod_template", queue_on_pod=True, restart=("Never", "OnFailure"),
                             default_restart="Never")
    if ctx.w.service is not None and ctx.w.service.type == "headless":
        template["spec"].setdefault("subdomain", service_name(ctx.w))  # stable <pod>.<service> DNS names
    if ctx.queue and policy.suspend is False:
        ctx.fail(f"a Job queued in Kueue ({ctx.queue}) is created suspended and Kueue resumes it on admission; "
                 "drop suspend: false or the queue", ("job", "suspend"))
    spec: dict[str, Any] = {}
    suspend = True if ctx.queue else policy.suspend
    if suspend is not None:
        spec["suspend"] = suspend
    if policy.completion_mode == "Indexed":
        spec["completionMode"] = "Indexed"
    for attr, key in (("completions", "completions"), ("parallelism", "parallelism"),
                      ("backoff_limit", "backoffLimit"), ("active_deadline_seconds", "activeDeadlineSeconds"),
                      ("ttl_seconds_after_finished", "ttlSecondsAfterFinished")):
        value = getattr(policy, attr)
        if value is not None:
            spec[key] = value
    spec["template"] = template
    obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": _object_meta(ctx), "spec": spec}
    return obj, {JOB_NAME_LABEL: ctx.w.name}


def _deployment(ctx: _Ctx) -> tuple[dict, dict[str, str]]:
    own = (ctx.w.pod_template.get("metadata") or {}).get("labels") or {}
    selector = {k: v for k, v in own.items() if k not in _KUEUE_LABELS} or {APP_NAME_LABEL: ctx.w.name}
    template = _pod_template(ctx, "pod_template", queue_on_pod=True, restart=("Always",), extra_labels=selector)
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _object_meta(ctx),
        "spec": {"replicas": ctx.w.replicas, "selector": {"matchLabels": selector}, "template": template},
    }
    return obj, selector


def _leaderworkerset(ctx: _Ctx) -> tuple[dict, dict[str, str]]:
    lwt: dict[str, Any] = {"size": ctx.w.group_size}
    if ctx.w.leader_template is not None:
        lwt["leaderTemplate"] = _pod_template(ctx, "leader_template", queue_on_pod=False, restart=("Always",))
    lwt["workerTemplate"] = _pod_template(ctx, "pod_template", queue_on_pod=False, restart=("Always",))
    obj = {
        "apiVersion": LWS_API,
        "kind": "LeaderWorkerSet",
        "metadata": _object_meta(ctx),
        "spec": {"replicas": ctx.w.replicas, "leaderWorkerTemplate": lwt},
    }
    return obj, {LWS_NAME_LABEL: ctx.w.name}


def _grove(ctx: _Ctx) -> tuple[dict, dict[str, str]]:
    ctx.fail("backend 'grove' is reserved and not implemented yet: its rendering contract is still open. "
             "The extension point is manifesto.render.k8s.workload.LOWERINGS; until then use job, "
             "deployment or leaderworkerset", ("backend",))


LOWERINGS: dict[str, Callable[[_Ctx], tuple[dict, dict[str, str]]]] = {
    "job": _job,
    "deployment": _deployment,
    "leaderworkerset": _leaderworkerset,
    "grove": _grove,
}


def _service(ctx: _Ctx, selector: dict[str, str]) -> dict:
    svc = ctx.w.service
    spec: dict[str, Any] = {"type": "ClusterIP"}
    if svc.type == "headless":
        spec["clusterIP"] = "None"
    spec["selector"] = dict(selector)
    if svc.ports:
        ports = []
        for p in svc.ports:
            entry: dict[str, Any] = {}
            if p.name:
                entry["name"] = p.name
            entry.update({"port": p.port, "targetPort": p.target_port if p.target_port is not None else p.port,
                          "protocol": p.protocol})
            ports.append(entry)
        spec["ports"] = ports
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": meta(service_name(ctx.w), ctx.namespace, dict(ctx.w.labels)), "spec": spec}


def workload_objects(workload, accelerator, namespace: str, *, where: Where | None = None) -> list[dict]:
    """Kubernetes objects for ``workload`` (a WorkloadPlan): claim template, Service, then the
    workload itself.

    ``accelerator`` is a ``manifesto.workload.AcceleratorSettings`` (None for a workload
    that needs no accelerators); ``where`` maps a field path to its origin for errors.
    """
    ctx = _Ctx(workload, accelerator, namespace, where)
    obj, selector = LOWERINGS[workload.backend](ctx)
    out: list[dict] = []
    if ctx.dra():
        labels = {k: v for k, v in workload.labels.items() if k not in _KUEUE_LABELS}
        out.append(ctx.claim_template(labels))
    if workload.service is not None:
        out.append(_service(ctx, selector))
    out.append(obj)
    return out
