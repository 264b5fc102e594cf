"""Object names of one instance and the label keys Manifesto writes and selects on, in one
place so every emitter and every cluster workflow agrees."""

from __future__ import annotations

__all__ = [
    "INSTANCE_LABEL", "MANAGED_BY_LABEL", "COMPONENT_LABEL", "OWNER_LABEL", "ROLE_LABEL", "MANAGED_BY",
    "KUEUE_QUEUE_LABEL", "KUEUE_PRIORITY_LABEL", "ACCELERATOR_CLAIM", "COMPUTE_DOMAIN_CLAIM",
    "LWS_GROUP_INDEX_LABEL",
    "pool", "epp", "epp_config", "envoy_config", "epp_account", "gateway", "gateway_options",
    "route", "idle", "model_account",
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


def route(instance: str) -> str:
    return f"{instance}-route"


def idle(instance: str) -> str:
    """ServiceAccount, Role, RoleBinding, ConfigMap and Deployment of the idle-shutdown controller."""
    return f"{instance}-idle-shutdown"


def model_account(instance: str) -> str:
    return f"{instance}-model-server"
