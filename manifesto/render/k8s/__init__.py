"""Kubernetes renderer: Plan -> ordered object dicts -> YAML with a provenance header."""

from __future__ import annotations

from manifesto.render.header import provenance_header
from manifesto.resolve import names
from manifesto.render.k8s.common import meta
from manifesto.render.k8s.model import model_objects
from manifesto.render.k8s.routing import routing_objects
from manifesto.render.k8s.sidecars import dcgm_configmap
from manifesto.render.k8s.validity import check_objects
from manifesto.util.yamlemit import dump_all

__all__ = ["DIGEST_ANNOTATION", "objects", "routing_only", "render_text", "with_digest", "annotated",
           "digested_yaml"]

#: Every object of an artifact carries the digest of the artifact's objects (before this
#: annotation), so `manifesto status` can tell a live object applied from it from one changed since.
DIGEST_ANNOTATION = "manifesto.llm-d.ai/artifact-digest"


def _model_account(plan) -> list[dict]:
    if not plan.openshift_scc:
        return []
    sa = names.model_account(plan.instance)
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(sa, plan.namespace, plan.labels)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta(f"{sa}-scc", plan.namespace, plan.labels),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": f"system:openshift:scc:{plan.openshift_scc}"},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": plan.namespace}],
        },
    ]


def _by_kind(objs: list[dict], *kinds: str) -> list[dict]:
    return [o for o in objs if o["kind"] in kinds]


def objects(plan) -> list[dict]:
    """Every object of the instance in apply order: identity and RBAC, configuration, claims,
    services, model workloads, routing, and last the idle-shutdown controller."""
    from manifesto.render.k8s.idle import idle_objects

    model = model_objects(plan)
    routing = routing_objects(plan)
    idle = idle_objects(plan)
    accounts = _model_account(plan) + routing["rbac"] + _by_kind(idle, "ServiceAccount", "Role", "RoleBinding")
    configs = [cm for cm in (dcgm_configmap(plan),) if cm is not None] + routing["ConfigMap"]
    return _waved(plan, check_objects([
        *_by_kind(accounts, "ServiceAccount"),
        *_by_kind(accounts, "Role"),
        *_by_kind(accounts, "RoleBinding"),
        *configs,
        *_by_kind(idle, "ConfigMap"),
        *model["ResourceClaimTemplate"],
        *model["Service"],
        *routing["Service"],
        *model["workload"],
        *routing["pool"],
        *routing["Deployment"],
        *routing["frontend"],
        *_by_kind(idle, "Deployment"),
    ]))


def _waved(plan, objs: list[dict]) -> list[dict]:
    """``objs`` with Argo CD sync-wave annotations when the plan asks for them (a deployment
    target a gitops target covers); otherwise exactly ``objs``."""
    if not plan.sync_waves:
        return objs
    from manifesto.render.k8s.waves import with_waves

    return with_waves(objs)


def routing_only(plan) -> list[dict]:
    """Just the routing layer (for `render routing` and `deploy routing`)."""
    r = routing_objects(plan)
    return _waved(plan, check_objects([*r["rbac"], *r["ConfigMap"], *r["Service"], *r["pool"], *r["Deployment"],
                                       *r["frontend"]]))


def with_digest(objs: list[dict]) -> list[dict]:
    """``objs`` with :data:`DIGEST_ANNOTATION` set to the digest of their YAML."""
    return annotated(objs, _digest(dump_all(objs)))


def annotated(objs: list[dict], value: str) -> list[dict]:
    """``objs`` with :data:`DIGEST_ANNOTATION` set to ``value`` (copies: ``objs`` is left as it is)."""
    return [{**obj, "metadata": _annotated(obj["metadata"], value)} for obj in objs]


def digested_yaml(objs: list[dict]) -> str:
    """``dump_all(with_digest(objs))``, writing each object once: the digest is taken over the
    objects' parts, and only the metadata part is written again with the annotation."""
    return _digested(objs)[0]


def _digested(objs: list[dict]) -> tuple[str, str]:
    """(``digested_yaml(objs)``, the digest value it annotates every object with)."""
    from manifesto.util.yamlemit import dump_parts

    parts = [dump_parts(obj) for obj in objs]
    value = _digest("".join("---\n" + "".join(text for _, text in p) for p in parts))
    text = "".join(
        "---\n" + "".join(dump_parts({key: _annotated(obj[key], value)})[0][1] if key == "metadata" else text
                          for key, text in p)
        for obj, p in zip(objs, parts))
    return text, value


def _digest(text: str) -> str:
    from manifesto.util.hashing import sha256_hex

    return "sha256:" + sha256_hex(text.encode())[:32]


def _annotated(metadata: dict, value: str) -> dict:
    return {**metadata, "annotations": {**(metadata.get("annotations") or {}), DIGEST_ANNOTATION: value}}


def render_text(command: str, objs: list[dict], model_yaml: str, cluster_yaml: str, options=None,
                routing_yaml=None) -> tuple[str, str]:
    """(text, digest) of ``objs``: the provenance header of ``command`` ("render manifest" or
    "render routing") and the objects' YAML, each annotated with the digest."""
    header = provenance_header(command, model_yaml, cluster_yaml, options=options, routing_yaml=routing_yaml)
    text, value = _digested(objs)
    return header + text, value
