"""Argo CD sync waves: the order in which Argo CD applies an artifact's objects.

Argo CD applies a lower ``argocd.argoproj.io/sync-wave`` first and waits for every object of
a wave to be healthy before it starts the next. An instance goes in four waves:

0. prerequisites: identity and RBAC, Secrets, ConfigMaps, claims and claim templates, so
   every pod finds what it mounts, reads or runs as;
1. model servers: the vLLM workloads and their Services;
2. routing: the InferencePool, the endpoint picker (with its standalone Envoy) and the
   Gateway frontend, which select the model servers' pods;
3. monitoring: PodMonitors and the idle-shutdown controller, which watch the rest.

A wave is decided by the object's kind, and for workloads and Services (which several
stages have) by its ``app.kubernetes.io/component`` label. The annotation is metadata only:
``kubectl apply`` applies the same objects in the same order with or without it.
"""

from __future__ import annotations

from manifesto.resolve.names import COMPONENT_LABEL

__all__ = ["ANNOTATION", "STAGES", "WAVES", "stage_of", "with_waves"]

ANNOTATION = "argocd.argoproj.io/sync-wave"
#: The stages in the order Argo CD applies them; a stage's wave is its index.
STAGES = ("prerequisites", "model servers", "routing", "monitoring")
WAVES = {stage: wave for wave, stage in enumerate(STAGES)}

_BY_KIND = {
    **dict.fromkeys(("Namespace", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
                     "Secret", "ConfigMap", "PersistentVolumeClaim", "ResourceClaimTemplate"), "prerequisites"),
    **dict.fromkeys(("InferencePool", "InferenceObjective", "Gateway", "HTTPRoute", "DestinationRule"), "routing"),
    **dict.fromkeys(("PodMonitor", "ServiceMonitor", "PrometheusRule"), "monitoring"),
}
_BY_COMPONENT = {
    "model-server": "model servers",
    "endpoint-picker": "routing",
    "inference-pool": "routing",
    "gateway": "routing",
    "idle-shutdown": "monitoring",
    "monitoring": "monitoring",
}


def stage_of(obj: dict) -> str:
    """The stage of one rendered object. An object this module does not know is a bug of the
    renderer (a new kind or component needs its stage here), never a silent wave 0."""
    stage = _BY_KIND.get(obj.get("kind"))
    if stage is not None:
        return stage
    labels = (obj.get("metadata") or {}).get("labels") or {}
    stage = _BY_COMPONENT.get(labels.get(COMPONENT_LABEL))
    if stage is None:
        raise ValueError(f"no Argo CD sync wave for {obj.get('kind')}/{(obj.get('metadata') or {}).get('name')} "
                         f"(component {labels.get(COMPONENT_LABEL)!r}); add its stage to {__name__}")
    return stage


def with_waves(objs: list[dict]) -> list[dict]:
    """``objs`` (same order) each with its sync-wave annotation, written after the object's own."""
    out = []
    for obj in objs:
        meta = obj["metadata"]
        notes = {**(meta.get("annotations") or {}), ANNOTATION: str(WAVES[stage_of(obj)])}
        out.append({**obj, "metadata": {**meta, "annotations": notes}})
    return out
