"""The last check before output: every rendered object against Kubernetes' own rules.

Inputs are validated field by field when they load; this pass catches what field rules
cannot see (a name built from several fields, two objects with one name) and anything a
future field forgets. It walks each object once and checks names, namespaces, labels,
annotations, container, volume, port and env names, int32 counts, ports, mount paths,
and resource names. A violation raises ``RenderCheckError`` naming the object and
the field; ``manifesto.render.k8s_objects`` places name problems on the spec field that caused them.
"""

from __future__ import annotations

import re
from functools import lru_cache

from manifesto.util import rules
from manifesto.errors import ManifestoError, RenderCheckError

__all__ = ["LimitError", "check_objects", "lws_pod_name", "size_problem", "MAX_ANNOTATIONS", "MAX_OBJECT",
           "MAX_CONFIGMAP"]

#: apimachinery's TotalAnnotationSizeLimitB: keys and values of one object's annotations.
MAX_ANNOTATIONS = 256 * 1024
#: etcd's default request limit (``--max-request-bytes``): the largest object the API server stores.
MAX_OBJECT = 1536 * 1024
#: The data of one ConfigMap (keys and values), as the API server enforces it.
MAX_CONFIGMAP = 1024 * 1024


class LimitError(RenderCheckError):
    """A rendered object over a Kubernetes size limit: the inputs' doing, not a bug; the
    renderer places it on the input field that fills the object."""

    def __init__(self, kind: str, name: str, field: str, problem: str) -> None:
        self.kind, self.name, self.field, self.problem, self.excess = kind, name, field, problem, 0
        ManifestoError.__init__(
            self, f"the rendered {kind} '{name}' is over a Kubernetes limit at {field}: {problem}")

# Kinds whose names become host names or label values (pods, LWS groups): DNS labels. Other
# names are DNS subdomains, as Kubernetes requires.
_LABEL_NAMED = {"Service", "Deployment", "LeaderWorkerSet", "StatefulSet", "Job", "Namespace"}
_DNS_POLICIES = {"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"}
_STANDARD_RESOURCES = {"cpu", "memory", "ephemeral-storage", "storage", "pods"}
_DATA_KEY = re.compile(r"^[-._a-zA-Z0-9]+\Z")
_GROUPS_OF_NAMES = ("containers", "initContainers", "volumes", "volumeMounts", "resourceClaims", "imagePullSecrets")


def lws_pod_name(obj: dict) -> str:
    """The longest pod name a LeaderWorkerSet creates: ``<name>-<group>-<index>``."""
    spec = obj.get("spec", {})
    size = spec.get("leaderWorkerTemplate", {}).get("size", 1)
    return f"{obj['metadata']['name']}-{max(spec.get('replicas', 1) - 1, 0)}-{max(size - 1, 0)}"


REVISION_HASH = rules.REVISION_HASH


def lws_statefulset_name(obj: dict) -> str:
    """The longest StatefulSet name a LeaderWorkerSet creates: the leaders' is its own name,
    each group's workers' (a group of more than one pod) ``<name>-<group>``."""
    spec = obj.get("spec", {})
    size = spec.get("leaderWorkerTemplate", {}).get("size", 1)
    name = obj["metadata"]["name"]
    return f"{name}-{max(spec.get('replicas', 1) - 1, 0)}" if size > 1 else name


def check_objects(objs: list[dict]) -> list[dict]:
    """Raise ``RenderCheckError`` for the first rule an object breaks; return ``objs``.

    Names that are too long are looked at first, all together, and the one furthest over its
    limit is reported: that is the name to blame (a long release overflows every name; a long
    role name overflows the names built from it, by more).
    """
    worst = max((problem for obj in objs for problem in _length_problems(obj)), default=None,
                key=lambda p: p.excess)
    if worst is not None:
        raise worst
    seen: set[tuple[str, str, str]] = set()
    for obj in objs:
        kind = obj.get("kind", "?")
        meta = obj.get("metadata", {})
        name = meta.get("name", "")
        fail = _failer(kind, name)
        label = kind in _LABEL_NAMED
        problem = (rules.dns1035_label if kind == "Service" else rules.dns_label if label else rules.dns_subdomain)(name)
        if problem:
            fail("metadata.name", f"'{name}' {problem}")
        key = (obj.get("apiVersion", "").split("/")[0], kind, name)
        if key in seen:
            fail("metadata.name", "another object of this kind has the same name", excess=-1)
        seen.add(key)
        if "namespace" in meta and rules.dns_label(meta["namespace"]):
            fail("metadata.namespace", f"'{meta['namespace']}' {rules.dns_label(meta['namespace'])}")
        if kind == "Service":
            for i, port in enumerate(obj.get("spec", {}).get("ports") or ()):
                _port(port, f"spec.ports[{i}]", "port", fail)
        if kind in ("ConfigMap", "Secret"):
            _data(obj, fail)
        _walk(obj, fail)
    return objs


