"""The fields of live objects the idle-shutdown controller owns, read from the controller itself.

Argo CD (``ignoreDifferences``) and ``manifesto status``/``diff`` must leave alone exactly what
the controller changes after the idle timeout, or they fight it (self-heal scales the
instance back up) or call an idle instance drifted. Two facts decide it, and both come from
the controller, so they cannot drift apart from what it does:

- *which* objects: the controller's configuration in the artifact (its Deployment's
  environment), parsed by the controller's own ``load_config``: every workload it scales
  (WORKLOADS, then itself, CONTROLLER); the Gateway it deletes (GATEWAY) is no field of a
  live object, so it is reported apart;
- *which* fields: the body of the merge patch ``Kube.scale`` sends, read from the shipped
  script's syntax tree (the very bytes the ConfigMap carries); and on the InferencePool it
  stamps when it shuts down (POOL), the annotation named there, under the prefix of the
  patch ``Kube.annotate`` sends; on a DisaggregatedSet, each role's replicas at the path of
  the JSON patch operation ``idle_dset.py``'s ``Kube.scale`` builds per role.
"""

from __future__ import annotations

from collections import namedtuple
from functools import cache

from manifesto.resolve.names import COMPONENT_LABEL

__all__ = ["Owned", "annotate_patch_prefix", "dset_role_path", "owned_fields", "scale_patch_paths"]


class Owned(namedtuple("_Owned", ("api_version", "kind", "name", "namespace", "paths"))):
    """One artifact object and the field paths (tuples of keys) the controller writes on it."""

    __slots__ = ()

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


@cache
def scale_patch_paths() -> tuple[tuple[str, ...], ...]:
    """The field paths the body of ``Kube.scale``'s PATCH request sets (``(("spec", "replicas"),)``),
    read from the controller's source as it is shipped."""
    return _patch_paths("scale")


@cache
def annotate_patch_prefix() -> tuple[str, ...]:
    """The path under which ``Kube.annotate``'s PATCH sets the annotation it is given
    (``("metadata", "annotations")``), read from the controller's source as it is shipped."""
    paths = _patch_paths("annotate")
    if len(paths) != 1 or paths[0][-1] is not None:
        raise RuntimeError("idle_controller.py: Kube.annotate no longer patches one key given by its caller; "
                           f"teach {__name__} to read it")
    return paths[0][:-1]


@cache
def dset_role_path() -> tuple:
    """The field path, with None for the role's position, of the JSON patch operation that
    ``idle_dset.py``'s ``Kube.scale`` adds per role (``("spec", "roles", None, "spec",
    "replicas")``), read from that script's source as it is shipped."""
    import ast

    from manifesto.render.k8s.idle import DSET_KEY, shipped

    tree = ast.parse(shipped(DSET_KEY))
    kube = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Kube")
    scale = next(n for n in kube.body if isinstance(n, ast.FunctionDef) and n.name == "scale")
    found = []
    for node in ast.walk(scale):
        if not isinstance(node, ast.Dict):
            continue
        fields = {k.value: v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)}
        op, path = fields.get("op"), fields.get("path")
        if isinstance(op, ast.Constant) and op.value in ("add", "replace") and isinstance(path, ast.JoinedStr):
            found.append(path)
    if len(found) != 1:
        raise RuntimeError(f"idle_dset.py: Kube.scale no longer writes one field per role; teach {__name__} to read it")
    steps: list = []
    for part in found[0].values:
        if isinstance(part, ast.Constant):
            steps += [p for p in part.value.split("/") if p]
        else:
            steps.append(None)  # the role's position
    if steps.count(None) != 1:
        raise RuntimeError(f"idle_dset.py: Kube.scale's per-role path has no single role position; teach {__name__}")
    return tuple(steps)


