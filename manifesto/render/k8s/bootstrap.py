"""Namespace prerequisites a cluster profile declares (today: the shared cache PVC)."""

from __future__ import annotations

from manifesto.render.k8s.validity import check_objects
from manifesto.resolve.names import COMPONENT_LABEL, MANAGED_BY, MANAGED_BY_LABEL
from manifesto.util.yamlemit import dump_all

__all__ = ["bootstrap_objects", "render_bootstrap"]


def bootstrap_objects(profile, namespace: str) -> list[dict]:
    """Objects for ``profile`` in ``namespace``; empty when it declares nothing to provision."""
    from manifesto.errors import ResolveError

    claim = profile.storage.shared_claim
    if claim is None:
        return []
    source = (profile.storage.shared_volume or {}).get("persistentVolumeClaim") or {}
    name = source.get("claimName") if isinstance(source, dict) else None
    if not name:
        raise ResolveError("storage.shared_claim needs storage.shared_volume.persistentVolumeClaim.claimName "
                           "to name the claim it provisions", path="storage.shared_claim")
    spec = {"accessModes": list(claim.access_modes), "resources": {"requests": {"storage": claim.size}}}
    if claim.storage_class:
        spec["storageClassName"] = claim.storage_class
    labels = {MANAGED_BY_LABEL: MANAGED_BY, COMPONENT_LABEL: "shared-cache"}
    return check_objects([{
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }])


def render_bootstrap(profile, namespace: str, cluster_yaml: str) -> str:
    import shlex

    from manifesto.render.header import RUN_NOTE, command_lines

    lines = [
        *command_lines("render bootstrap", [("--cluster", "MANIFESTO_CLUSTER", cluster_yaml)],
                       ["--namespace", shlex.quote(namespace)]),
        RUN_NOTE,
        "# Safe to apply repeatedly (kubectl apply).",
    ]
    objs = bootstrap_objects(profile, namespace)
    body = dump_all(objs) if objs else "# This cluster profile declares no namespace prerequisites.\n"
    return "\n".join(lines) + "\n" + body