def _bytes(text) -> int:
    return len(text) if isinstance(text, str) and text.isascii() else len(str(text).encode("utf-8"))


def _data(obj: dict, fail) -> None:
    """ConfigMap and Secret data: keys are file names (``[-._a-zA-Z0-9]+``, at most 253), all
    of it at most 1 MiB."""
    total = 0
    for field in ("data", "stringData", "binaryData"):
        for key, value in (obj.get(field) or {}).items():
            if not _DATA_KEY.match(key) or len(key) > 253 or key in (".", ".."):
                fail(f"{field}", f"key '{key}' must be a file name of letters, digits, '-', '_' and '.' (at most 253 "
                     "characters)", limit=True)
            total += _bytes(key) + _bytes(value)
    if total > MAX_CONFIGMAP:
        fail("data", f"keys and values total {total} bytes (at most {MAX_CONFIGMAP})", limit=True)


def size_problem(objs: list[dict]) -> LimitError | None:
    """The first object larger than the API server stores (its JSON form), with its largest
    top-level field named; None when all fit. Callers skip it when the whole artifact is far
    below the limit (JSON is at most about three times the YAML we write)."""
    import json

    for obj in objs:
        size = len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        if size > MAX_OBJECT:
            field, part = max(_parts(obj), key=lambda fp: fp[1])
            return LimitError(obj.get("kind", "?"), obj.get("metadata", {}).get("name", ""), field,
                              f"the object is {size} bytes, {part} of them here; the API server stores objects of at "
                              f"most {MAX_OBJECT} bytes")
    return None


def _parts(obj, path: str = "", depth: int = 0):
    """(field, JSON size) of the largest fields, descending into the largest one a few levels."""
    import json

    sizes = []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in items:
        sizes.append((_join(path, key), len(json.dumps(value, ensure_ascii=False).encode("utf-8")), value))
    if not sizes:
        return [(path, 0)]
    field, size, value = max(sizes, key=lambda s: s[1])
    if depth < 8 and isinstance(value, (dict, list)) and value:
        deeper = _parts(value, field, depth + 1)
        best = max(deeper, key=lambda fp: fp[1])
        if best[1] * 2 >= size:  # one part holds most of it: name that part
            return [best]
    return [(field, size)]


def _length_problems(obj: dict):
    """Each length limit ``obj``'s name breaks, as a RenderCheckError with its excess."""
    kind = obj.get("kind", "?")
    name = obj.get("metadata", {}).get("name", "")

    def over(problem: str, excess: int) -> RenderCheckError:
        return RenderCheckError(kind, name, "metadata.name", problem, excess=excess)

    if kind in _LABEL_NAMED and len(name) > 63:
        yield over(f"'{name}' has {len(name)} characters (at most 63)", len(name) - 63)
    if kind == "LeaderWorkerSet":
        pod = lws_pod_name(obj)
        if len(pod) > 63:
            yield over(f"its pods would be named like '{pod}', {len(pod)} characters (at most 63)", len(pod) - 63)
        sts = lws_statefulset_name(obj)
        label = len(sts) + 1 + REVISION_HASH
        if label > 63:
            yield over(f"its StatefulSet '{sts}' labels each pod controller-revision-hash='{sts}-<hash>', up to "
                       f"{label} characters (at most 63)", label - 63)
    if kind == "Gateway":
        gateway_class = obj.get("spec", {}).get("gatewayClassName", "")
        limit = 62 - len(gateway_class)
        if len(name) > limit:
            yield over(f"gateway class '{gateway_class}' names generated objects '<gateway>-<class>', so the name "
                       f"may have at most {limit} characters (it has {len(name)})", len(name) - limit)


def _failer(kind: str, name: str):
    def fail(field: str, problem: str, excess: int = 0, limit: bool = False):
        if limit:
            raise LimitError(kind, name, field, problem)
        raise RenderCheckError(kind, name, field, problem, excess=excess)

    return fail


