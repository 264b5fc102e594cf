"""Object names of one instance and the label keys Manifesto writes and selects on, in one
place so every emitter and every cluster workflow agrees."""

from __future__ import annotations

from manifesto.util.hashing import sha256_hex

__all__ = [
    "INSTANCE_LABEL", "MANAGED_BY_LABEL", "COMPONENT_LABEL", "OWNER_LABEL", "ROLE_LABEL", "MANAGED_BY",
    "KUEUE_QUEUE_LABEL", "KUEUE_PRIORITY_LABEL", "ACCELERATOR_CLAIM", "COMPUTE_DOMAIN_CLAIM",
    "LWS_GROUP_INDEX_LABEL", "LWS_WORKER_INDEX_LABEL",
    "pool", "epp", "epp_config", "envoy_config", "epp_account", "gateway", "gateway_options",
    "route", "idle", "model_account", "pool_service", "epp_destination_rule", "pool_destination_rule",
    "service_host",
]


INSTANCE_LABEL = "app.kubernetes.io/instance"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
COMPONENT_LABEL = "app.kubernetes.io/component"
OWNER_LABEL = "llm-d.ai/owner"
ROLE_LABEL = "manifesto.llm-d.ai/role"
#: The value of MANAGED_BY_LABEL on every object Manifesto renders.
MANAGED_BY = "manifesto"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
#: The pod resource claim of a DRA-allocated accelerator.
ACCELERATOR_CLAIM = "accelerator"
#: The pod resource claim of an accelerator's IMEX compute domain.
COMPUTE_DOMAIN_CLAIM = "compute-domain-channel"
#: Set by the LeaderWorkerSet controller on every pod: the index of its group.
LWS_GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
#: Set by the LeaderWorkerSet controller on every pod: its index inside the group.
LWS_WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"

def pool(instance: str) -> str:
    return f"{instance}-infpool"


def epp(instance: str) -> str:
    """The endpoint-picker Deployment and its Service."""
    return f"{instance}-infpool-epp"


def epp_config(instance: str) -> str:
    return f"{instance}-epp-config"


def envoy_config(instance: str) -> str:
    return f"{instance}-envoy-config"


def epp_account(instance: str) -> str:
    return f"{instance}-epp"


def gateway(instance: str) -> str:
    return f"{instance}-gateway"


def gateway_options(instance: str) -> str:
    return f"{instance}-gateway-options"


def pool_service(instance: str) -> str:
    """The headless Service Istio generates for the InferencePool (its shadow service): the pool
    name, ``-ip-`` and the first 8 hex digits of the SHA-256 of the pool name, the pool name cut
    so the whole stays within 63 characters (istio/istio
    pilot/pkg/config/kube/gateway/inferencepool_collection.go, InferencePoolServiceName)."""
    name = pool(instance)
    digest = sha256_hex(name.encode("utf-8"))[:8]
    return f"{name[:63 - len('-ip-') - len(digest)]}-ip-{digest}"


def epp_destination_rule(instance: str) -> str:
    """The DestinationRule of the gateway's connections to the endpoint picker."""
    return f"{instance}-infpool-epp"


def pool_destination_rule(instance: str) -> str:
    """The DestinationRule of the gateway's connections to the pool's model servers."""
    return f"{instance}-infpool-ip"


def service_host(service: str, namespace: str) -> str:
    """A Service's fully qualified name, as Istio matches DestinationRule hosts."""
    return f"{service}.{namespace}.svc.cluster.local"


def route(instance: str) -> str:
    return f"{instance}-route"


def idle(instance: str) -> str:
    """ServiceAccount, Role, RoleBinding, ConfigMap and Deployment of the idle-shutdown controller."""
    return f"{instance}-idle-shutdown"


def model_account(instance: str) -> str:
    return f"{instance}-model-server"
