"""Deployment targets against a cluster: whether the artifact may be used here (the kube
context or Slurm host), and how its live objects compare with it.

The artifact itself (``manifesto.build_graph.deployments.TargetArtifact``) comes from the
build graph, fresh; everything here takes it as a plain value.
"""

from __future__ import annotations

import os

from manifesto.errors import OpsError

__all__ = ["target_plan", "check_context", "check_slurm_host",
           "parse_objects", "artifact_digest", "instance_of", "live_objects", "differences", "object_states",
           "object_report", "idle_scaled", "as_left_idle",
           "summarize"]


def target_plan(art):
    """The Plan the artifact was rendered from (what readiness waits for)."""
    from manifesto.cluster import load_cluster
    from manifesto.resolve.plan import Options
    from manifesto.spec import load_spec

    cluster = load_cluster(art.cluster_path)
    opts = dict(art.options)
    if opts.get("routing_profile"):
        opts["routing_profile"] = os.path.join(art.root, opts["routing_profile"])
    plan, _ = load_spec(art.model_path, cluster).resolve(cluster, Options(**opts))  # the RESOLVE task
    return plan


# -- where it runs ----------------------------------------------------------------------

def check_context(art, explicit: str | None, current: str | None) -> str:
    """The kube context to use: the target's, when ``--context`` or the current one is it."""
    if art.context is None:
        raise OpsError(f"{art.address} names no kube context; add `context: NAME` to it in BUILD.yaml, so that "
                       "manifesto knows which cluster it belongs to")
    have = explicit or current
    if have != art.context:
        said = (f"--context is '{explicit}'" if explicit else
                f"the current kube context is '{current}'" if current else "no kube context is current")
        raise OpsError(f"{art.address} belongs to kube context '{art.context}', but {said}; switch with "
                       f"`kubectl config use-context {art.context}` or pass --context {art.context}")
    return art.context


def check_slurm_host(art, ssh_host: str | None, local_host: str) -> None:
    """Refuse unless the host sbatch would run on (the profile's ssh host, else this one) is the target's."""
    if art.slurm_host is None:
        raise OpsError(f"{art.address} names no Slurm host; add `slurm_host: HOST` to it in BUILD.yaml, so that "
                       "manifesto knows which Slurm it belongs to")
    if ssh_host is not None:
        if ssh_host != art.slurm_host:
            raise OpsError(f"{art.address} belongs to Slurm host '{art.slurm_host}', but its cluster profile "
                           f"submits through ssh to '{ssh_host}'")
        return
    if art.slurm_host not in (local_host, local_host.split(".")[0]):
        raise OpsError(f"{art.address} belongs to Slurm host '{art.slurm_host}', but this is '{local_host}' and "
                       "the cluster profile sets no slurm.ssh_host; run it there")


# -- the artifact's objects and their live state ----------------------------------------

#: Bounds of an artifact read back from out/deploy (a build writes far less: see semdiff).
MAX_ENTRIES = 200_000
MAX_DOCUMENTS = 2_000


def parse_objects(text: str, name: str = "artifact") -> list[dict]:
    """The objects of a Kubernetes artifact, as plain data, read through the loader's limits
    (out/ is committed: its bytes are data from outside). Anything but a list of mappings is
    an error naming the artifact and its position."""
    from manifesto.errors import YamlSyntaxError
    from manifesto.load.yamlio import parse_documents

    objs = []
    for data, locs in parse_documents(text, name, max_entries=MAX_ENTRIES, max_documents=MAX_DOCUMENTS):
        if not isinstance(data, dict):
            raise YamlSyntaxError("a document that is not a Kubernetes object (a mapping)", locs.find(()))
        objs.append(data)
    return objs


def artifact_digest(objs: list[dict]) -> str | None:
    from manifesto.render.k8s import DIGEST_ANNOTATION

    found = {((o.get("metadata") or {}).get("annotations") or {}).get(DIGEST_ANNOTATION) for o in objs}
    return found.pop() if len(found) == 1 else None


def instance_of(objs: list[dict]) -> str:
    from manifesto.ops.discovery import INSTANCE

    found = {((o.get("metadata") or {}).get("labels") or {}).get(INSTANCE) for o in objs} - {None}
    if len(found) != 1:
        raise OpsError(f"the artifact's objects name {len(found)} instances ({', '.join(sorted(found))}); expected one")
    return found.pop()


