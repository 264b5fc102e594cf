"""Live objects of Manifesto instances, found by labels: one concurrent get per type."""

from __future__ import annotations

from dataclasses import dataclass

from manifesto.ops.kubectl import Kube, dig, is_not_served, items, run
from manifesto.resolve.names import COMPONENT_LABEL, INSTANCE_LABEL, MANAGED_BY_LABEL, OWNER_LABEL

__all__ = ["MANAGED", "INSTANCE", "COMPONENT", "OWNER", "TYPES", "Live", "selector", "list_types", "discover",
           "group_by_instance", "resource_of"]

MANAGED = MANAGED_BY_LABEL
INSTANCE = INSTANCE_LABEL
COMPONENT = COMPONENT_LABEL
OWNER = OWNER_LABEL

# Every namespaced type Manifesto renders (plus pods), as fully qualified resource names.
TYPES: dict[str, str] = {
    "Gateway": "gateways.gateway.networking.k8s.io",
    "HTTPRoute": "httproutes.gateway.networking.k8s.io",
    "DestinationRule": "destinationrules.networking.istio.io",
    "InferencePool": "inferencepools.inference.networking.k8s.io",
    "DisaggregatedSet": "disaggregatedsets.disaggregatedset.x-k8s.io",
    "LeaderWorkerSet": "leaderworkersets.leaderworkerset.x-k8s.io",
    "Deployment": "deployments.apps",
    "Job": "jobs.batch",
    "Service": "services",
    "ConfigMap": "configmaps",
    "ResourceClaimTemplate": "resourceclaimtemplates.resource.k8s.io",
    "RoleBinding": "rolebindings.rbac.authorization.k8s.io",
    "Role": "roles.rbac.authorization.k8s.io",
    "ServiceAccount": "serviceaccounts",
    "Pod": "pods",
}


@dataclass(frozen=True)
class Live:
    """One live object: kind, name and labels."""

    kind: str
    name: str
    labels: tuple[tuple[str, str], ...] = ()

    @property
    def instance(self) -> str:
        return dict(self.labels).get(INSTANCE, "")

    @property
    def component(self) -> str:
        return dict(self.labels).get(COMPONENT, "")

    @property
    def ref(self) -> str:
        return f"{TYPES.get(self.kind, self.kind.lower())}/{self.name}"

    def label(self, key: str) -> str:
        return dict(self.labels).get(key, "")


def resource_of(kind: str) -> str:
    return TYPES.get(kind, kind.lower())


def selector(instance: str | None = None) -> str:
    sel = f"{MANAGED}=manifesto"
    return f"{sel},{INSTANCE}={instance}" if instance else sel


def _parse(kind: str, result) -> list[Live]:
    out = []
    for item in items(result):
        labels = dig(item, "metadata", "labels")
        labels = labels if isinstance(labels, dict) else {}
        name = dig(item, "metadata", "name")
        own_kind = item.get("kind")
        if not isinstance(name, str) or not name:
            continue  # not an object kubectl would list; nothing could act on it
        out.append(Live(own_kind if isinstance(own_kind, str) and own_kind else kind, name,
                        tuple(sorted((k, v) for k, v in labels.items() if isinstance(v, str)))))
    return out


def list_types(kube: Kube, kinds, sel: str, *, retries: int | None = None) -> list[Live]:
    """Objects of ``kinds`` matching ``sel``, one kubectl get per type run concurrently.

    A type the cluster does not serve lists as zero objects; other failures raise.
    """
    from concurrent.futures import ThreadPoolExecutor

    kinds = list(kinds)
    calls = [kube.read("get", TYPES[k], "-l", sel, "-o", "json", check=False, retries=retries) for k in kinds]
    if not calls:
        return []
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        results = list(pool.map(run, calls))
    out: list[Live] = []
    for kind, call, result in zip(kinds, calls, results):
        if result.ok:
            out.extend(_parse(kind, result))
        elif not is_not_served(result.stderr):
            from manifesto.errors import OpsError
            from manifesto.ops.kubectl import failure

            raise OpsError(failure(call, result))
    return out


def discover(kube: Kube, instance: str | None = None, *, retries: int | None = None) -> list[Live]:
    return list_types(kube, TYPES, selector(instance), retries=retries)


def group_by_instance(objs: list[Live]) -> dict[str, list[Live]]:
    groups: dict[str, list[Live]] = {}
    for obj in objs:
        if obj.instance:
            groups.setdefault(obj.instance, []).append(obj)
    return dict(sorted(groups.items()))