def _join(path: str, key) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _path(parts: tuple) -> str:
    out = ""
    for part in parts:
        out = _join(out, part)
    return out


# Keys whose mapping needs a closer look; every other mapping is only descended into.
_INTERESTING = frozenset({
    "labels", "annotations", "matchLabels", "nodeSelector", "selector", *_GROUPS_OF_NAMES,
    "replicas", "size", "terminationGracePeriodSeconds", "topologyKey", "dnsPolicy", "requests", "limits",
})


def _walk(root, fail) -> None:
    """Look closer at every mapping that holds a key of ``_INTERESTING``. Strings are not
    rescanned: inputs refuse control characters when they load, and the YAML writer escapes
    any that a renderer could still produce.

    Each such mapping is first checked quickly (:func:`_fine`: no path is built, and a value
    a rule passed once is not checked again); only a mapping that may break a rule is checked
    again by :func:`_check_mapping`, which builds the field's path and raises the first
    problem, exactly as it would have alone."""
    stack = [(None, root)]  # (link, node): a link is (the parent's link, key), None at the root
    pop, push, interesting = stack.pop, stack.append, _INTERESTING
    while stack:
        link, node = pop()
        if isinstance(node, dict):
            if not interesting.isdisjoint(node) and not _fine(node, link):
                _check_mapping(node, _path(_unwind(link)), fail)
            for k, v in node.items():
                if isinstance(v, (dict, list)):
                    push(((link, k), v))
        else:
            for i, v in enumerate(node):
                if isinstance(v, (dict, list)):
                    push(((link, i), v))


#: check -> the strings it passed (names and labels repeat across objects and artifacts).
_PASSED: dict = {}


def _passes(check, value) -> bool:
    """Whether ``value`` is a string ``check`` finds no problem with."""
    passed = _PASSED.get(check)
    if passed is None:
        passed = _PASSED[check] = set()
    if value in passed if type(value) is str else False:
        return True
    if not isinstance(value, str) or _problem(check, value):
        return False
    if len(passed) < 65536:
        passed.add(value)
    return True


def _labels_fine(labels) -> bool:
    key_rule, value_rule = rules.qualified_name, rules.label_value
    return all(_passes(key_rule, k) and _passes(value_rule, v) for k, v in (labels or {}).items())


def _fine(node: dict, link) -> bool:
    """False when ``node`` may break a rule :func:`_check_mapping` checks (True: it breaks
    none); ``link`` says where it is (its last key decides whether requests and limits are
    resource names)."""
    if "labels" in node or "annotations" in node:
        if not _labels_fine(node.get("labels")):
            return False
        annotations = node.get("annotations") or {}
        if not all(_passes(rules.qualified_name, key) for key in annotations):
            return False
        if sum(_bytes(k) + _bytes(v) for k, v in annotations.items()) > MAX_ANNOTATIONS:
            return False
    for field in ("matchLabels", "nodeSelector", "selector"):
        value = node.get(field)
        if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()) and not _labels_fine(value):
            return False
    for field in _GROUPS_OF_NAMES:
        items = node.get(field)
        if items:
            check = rules.dns_subdomain if field == "imagePullSecrets" else rules.dns_label
            if not all(_passes(check, item["name"]) for item in items if isinstance(item, dict) and "name" in item):
                return False
    if "containers" in node or "initContainers" in node:
        for field in ("containers", "initContainers"):
            if not all(_container_fine(c) for c in node.get(field) or ()):
                return False
    for field in ("replicas", "size", "terminationGracePeriodSeconds"):
        value = node.get(field)
        if isinstance(value, int) and not 0 <= value <= rules.INT32_MAX:
            return False
    if "topologyKey" in node and not _passes(rules.qualified_name, node["topologyKey"]):
        return False
    if "dnsPolicy" in node and node["dnsPolicy"] not in _DNS_POLICIES:
        return False
    if link is not None and not isinstance(link[1], int) and str(link[1]).rsplit(".", 1)[-1] == "resources":
        # as _check_mapping reads it: the last part of the path after its last dot
        for field in ("requests", "limits"):
            for key in node.get(field) or {}:
                if key not in _STANDARD_RESOURCES and not key.startswith("hugepages-") \
                        and not _passes(rules.resource_name, key):
                    return False
    return True