def live_objects(kube, objs: list[dict], instance: str) -> dict[tuple[str, str], dict]:
    """The instance's live objects of every kind the artifact holds, by (kind, name)."""
    from manifesto.ops.discovery import resource_of, selector
    from manifesto.ops.kubectl import failure, is_not_served, run

    live: dict[tuple[str, str], dict] = {}
    for kind in dict.fromkeys(o["kind"] for o in objs):
        call = kube.read("get", resource_of(kind), "-l", selector(instance), "-o", "json", check=False)
        result = run(call)
        if not result.ok:
            if is_not_served(result.stderr):
                continue  # the API is not installed: every object of the kind is missing
            raise OpsError(failure(call, result))
        for item in result.json().get("items") or []:
            live[(item.get("kind") or kind, (item.get("metadata") or {}).get("name", ""))] = item
    return live


# -- drift: the whole live object against the artifact plus what the API server adds ------
# As Argo CD compares: fields the artifact leaves out are accepted at the API server's
# default value (below, by kind and field path; ``*`` is any list item), fields the server
# or a controller writes are ignored, and everything else that differs is drift, in both
# directions: a field added live (hostNetwork, a container, a volume) is as much drift as
# a changed one.

_ANY = object()  # a field the server fills with a value of its own (an allocated address)

#: Metadata the API server writes, and annotations that controllers or kubectl write.
SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink")
CONTROLLER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision",
                          "leaderworkerset.sigs.k8s.io/replicas",
                          # Argo CD's resource tracking (its default method) on the objects it syncs
                          "argocd.argoproj.io/tracking-id")

_PROBE = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3,
          "httpGet.scheme": "HTTP"}
_CONTAINER = {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
              "imagePullPolicy": lambda c: _pull_policy(str(c.get("image", ""))), "resources": {},
              "ports.*.protocol": "TCP", "env.*.valueFrom.fieldRef.apiVersion": "v1",
              **{f"{probe}.{k}": v for probe in ("livenessProbe", "readinessProbe", "startupProbe")
                 for k, v in _PROBE.items()}}
_POD = {"restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "securityContext": {}, "schedulerName": "default-scheduler",
        # the deprecated alias the API server copies serviceAccountName into
        "serviceAccount": lambda spec: spec.get("serviceAccountName"),
        **{f"{field}.*.{k}": v for field in ("containers", "initContainers") for k, v in _CONTAINER.items()},
        **{f"volumes.*.{source}.defaultMode": 420 for source in ("configMap", "secret", "downwardAPI", "projected")},
        "volumes.*.hostPath.type": "", "volumes.*.downwardAPI.items.*.fieldRef.apiVersion": "v1"}


def _pull_policy(image: str) -> str:
    last = image.rsplit("/", 1)[-1]
    tag = last.partition(":")[2]
    return "IfNotPresent" if "@" in last or tag not in ("", "latest") else "Always"


def _prefixed(prefix: str, table: dict) -> dict:
    return {f"{prefix}.{k}": v for k, v in table.items()}


