"""Instance identity: names, labels and selectors derived from the release."""

from __future__ import annotations

import re

from manifesto.errors import ResolveError
from manifesto.resolve.names import (
    COMPONENT_LABEL, INSTANCE_LABEL, MANAGED_BY, MANAGED_BY_LABEL, OWNER_LABEL, ROLE_LABEL,
)

__all__ = ["instance_name", "user_prefixed", "label_value", "instance_labels", "role_labels", "role_selector"]


def label_value(text: str) -> str:
    """Make ``text`` a valid label value (<= 63 chars of [A-Za-z0-9._-], alnum at both ends)."""
    value = re.sub(r"[^A-Za-z0-9._-]+", "-", text)[:63]
    return value.strip("-._")


def user_prefixed(name: str, user: str, user_prefix: bool, *, what: str = "instance name",
                  fix: str = "shorten the release") -> str:
    """``name`` with the user's prefix when the cluster asks for one (``naming.user_prefix``).

    Every name a user chooses for cluster objects goes through here (the release, a role's
    ``workload_name``), so two users of one namespace never share an object.
    """
    if not user_prefix:
        return name
    prefix = re.sub(r"[^a-z0-9-]+", "-", user.lower()).strip("-")
    if not prefix:
        raise ResolveError(f"user '{user}' gives an empty name prefix; pass --user with letters or digits")
    full = f"{prefix}-{name}"
    if len(full) > 63:
        raise ResolveError(f"{what} '{full}' is longer than 63 characters; {fix}")
    return full


def instance_name(release: str, user: str, user_prefix: bool) -> str:
    return user_prefixed(release, user, user_prefix)


def instance_labels(instance: str, user: str) -> dict[str, str]:
    return {
        INSTANCE_LABEL: instance,
        MANAGED_BY_LABEL: MANAGED_BY,
        OWNER_LABEL: label_value(user) or "unknown",
    }


def role_selector(instance: str, role: str) -> dict[str, str]:
    return {
        INSTANCE_LABEL: instance,
        COMPONENT_LABEL: "model-server",
        ROLE_LABEL: role,
    }


def role_labels(instance: str, user: str, role: str, model_label: str, routing_label: str | None,
                topology: str) -> dict[str, str]:
    labels = {**instance_labels(instance, user), **role_selector(instance, role)}
    labels["llm-d.ai/model"] = label_value(model_label) or "model"
    if routing_label is not None:
        labels["llm-d.ai/inferenceServing"] = "true"
        labels["llm-d.ai/role"] = routing_label
        labels["llm-d.ai/deployment"] = "pd" if topology == "pd" else "aggregated"
    return dict(sorted(labels.items()))