def _container_fine(c: dict) -> bool:
    """False when container ``c`` may break a rule of :func:`_container`."""
    if not all(_passes(rules.env_name, env.get("name", "")) for env in c.get("env") or ()):
        return False
    for port in c.get("ports") or ():
        number = port.get("containerPort")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            return False
        if "name" in port and not _passes(rules.port_name, port["name"]):
            return False
    return all(_passes(rules.absolute_path, m.get("mountPath", "")) for m in c.get("volumeMounts") or ())


def _unwind(link) -> tuple:
    """The keys from the root to a node (its links are unwound only for a mapping looked at
    closer: a walk makes one small pair per node, not a copy of the path to it)."""
    parts = []
    while link is not None:
        link, key = link
        parts.append(key)
    return tuple(reversed(parts))


def _check_mapping(node: dict, path: str, fail) -> None:
    last = path.rsplit(".", 1)[-1]
    if "labels" in node or "annotations" in node:
        _labels(node.get("labels"), _join(path, "labels"), fail)
        annotations = node.get("annotations") or {}
        for key in annotations:
            _rule(rules.qualified_name, key, _join(path, "annotations"), fail, "annotation key")
        total = sum(_bytes(k) + _bytes(v) for k, v in annotations.items())
        if total > MAX_ANNOTATIONS:
            fail(_join(path, "annotations"), f"annotation keys and values total {total} bytes (at most "
                 f"{MAX_ANNOTATIONS})", limit=True)
    for field in ("matchLabels", "nodeSelector", "selector"):
        value = node.get(field)
        if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            _labels(value, _join(path, field), fail)
    for field in _GROUPS_OF_NAMES:
        for i, item in enumerate(node.get(field) or ()):
            if isinstance(item, dict) and "name" in item:
                check = rules.dns_subdomain if field == "imagePullSecrets" else rules.dns_label
                _rule(check, item["name"], f"{_join(path, field)}[{i}].name", fail)
    if "containers" in node or "initContainers" in node:
        for field in ("containers", "initContainers"):
            for i, c in enumerate(node.get(field) or ()):
                _container(c, f"{_join(path, field)}[{i}]", fail)
    for field in ("replicas", "size", "terminationGracePeriodSeconds"):
        value = node.get(field)
        if isinstance(value, int) and not 0 <= value <= rules.INT32_MAX:
            fail(_join(path, field), f"{value} is outside 0..{rules.INT32_MAX}")
    if "topologyKey" in node:
        _rule(rules.qualified_name, node["topologyKey"], _join(path, "topologyKey"), fail)
    if "dnsPolicy" in node and node["dnsPolicy"] not in _DNS_POLICIES:
        fail(_join(path, "dnsPolicy"), f"'{node['dnsPolicy']}' is not one of {', '.join(sorted(_DNS_POLICIES))}")
    for field in ("requests", "limits"):
        for key in node.get(field) or {} if last == "resources" else ():
            if key not in _STANDARD_RESOURCES and not key.startswith("hugepages-"):
                _rule(rules.resource_name, key, _join(path, field), fail, "resource")


def _container(c: dict, path: str, fail) -> None:
    for i, env in enumerate(c.get("env") or ()):
        _rule(rules.env_name, env.get("name", ""), f"{path}.env[{i}].name", fail)
    for i, port in enumerate(c.get("ports") or ()):
        _port(port, f"{path}.ports[{i}]", "containerPort", fail)
    for i, mount in enumerate(c.get("volumeMounts") or ()):
        _rule(rules.absolute_path, mount.get("mountPath", ""), f"{path}.volumeMounts[{i}].mountPath", fail)


def _port(port: dict, path: str, field: str, fail) -> None:
    number = port.get(field)
    if not isinstance(number, int) or not 1 <= number <= 65535:
        fail(f"{path}.{field}", f"{number} is not a TCP port (1-65535)")
    if "name" in port:
        _rule(rules.port_name, port["name"], f"{path}.name", fail)


def _labels(labels, path: str, fail) -> None:
    for key, value in (labels or {}).items():
        _rule(rules.qualified_name, key, path, fail, "label key")
        _rule(rules.label_value, value, f"{path}.{key}", fail, "label value")


@lru_cache(maxsize=4096)
def _problem(check, value: str) -> str | None:
    return check(value)  # names and labels repeat across the objects of an instance


def _rule(check, value, path: str, fail, what: str = "") -> None:
    problem = _problem(check, value) if isinstance(value, str) else "must be a string"
    if problem:
        fail(path, f"{what + ' ' if what else ''}'{value}' {problem}")