#: Kind -> dotted field path -> the API server's default (a value, a function of the
#: enclosing live object, or _ANY). A whole absent subtree matches when every field in it is
#: a default.
SERVER_DEFAULTS: dict[str, dict] = {
    "Deployment": {"spec.replicas": 1, "spec.revisionHistoryLimit": 10, "spec.progressDeadlineSeconds": 600,
                   "spec.strategy.type": "RollingUpdate", "spec.strategy.rollingUpdate.maxSurge": "25%",
                   "spec.strategy.rollingUpdate.maxUnavailable": "25%",
                   "spec.template.metadata.creationTimestamp": None,
                   **_prefixed("spec.template.spec", _POD)},
    "Job": {"spec.parallelism": 1, "spec.completions": 1, "spec.backoffLimit": 6, "spec.completionMode": "NonIndexed",
            "spec.suspend": False, "spec.podReplacementPolicy": "TerminatingOrFailed", "spec.selector": _ANY,
            "spec.template.metadata.labels.batch.kubernetes.io/controller-uid": _ANY,
            "spec.template.metadata.labels.controller-uid": _ANY,
            "spec.template.metadata.labels.batch.kubernetes.io/job-name": _ANY,
            "spec.template.metadata.labels.job-name": _ANY, "spec.template.metadata.creationTimestamp": None,
            **_prefixed("spec.template.spec", _POD)},
    "Service": {"spec.type": "ClusterIP", "spec.sessionAffinity": "None", "spec.internalTrafficPolicy": "Cluster",
                "spec.clusterIP": _ANY, "spec.clusterIPs": _ANY, "spec.ipFamilies": _ANY,
                "spec.ipFamilyPolicy": _ANY, "spec.ports.*.protocol": "TCP",
                "spec.ports.*.targetPort": lambda port: port.get("port")},
    "LeaderWorkerSet": {"spec.replicas": 1, "spec.startupPolicy": "LeaderCreated",
                        "spec.rolloutStrategy.type": "RollingUpdate",
                        "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable": 1,
                        "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge": 0,
                        "spec.rolloutStrategy.rollingUpdateConfiguration.partition": 0,
                        "spec.leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType": "LeaderWorker",
                        "spec.leaderWorkerTemplate.size": 1,
                        "spec.leaderWorkerTemplate.restartPolicy": "RecreateGroupOnPodRestart",
                        "spec.networkConfig.subdomainPolicy": "Shared",
                        "spec.leaderWorkerTemplate.leaderTemplate.metadata.creationTimestamp": None,
                        "spec.leaderWorkerTemplate.workerTemplate.metadata.creationTimestamp": None},
    # The CRD's defaults of disaggregatedset.x-k8s.io/v1 (LeaderWorkerSet v0.10.0); no webhook
    # defaults a role's LeaderWorkerSet spec, so only these appear live.
    "DisaggregatedSet": {"spec.slices": 1, "spec.placementPolicy.type": "None", "spec.roles.*.scaling.mode": "Static",
                         **_prefixed("spec.roles.*.spec", {
        "replicas": 1, "startupPolicy": "LeaderCreated", "rolloutStrategy.type": "RollingUpdate",
        "rolloutStrategy.rollingUpdateConfiguration.maxUnavailable": 1,
        "rolloutStrategy.rollingUpdateConfiguration.maxSurge": 0,
        "rolloutStrategy.rollingUpdateConfiguration.partition": 0,
        "leaderWorkerTemplate.size": 1, "leaderWorkerTemplate.restartPolicy": "RecreateGroupOnPodRestart",
        "leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType": "LeaderWorker",
        "leaderWorkerTemplate.leaderTemplate.metadata.creationTimestamp": None,
        "leaderWorkerTemplate.workerTemplate.metadata.creationTimestamp": None})},
    # The defaults of the Gateway API and InferencePool CRDs the schema kit pins (checked
    # against them by tests/ops/test_server_defaults_crds.py).
    "HTTPRoute": {"spec.parentRefs.*.group": "gateway.networking.k8s.io", "spec.parentRefs.*.kind": "Gateway",
                  "spec.rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}],
                  "spec.rules.*.matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                  "spec.rules.*.matches.*.path.type": "PathPrefix", "spec.rules.*.matches.*.path.value": "/",
                  "spec.rules.*.matches.*.headers.*.type": "Exact", "spec.rules.*.matches.*.queryParams.*.type": "Exact",
                  "spec.rules.*.backendRefs.*.weight": 1, "spec.rules.*.backendRefs.*.group": "",
                  "spec.rules.*.backendRefs.*.kind": "Service",
                  **{f"{where}.filters.*.{k}": v for where in ("spec.rules.*", "spec.rules.*.backendRefs.*")
                     for k, v in {"cors.maxAge": 5, "requestMirror.backendRef.group": "",
                                  "requestMirror.backendRef.kind": "Service",
                                  "requestMirror.fraction.denominator": 100,
                                  "requestRedirect.statusCode": 302}.items()}},
    "Gateway": {"spec.listeners.*.allowedRoutes.namespaces.from": "Same",
                "spec.listeners.*.allowedRoutes.kinds.*.group": "gateway.networking.k8s.io",
                "spec.listeners.*.tls.mode": "Terminate", "spec.listeners.*.tls.certificateRefs.*.group": "",
                "spec.listeners.*.tls.certificateRefs.*.kind": "Secret", "spec.addresses.*.type": "IPAddress",
                "spec.allowedListeners.namespaces.from": "None",
                "spec.tls.backend.clientCertificateRef.group": "", "spec.tls.backend.clientCertificateRef.kind": "Secret",
                "spec.tls.frontend.default.validation.mode": "AllowValidOnly",
                "spec.tls.frontend.perPort.*.tls.validation.mode": "AllowValidOnly"},
    "InferencePool": {"spec.endpointPickerRef.kind": "Service", "spec.endpointPickerRef.failureMode": "FailClose",
                      "spec.endpointPickerRef.group": "", "spec.appProtocol": "http"},
    "ResourceClaimTemplate": {"spec.spec.devices.requests.*.exactly.allocationMode": "ExactCount",
                              "spec.spec.devices.requests.*.exactly.count": 1},
    "RoleBinding": {"subjects.*.apiGroup": ""},
}