def _patch_paths(method: str) -> tuple[tuple, ...]:
    """The field paths the body of ``Kube.<method>``'s one PATCH request sets; a key that is no
    literal (the caller's) is None."""
    import ast

    from manifesto.render.k8s.idle import controller_script

    tree = ast.parse(controller_script())
    kube = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Kube")
    func = next(n for n in kube.body if isinstance(n, ast.FunctionDef) and n.name == method)
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "request" and n.args and isinstance(n.args[0], ast.Constant)
             and n.args[0].value == "PATCH"]
    if len(calls) != 1 or len(calls[0].args) < 3 or not isinstance(calls[0].args[2], ast.Dict):
        raise RuntimeError(f"idle_controller.py: Kube.{method} no longer sends one PATCH with a literal body; "
                           f"teach {__name__} to read it")
    paths: list[tuple] = []

    def walk(node: ast.Dict, prefix: tuple) -> None:
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                step = key.value
            elif isinstance(key, ast.Name):
                step = None
            else:
                raise RuntimeError(f"idle_controller.py: Kube.{method}'s patch has a key that is neither "
                                   "a literal string nor a parameter")
            if isinstance(value, ast.Dict):
                walk(value, prefix + (step,))
            else:
                paths.append(prefix + (step,))

    walk(calls[0].args[2], ())
    if method == "scale" and any(None in p for p in paths):
        raise RuntimeError("idle_controller.py: Kube.scale's patch has a key that is not a literal string")
    return tuple(paths)


def _controller_env(objs: list[dict]) -> tuple[dict, dict] | None:
    """(the controller's Deployment, its container's environment as the controller reads it),
    None when the artifact runs no idle-shutdown controller."""
    for obj in objs:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if obj.get("kind") != "Deployment" or labels.get(COMPONENT_LABEL) != "idle-shutdown":
            continue
        containers = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
        env: dict[str, str] = {}
        for item in (containers[0].get("env") or []) if containers else []:
            if "value" in item:
                env[item["name"]] = str(item["value"])
            elif item.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.namespace":
                env[item["name"]] = obj["metadata"].get("namespace") or ""
        return obj, env
    return None


def owned_fields(objs: list[dict]) -> tuple[list[Owned], list[tuple[str, str]]]:
    """``(owned, deleted)`` for an artifact's objects: every object whose fields the idle-shutdown
    controller writes, with those fields, and the (kind, name) of objects it deletes. Both empty
    when the artifact has no controller."""
    found = _controller_env(objs)
    if found is None:
        return [], []
    import manifesto.render.k8s.idle_controller as idle_controller

    deployment, env = found
    config = idle_controller.load_config(env)
    by_path = {_api_path(o): o for o in objs if "apiVersion" in o and "kind" in o}
    paths = scale_patch_paths()
    owned = []
    for workload in (*config.workloads, config.controller):
        obj = by_path.get(workload.path)
        if obj is None:
            raise RuntimeError(f"the idle-shutdown controller {deployment['metadata']['name']} scales "
                               f"{workload.path}, which is no object of the artifact")
        meta = obj["metadata"]
        fields = paths
        if obj["kind"] == "DisaggregatedSet":  # each role's own replicas (idle_dset.py)
            template = dset_role_path()
            fields = tuple(tuple(i if step is None else step for step in template)
                           for i in range(len((obj.get("spec") or {}).get("roles") or [])))
        owned.append(Owned(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace") or "", fields))
    if config.pool is not None:
        obj = by_path.get(config.pool.path)
        if obj is None:
            raise RuntimeError(f"the idle-shutdown controller {deployment['metadata']['name']} stamps "
                               f"{config.pool.path}, which is no object of the artifact")
        meta = obj["metadata"]
        owned.append(Owned(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace") or "",
                           (annotate_patch_prefix() + (config.pool_annotation,),)))
    deleted = []
    if config.gateway is not None:
        obj = by_path.get(config.gateway.path)
        deleted.append((obj["kind"], obj["metadata"]["name"]) if obj else ("Gateway", config.gateway.name))
    return owned, deleted


def _api_path(obj: dict) -> str:
    """The API path of a namespaced object, as the controller's configuration writes it."""
    version = obj["apiVersion"]
    base = f"/api/{version}" if "/" not in version else f"/apis/{version}"
    meta = obj.get("metadata") or {}
    return f"{base}/namespaces/{meta.get('namespace')}/{obj['kind'].lower()}s/{meta.get('name')}"
