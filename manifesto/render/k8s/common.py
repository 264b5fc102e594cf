"""Small builders shared by the Kubernetes emitters."""

from __future__ import annotations

import json
from typing import Any

from manifesto.util.hashing import sha256_hex
from manifesto.resolve.names import KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL

__all__ = ["meta", "env_entry", "pod_defaults", "digest8", "gpu_claim_spec", "gpu_claim_template",
           "gpu_claim_template_name", "sized", "KUEUE_QUEUE", "KUEUE_PRIORITY"]

KUEUE_QUEUE = KUEUE_QUEUE_LABEL
KUEUE_PRIORITY = KUEUE_PRIORITY_LABEL


def meta(name: str, namespace: str, labels: dict[str, str], annotations: dict[str, str] | None = None) -> dict:
    out: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if annotations:
        out["annotations"] = dict(annotations)
    return out


def sized(size, *, guaranteed: bool = False) -> dict:
    """Container resources of a routing component: CPU and memory requested, memory capped
    (CPU may burst); ``guaranteed`` also caps CPU, for the Guaranteed QoS class."""
    limits = {"cpu": size.cpu, "memory": size.memory} if guaranteed else {"memory": size.memory}
    return {"requests": {"cpu": size.cpu, "memory": size.memory}, "limits": limits}


def env_entry(var) -> dict:
    if var.secret is not None:
        name, key = var.secret
        return {"name": var.name, "valueFrom": {"secretKeyRef": {"name": name, "key": key, "optional": True}}}
    if var.field_ref is not None:
        return {"name": var.name, "valueFrom": {"fieldRef": {"fieldPath": var.field_ref}}}
    return {"name": var.name, "value": var.value or ""}


def pod_defaults(plan, spec: dict, *, gpu: bool) -> dict:
    """Apply cluster-owned placement to a PodSpec (GPU placement only on GPU pods); the pull
    policy goes on every container and init container already in ``spec``, none when the
    cluster sets none (Kubernetes then picks it from the image tag)."""
    p = plan.placement
    if p.image_pull_policy:
        for part in ("initContainers", "containers"):
            for container in spec.get(part) or ():
                container["imagePullPolicy"] = p.image_pull_policy
    if gpu and p.node_selector:
        spec["nodeSelector"] = dict(p.node_selector)
    if gpu and p.affinity:
        spec["affinity"] = json.loads(json.dumps(p.affinity))
    if gpu and p.tolerations:
        spec["tolerations"] = [dict(t) for t in p.tolerations]
    if p.image_pull_secrets:
        spec["imagePullSecrets"] = [{"name": n} for n in p.image_pull_secrets]
    if p.termination_grace_period_seconds is not None:
        spec["terminationGracePeriodSeconds"] = p.termination_grace_period_seconds
    if p.dns_policy:
        spec["dnsPolicy"] = p.dns_policy
    if p.dns_config:
        spec["dnsConfig"] = dict(p.dns_config)
    if gpu and p.security_context:
        spec["securityContext"] = dict(p.security_context)
    return spec


def digest8(value: Any) -> str:
    return sha256_hex(json.dumps(value, sort_keys=True, separators=(",", ":")).encode())[:8]


def gpu_claim_spec(device_class: str, count: int) -> dict:
    """A DRA claim for exactly ``count`` devices of ``device_class``."""
    return {"devices": {"requests": [{
        "name": "gpu",
        "exactly": {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count},
    }]}}


def gpu_claim_template(owner: str, namespace: str, labels: dict[str, str], device_class: str, count: int) -> dict:
    """The ResourceClaimTemplate for ``count`` devices of ``device_class`` used by ``owner``'s pods."""
    spec = gpu_claim_spec(device_class, count)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": meta(gpu_claim_template_name(owner, spec), namespace, labels),
        "spec": {"spec": spec},
    }


def gpu_claim_template_name(owner: str, spec: dict) -> str:
    """``<owner>-accelerator-<digest of the claim>``, at most 63 characters: a changed claim
    gets a new template, so a stable workload name can still take new claim settings."""
    base = f"{owner}-accelerator"[:54].rstrip("-")
    return f"{base}-{digest8(spec)}"