def idle_value(field: str, live) -> bool:
    """Whether ``live`` is what the idle-shutdown controller writes at ``field``: 0 replicas on
    the workloads it scales, a non-empty time on the InferencePool it stamps
    (render/k8s/idle.py, IDLE_ANNOTATION)."""
    if field.endswith(".replicas"):
        return _same(live, 0)
    return isinstance(live, str) and live != ""


def idle_owned_paths(objs: list[dict]) -> dict[tuple[str, str], tuple[tuple[str, ...], ...]]:
    """(kind, name) -> the field paths (tuples of keys) the artifact's idle-shutdown controller
    writes on that object: read from the controller itself (``render.k8s.idle_owned``), the
    very fields the gitops target's ``ignoreDifferences`` names. Empty when the artifact runs
    no controller."""
    from manifesto.render.k8s.idle_owned import owned_fields

    try:
        owned, _deleted = owned_fields(objs)
    except Exception as exc:  # an artifact edited by hand: its controller's configuration is not ours
        raise OpsError(f"the idle-shutdown controller's configuration in the artifact cannot be read: {exc}") from None
    return {(o.kind, o.name): tuple(o.paths) for o in owned}


def idle_scaled(objs: list[dict]) -> dict[tuple[str, str], tuple[str, ...]]:
    """:func:`idle_owned_paths` shown as :func:`differences` names fields, every list
    position as ``*`` (:func:`_any_item`: a role is named or numbered alike)."""
    return {key: tuple(_any_item(_show(p)) for p in paths) for key, paths in idle_owned_paths(objs).items()}


def as_left_idle(objs: list[dict], live: dict[tuple[str, str], dict]) -> list[dict] | None:
    """The artifact's objects with every field the idle-shutdown controller owns at its live
    value where the controller has set it (0 replicas, the pool's idle stamp): what ``kubectl
    diff`` compares so that an idle instance shows no difference, as Argo CD shows none. None
    when no such field is set."""
    import copy

    owned = idle_owned_paths(objs)
    out, changed = [], False
    for obj in objs:
        key = (obj["kind"], obj["metadata"]["name"])
        have = live.get(key)
        idle = [p for p in owned.get(key, ()) if have is not None
                and idle_value(_show(p), _at(have, p)) and _at(obj, p) != _at(have, p)]
        if idle:
            obj, changed = copy.deepcopy(obj), True
            for path in idle:
                node = obj
                for step in path[:-1]:
                    node = node[step] if isinstance(step, int) else node.setdefault(step, {})
                node[path[-1]] = _at(have, path)
        out.append(obj)
    return out if changed else None


def _at(obj, path: tuple):
    """The value at ``path`` (keys, and positions in lists), None where there is none."""
    for key in path:
        if isinstance(key, int):
            obj = obj[key] if isinstance(obj, list) and 0 <= key < len(obj) else None
        elif isinstance(obj, dict):
            obj = obj.get(key)
        else:
            return None
    return obj

_ABSENT = "(absent)"


def _pattern(path: tuple) -> str:
    return ".".join("*" if isinstance(p, int) else p for p in path)


def _is_default(kind: str, path: tuple, value, parent) -> bool:
    """Whether ``value``, found live at ``path`` where the artifact has nothing, is what the
    API server would have put there (a mapping: when each of its fields is)."""
    table = SERVER_DEFAULTS.get(kind, {})
    key = _pattern(path)
    if key in table:
        default = table[key]
        if default is _ANY:
            return True
        if callable(default):
            default = default(parent)
        return value == default
    if isinstance(value, dict):
        return any(k.startswith(key + ".") for k in table) and all(
            _is_default(kind, (*path, k), v, value) for k, v in value.items())
    return False


def _strip(live: dict) -> dict:
    """The live object without status and the metadata the server and controllers write."""
    import copy

    obj = {k: copy.deepcopy(v) for k, v in live.items() if k != "status"}
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    for key in SERVER_METADATA:
        meta.pop(key, None)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        for key in CONTROLLER_ANNOTATIONS:
            annotations.pop(key, None)
        if not annotations:
            meta.pop("annotations")
    return obj


