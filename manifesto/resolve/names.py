"""Object names of one instance, in one place so every emitter agrees."""

from __future__ import annotations

__all__ = [
    "pool", "epp", "epp_config", "envoy_config", "epp_account", "gateway", "gateway_options",
    "route", "idle", "model_account",
]


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
