"""Kubernetes renderer: Plan -> ordered object dicts -> YAML with a provenance header."""

from __future__ import annotations

from manifesto.render.header import provenance_header
from manifesto.render.k8s.common import meta
from manifesto.render.k8s.model import model_objects, model_service_account
from manifesto.render.k8s.sidecars import dcgm_configmap
from manifesto.render.yamlemit import dump_all

__all__ = ["objects", "render_manifest"]


def _service_accounts(plan) -> list[dict]:
    sa = model_service_account(plan)
    if sa is None:
        return []
    return [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(sa, plan.namespace, plan.labels)}]


def _scc_binding(plan) -> list[dict]:
    sa = model_service_account(plan)
    if sa is None:
        return []
    return [{
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": meta(f"{sa}-scc", plan.namespace, plan.labels),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": f"system:openshift:scc:{plan.openshift_scc}"},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": plan.namespace}],
    }]


def objects(plan) -> list[dict]:
    """Every object of the instance in a fixed order: identity, config, claims, services, workloads."""
    model = model_objects(plan)
    cms = [cm for cm in (dcgm_configmap(plan),) if cm is not None]
    return [
        *_service_accounts(plan),
        *_scc_binding(plan),
        *cms,
        *model["ResourceClaimTemplate"],
        *model["Service"],
        *model["workload"],
    ]


def render_manifest(plan, model_yaml: str, cluster_yaml: str) -> str:
    return provenance_header("render manifest", model_yaml, cluster_yaml) + dump_all(objects(plan))