def _same(a, b) -> bool:
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a == b
    return str(a) == str(b) and (a is None) == (b is None) and isinstance(a, bool) == isinstance(b, bool)


def _named(items) -> bool:
    return all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items) and \
        len({i["name"] for i in items}) == len(items)


def _show(path: tuple) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f"[{part[1:]}]" if part.startswith("=") else f".{part}")
    return out.lstrip(".")


def _walk(kind, want, have, path: tuple, parent, out: list) -> None:
    if isinstance(want, dict) and isinstance(have, dict):
        for key in [*want, *(k for k in have if k not in want)]:
            if key not in have:
                out.append((path + (key,), _ABSENT, want[key]))
            elif key not in want:
                if not _is_default(kind, path + (key,), have[key], have):
                    out.append((path + (key,), have[key], _ABSENT))
            else:
                _walk(kind, want[key], have[key], path + (key,), have, out)
        return
    if isinstance(want, list) and isinstance(have, list):
        if _named(want) and _named(have):
            # Items by name (containers, volumes, env, ports): an extra or missing one is named.
            live = {i["name"]: (n, i) for n, i in enumerate(have)}
            for n, item in enumerate(want):
                if item["name"] not in live:
                    out.append((path + (f"=name={item['name']}",), _ABSENT, item))
                else:
                    m, got = live[item["name"]]
                    if m != n:
                        out.append((path + (f"=name={item['name']}", "(position)"), m, n))
                    _walk(kind, item, got, path + (n,), have, out)
            names = {i["name"] for i in want}
            for item in have:
                if item["name"] not in names:
                    out.append((path + (f"=name={item['name']}",), item, _ABSENT))
            return
        for n, (a, b) in enumerate(zip(want, have)):
            _walk(kind, a, b, path + (n,), have, out)
        for n in range(len(have), len(want)):
            out.append((path + (n,), _ABSENT, want[n]))
        for n in range(len(want), len(have)):
            out.append((path + (n,), have[n], _ABSENT))
        return
    if not _same(want, have):
        out.append((path, have, want))


def differences(want: dict, have: dict) -> list[tuple[str, object, object]]:
    """(field path, live value, desired value) of every field where the live object differs
    from the artifact's, server defaults and server-written fields aside; ``(absent)``
    stands for a field that one side lacks."""
    found: list[tuple[tuple, object, object]] = []
    _walk(want.get("kind"), want, _strip(have), (), None, found)
    return [(_show(p), live, desired) for p, live, desired in found]


def _value(value) -> str:
    import json

    return value if value is _ABSENT else json.dumps(value, sort_keys=True)


def _any_item(shown: str) -> str:
    """A shown field path with every list item as ``*``, by position or by name
    (spec.roles[0].spec.replicas and spec.roles[prefill].spec.replicas ->
    spec.roles.*.spec.replicas)."""
    import re

    return re.sub(r"\[[^\]]*\]", ".*", shown)


def object_states(objs: list[dict], live: dict[tuple[str, str], dict]) -> list[tuple[str, str, str, str]]:
    """(kind, name, state, detail) per artifact object: in-sync, idle (scaled to 0 by the
    idle-shutdown controller, nothing else changed), drifted or missing."""
    return [row[:4] for row in object_report(objs, live)]


def object_report(objs: list[dict], live: dict[tuple[str, str], dict]) -> list[tuple]:
    """:func:`object_states` rows with a fifth item: the differences, as (path, live, desired)."""
    from manifesto.render.k8s import DIGEST_ANNOTATION

    want_digest = artifact_digest(objs)
    scaled = idle_scaled(objs)
    rows = []
    for obj in objs:
        kind, name = obj["kind"], obj["metadata"]["name"]
        have = live.get((kind, name))
        if have is None:
            rows.append((kind, name, "missing", "not in the cluster", []))
            continue
        digest = ((have.get("metadata") or {}).get("annotations") or {}).get(DIGEST_ANNOTATION)
        if digest != want_digest:
            rows.append((kind, name, "drifted", f"applied from another artifact ({digest or 'no digest'})", []))
            continue
        found = differences(obj, have)
        idle = [d for d in found if _any_item(d[0]) in scaled.get((kind, name), ()) and idle_value(d[0], d[1])]
        found = [d for d in found if d not in idle]
        if found:
            detail = "; ".join(f"{p}: live {_value(a)}, desired {_value(b)}" for p, a, b in found)
            rows.append((kind, name, "drifted", detail, found))
        elif idle:
            rows.append((kind, name, "idle", "scaled to 0 by the idle-shutdown controller", []))
        else:
            rows.append((kind, name, "in-sync", "", []))
    return rows


def summarize(rows: list[tuple[str, str, str, str]]) -> str:
    """in-sync when every object is, idle when the others are in-sync but a workload is
    scaled to 0 by idle shutdown, missing when none is there, drifted otherwise."""
    states = {r[2] for r in rows}
    if states == {"in-sync"}:
        return "in-sync"
    if states == {"in-sync", "idle"} or states == {"idle"}:
        return "idle"
    if states == {"missing"}:
        return "missing"
    return "drifted"


# -- drift kubectl diff cannot see: fields another writer added ---------------------------
# kubectl diff shows what `kubectl apply` of the file would change. A field that is in
# neither the file nor kubectl's last-applied annotation is kept by that merge, so a label
# `kubectl label` added, or an env var `kubectl edit` added, never shows. The API server
# records who set each field (metadata.managedFields). The rule: a live field the file lacks
# is drift when a writer other than ours set it (our `kubectl apply` is the manager
# kubectl-client-side-apply), outside a subresource (status, scale) and outside the fields
# controllers are known to write (CONTROLLER_ANNOTATIONS, the idle-shutdown controller's
# fields). A value the server filled in by default is not drift: it belongs to the writer
# whose request it was defaulted in (ours), or, for server-side apply, to no one.

#: The field managers of Manifesto's own writes (`kubectl apply`, client-side).
OUR_MANAGERS = ("kubectl-client-side-apply",)

_NO = object()


def _fields_step(node, key: str):
    """The child of ``node`` that a managedFields key names (``f:`` a field, ``k:`` a list
    item by its key fields, ``v:`` a list item by value, ``i:`` by position), or _NO; with
    the step as :func:`_show` shows it."""
    import json

    kind, _, rest = key.partition(":")
    if kind == "f":
        return (node.get(rest, _NO) if isinstance(node, dict) else _NO), rest
    try:
        value = json.loads(rest) if kind in ("k", "v") else int(rest)
    except ValueError:
        return _NO, key
    if not isinstance(node, list):
        node = []
    if kind == "i":
        return (node[value] if 0 <= value < len(node) else _NO), value
    if kind == "v":
        return next((item for item in node if _same(item, value)), _NO), f"={_value(value)}"
    if not isinstance(value, dict):
        return _NO, key
    step = "=" + ",".join(f"{k}={v}" for k, v in value.items())
    hit = next((item for item in node if isinstance(item, dict)
                and all(_same(item.get(k), v) for k, v in value.items())), _NO)
    return hit, step


def foreign_fields(want: dict, live: dict, skip: tuple[str, ...] = ()) -> list[tuple[str, object, str]]:
    """(field path, live value, manager) of every live field that ``want`` (an object of the
    file) lacks and that a writer other than :data:`OUR_MANAGERS` set (the rule above).
    ``skip``: field paths (list positions as ``*``) that a known controller writes."""
    skipped = {*skip, *(f"metadata.annotations.{a}" for a in CONTROLLER_ANNOTATIONS)}
    found: dict[str, tuple[str, object, str]] = {}
    for entry in (live.get("metadata") or {}).get("managedFields") or []:
        if not isinstance(entry, dict) or entry.get("manager") in OUR_MANAGERS or entry.get("subresource"):
            continue
        fields = entry.get("fieldsV1")
        if isinstance(fields, dict):
            _foreign(fields, want, live, (), str(entry.get("manager") or "(unnamed)"), skipped, found)
    return list(found.values())


def _foreign(fields: dict, want, live, path: tuple, manager: str, skipped: set, found: dict) -> None:
    for key, sub in fields.items():
        if key == ".":
            continue
        mine, step = _fields_step(want, key)
        have, _ = _fields_step(live, key)
        here = (*path, step)
        shown = _show(here)
        if shown.split(".")[0] == "status" or _any_item(shown) in skipped or have is _NO:
            continue
        inner = isinstance(sub, dict) and any(k != "." for k in sub)
        if mine is _NO and (not inner or not key.startswith("f:")):
            found.setdefault(shown, (shown, have, manager))  # a leaf, or a whole list item
        elif inner:  # a map the file lacks is looked into: its fields are named one by one
            _foreign(sub, {} if mine is _NO else mine, have, here, manager, skipped, found)
