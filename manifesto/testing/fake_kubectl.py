"""``manifesto-fake-kubectl``: a scripted stand-in for kubectl, to try the Kubernetes lifecycle
(deploy, ready, status, diff, servers, stop, file apply/delete, test e2e) without a cluster,
and for the tests of those commands.

``manifesto-fake-kubectl --install DIR`` links it into DIR as ``kubectl``; put DIR first on
PATH. It keeps objects in ``$FAKE_KUBE_DIR/state.json`` ({"objects": [...], "config": {...}};
default ``${XDG_CACHE_HOME:-~/.cache}/manifesto/fake-kube``); every call appends {"argv",
"stdin", "kubeconfig"} to ``$FAKE_KUBE_DIR/calls.jsonl`` (stdin only with
FAKE_KUBE_LOG_STDIN=1, as it may hold the HF token; the directory is created private).
``apply`` stores objects the way an API server does: with the server's defaults for the
kinds Manifesto renders (see :func:`server_defaults`), server metadata
(uid, resourceVersion, generation, creationTimestamp, managedFields), kubectl's
last-applied annotation, and a status; a small stand-in for the controllers (below) starts
pods and finishes Jobs.

config:
  missing_apis: API groups the "cluster" does not serve, e.g. ["leaderworkerset.x-k8s.io"]
  fail: {"get pods": {"times": 2, "stderr": "...", "rc": 1}}  keyed by "verb resource" or "verb"
  sleep: {"get pods": 2.0}                                      seconds before answering; the most
                                                                calls asleep at once is kept in
                                                                $FAKE_KUBE_DIR/overlap.json
  hang: ["apply", "get pods"]      never answer; a child process holds stdout open too
  stdout: {"get pods": "not json"}  print this instead of answering (exit 0)
  stdout_hex: {"get pods": "ff00"}  print these raw bytes instead of answering (exit 0)
  current_context: "name"          what `config current-context` prints
  contexts: {"name": {"cluster": "c", "namespace": "ns"}}   what `config view --minify [--context
                                                            NAME] -o jsonpath=...` reads
  signal: {"config current-context": 9}  be killed by this signal instead of answering
  gateway_programmed: false        applied Gateways stay unprogrammed (default: programmed at once)
  pods_ready_after: 1              `get pods` answers a new pod stays not Ready for (`wait` waits)
  job_fails: true                  created Jobs fail (BackoffLimitExceeded) instead of completing
  job_hangs: true                  created Jobs never finish
  logs: "text"                     what `logs` prints (default: a line saying no container ran)
Supports: api-versions, config current-context|use-context NAME, get (a NAME column, -o json,
-o name; a grouped resource by its full name only), apply -f FILE|-,
create -f FILE|- (AlreadyExists for an existing object), delete REF.../-l/-f FILE,
delete namespace NAME (with everything in it), diff -f FILE|- (the live object against what
apply would make of it: kubectl's three-way merge, so a field only another writer set is kept
and shows no difference, as with the real kubectl), label REF KEY=VALUE|KEY- (owned by the
manager kubectl-label in managedFields, which `get` shows only with --show-managed-fields),
wait --for=condition=C REF|TYPE -l SEL, logs. Its lines are kubectl v1.37's: ``deployment.apps/NAME
created|configured|unchanged``, ``deployment.apps "NAME" deleted from NS namespace``.

A stand-in for controllers: applying a Deployment or LeaderWorkerSet creates its pods
(replicas x size, labelled as the template says), and a DisaggregatedSet the pods of each
role's LeaderWorkerSet (labelled as LeaderWorkerSet v0.10.0's controller labels them: the
template's labels, then app and disaggregatedset.x-k8s.io/{name,role,slice,revision}, the
revision a digest of the roles' templates); a new pod turns Ready after
``pods_ready_after`` reads, and a Deployment whose pods are all Ready is Available. Re-applying
keeps the pods (a changed template replaces them); deleting the workload deletes them. A created Job completes at once (its logs
say that no container ran): no image is pulled, no request is sent.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time

def _state_dir() -> str:
    given = os.environ.get("FAKE_KUBE_DIR")
    if given:
        return given
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "manifesto", "fake-kube")


DIR = _state_dir()
STATE = os.path.join(DIR, "state.json")

# resource or kind (lower case) -> (Kind, API group, namespaced)
KINDS = {
    "pods": ("Pod", "", True), "namespaces": ("Namespace", "", False), "services": ("Service", "", True), "configmaps": ("ConfigMap", "", True),
    "serviceaccounts": ("ServiceAccount", "", True), "secrets": ("Secret", "", True),
    "persistentvolumeclaims": ("PersistentVolumeClaim", "", True),
    "deployments.apps": ("Deployment", "apps", True), "jobs.batch": ("Job", "batch", True),
    "roles.rbac.authorization.k8s.io": ("Role", "rbac.authorization.k8s.io", True),
    "rolebindings.rbac.authorization.k8s.io": ("RoleBinding", "rbac.authorization.k8s.io", True),
    "leaderworkersets.leaderworkerset.x-k8s.io": ("LeaderWorkerSet", "leaderworkerset.x-k8s.io", True),
    "disaggregatedsets.disaggregatedset.x-k8s.io": ("DisaggregatedSet", "disaggregatedset.x-k8s.io", True),
    "inferencepools.inference.networking.k8s.io": ("InferencePool", "inference.networking.k8s.io", True),
    "gateways.gateway.networking.k8s.io": ("Gateway", "gateway.networking.k8s.io", True),
    "httproutes.gateway.networking.k8s.io": ("HTTPRoute", "gateway.networking.k8s.io", True),
    "destinationrules.networking.istio.io": ("DestinationRule", "networking.istio.io", True),
    "resourceclaimtemplates.resource.k8s.io": ("ResourceClaimTemplate", "resource.k8s.io", True),
    "deviceclasses.resource.k8s.io": ("DeviceClass", "resource.k8s.io", False),
    "localqueues.kueue.x-k8s.io": ("LocalQueue", "kueue.x-k8s.io", True),
    "clusterqueues.kueue.x-k8s.io": ("ClusterQueue", "kueue.x-k8s.io", False),
}
BY_KIND = {k: (r, g, n) for r, (k, g, n) in KINDS.items()}
VERSIONS = ["v1", "apps/v1", "batch/v1", "rbac.authorization.k8s.io/v1", "leaderworkerset.x-k8s.io/v1",
            "disaggregatedset.x-k8s.io/v1",
            "inference.networking.k8s.io/v1", "gateway.networking.k8s.io/v1", "resource.k8s.io/v1",
            "kueue.x-k8s.io/v1beta1", "networking.istio.io/v1"]


def resource_name(kind: str) -> str:
    """How kubectl names a kind in its lines: ``deployment.apps``, ``configmap``."""
    group = BY_KIND.get(kind, ("", "", True))[1]
    return kind.lower() + (f".{group}" if group else "")


def load() -> dict:
    try:
        with open(STATE) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"objects": [], "config": {}}


def save(state: dict) -> None:
    tmp = STATE + f".{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, STATE)


def die(msg: str, rc: int = 1):
    print(msg, file=sys.stderr)
    sys.exit(rc)


def parse(argv):
    flags, pos = {}, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-n", "--namespace", "--context", "-l", "-o", "-f", "--for", "--timeout", "-c", "--container"):
            flags[a.lstrip("-")] = argv[i + 1]
            i += 2
            continue
        if a.startswith("--"):
            k, _, v = a[2:].partition("=")
            flags[k] = v or True
        else:
            pos.append(a)
        i += 1
    flags.setdefault("namespace", flags.get("n"))
    return flags, pos


def resolve(res: str, missing):
    info = KINDS.get(res.lower())
    if info is None or info[1] in missing:
        short = res.lower().split(".")[0]
        known = [r for r in KINDS if r.split(".")[0] in (short, short + "s") and "." in r and KINDS[r][1] not in missing]
        hint = (f" (this stand-in knows a grouped resource by its full name only: {', '.join(known)})"
                if known and info is None else "")
        die(f'error: the server doesn\'t have a resource type "{res.split(".")[0]}"{hint}')
    return info


def matches(obj, sel):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for part in filter(None, (sel or "").split(",")):
        k, _, v = part.partition("=")
        if labels.get(k) != v:
            return False
    return True


def ns_of(obj):
    return (obj.get("metadata") or {}).get("namespace") or ""


def same(a, kind, ns, name, namespaced):
    return a["kind"] == kind and a["metadata"]["name"] == name and (not namespaced or ns_of(a) == ns)


def _load_all(text: str) -> list:
    try:
        import yaml
    except ImportError:  # installed without the test extra: ruamel.yaml is a dependency
        from ruamel.yaml import YAML

        return list(YAML(typ="safe", pure=True).load_all(text))
    return list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


def docs(flags, stdin):
    text = stdin if flags.get("f") == "-" else open(flags["f"]).read()
    out = []
    for d in _load_all(text):
        if d:
            out.extend(d.get("items") if d.get("kind") == "List" else [d])
    return out


# -- what the API server adds -------------------------------------------------------------
# Defaults of the kinds Manifesto renders, as kube-apiserver 1.33 (pkg/apis/*/v1/defaults.go)
# and the CRDs' OpenAPI defaults and webhooks (LeaderWorkerSet v0.6, Gateway API v1.3,
# Inference Extension v1, resource.k8s.io/v1) set them on create.

def _put(obj: dict, key: str, value) -> None:
    if obj.get(key) is None:
        obj[key] = value


def _image_pull_policy(image: str) -> str:
    last = image.rsplit("/", 1)[-1]
    if "@" in last:
        return "IfNotPresent"
    tag = last.partition(":")[2]
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _probe(probe: dict) -> None:
    for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                       ("failureThreshold", 3)):
        _put(probe, key, value)
    if isinstance(probe.get("httpGet"), dict):
        _put(probe["httpGet"], "scheme", "HTTP")


def _field_refs(items) -> None:
    for item in items or ():
        ref = (item.get("valueFrom") or item).get("fieldRef") if isinstance(item, dict) else None
        if isinstance(ref, dict):
            _put(ref, "apiVersion", "v1")


def _container(c: dict) -> None:
    _put(c, "terminationMessagePath", "/dev/termination-log")
    _put(c, "terminationMessagePolicy", "File")
    _put(c, "imagePullPolicy", _image_pull_policy(str(c.get("image", ""))))
    _put(c, "resources", {})
    for port in c.get("ports") or ():
        _put(port, "protocol", "TCP")
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(c.get(key), dict):
            _probe(c[key])
    _field_refs(c.get("env"))


def _pod_spec(spec: dict) -> None:
    _put(spec, "restartPolicy", "Always")
    _put(spec, "terminationGracePeriodSeconds", 30)
    _put(spec, "dnsPolicy", "ClusterFirst")
    _put(spec, "securityContext", {})
    _put(spec, "schedulerName", "default-scheduler")
    if spec.get("serviceAccountName"):
        _put(spec, "serviceAccount", spec["serviceAccountName"])  # the API server's deprecated alias
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or ():
            _container(c)
    for vol in spec.get("volumes") or ():
        for source in ("configMap", "secret", "downwardAPI", "projected"):
            if isinstance(vol.get(source), dict):
                _put(vol[source], "defaultMode", 420)
        if isinstance(vol.get("downwardAPI"), dict):
            _field_refs(vol["downwardAPI"].get("items"))
        if isinstance(vol.get("hostPath"), dict):
            _put(vol["hostPath"], "type", "")


def _deployment(spec: dict) -> None:
    _put(spec, "replicas", 1)
    _put(spec, "revisionHistoryLimit", 10)
    _put(spec, "progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {})
    _put(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        _put(rolling, "maxSurge", "25%")
        _put(rolling, "maxUnavailable", "25%")
    template = spec.setdefault("template", {})
    template.setdefault("metadata", {}).setdefault("creationTimestamp", None)  # as kubectl get shows it
    _pod_spec(template.setdefault("spec", {}))


def _job(spec: dict, uid: str) -> None:
    for key, value in (("parallelism", 1), ("completions", 1), ("backoffLimit", 6), ("completionMode", "NonIndexed"),
                       ("suspend", False), ("manualSelector", None), ("podReplacementPolicy", "TerminatingOrFailed")):
        if value is not None:
            _put(spec, key, value)
    spec.pop("manualSelector", None)
    labels = {"batch.kubernetes.io/controller-uid": uid}
    spec["selector"] = {"matchLabels": dict(labels)}
    template = spec.setdefault("template", {})
    meta = template.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **labels, "controller-uid": uid}
    _pod_spec(template.setdefault("spec", {}))


def _service(spec: dict, serial: int) -> None:
    _put(spec, "type", "ClusterIP")
    _put(spec, "sessionAffinity", "None")
    _put(spec, "internalTrafficPolicy", "Cluster")
    if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
        _put(spec, "clusterIP", f"10.96.{serial // 250 % 250}.{serial % 250 + 2}")
        spec["clusterIPs"] = [spec["clusterIP"]]
        _put(spec, "ipFamilies", ["IPv4"])
        _put(spec, "ipFamilyPolicy", "SingleStack")
    for port in spec.get("ports") or ():
        _put(port, "protocol", "TCP")
        _put(port, "targetPort", port.get("port"))


def _leader_worker_set(spec: dict) -> None:
    _lws_spec(spec)
    network = spec.setdefault("networkConfig", {})
    _put(network, "subdomainPolicy", "Shared")


def _lws_spec(spec: dict, *, partition: bool = False) -> None:
    """The defaults a LeaderWorkerSet's spec gets, and a DisaggregatedSet role's (``partition``:
    the role's rolling update also has its partition defaulted)."""
    _put(spec, "replicas", 1)
    _put(spec, "startupPolicy", "LeaderCreated")
    rollout = spec.setdefault("rolloutStrategy", {})
    _put(rollout, "type", "RollingUpdate")
    rolling = rollout.setdefault("rollingUpdateConfiguration", {})
    _put(rolling, "maxUnavailable", 1)
    _put(rolling, "maxSurge", 0)
    if partition:
        _put(rolling, "partition", 0)
    lwt = spec.setdefault("leaderWorkerTemplate", {})
    _put(lwt, "size", 1)
    _put(lwt, "restartPolicy", "RecreateGroupOnPodRestart")


def _disaggregated_set(spec: dict) -> None:
    """The CRD's defaults (LeaderWorkerSet v0.10.0); no webhook defaults a role's spec."""
    _put(spec, "slices", 1)
    for role in spec.get("roles") or ():
        _lws_spec(role.setdefault("spec", {}), partition=True)


def _http_route(spec: dict) -> None:
    for ref in spec.get("parentRefs") or ():
        _put(ref, "group", "gateway.networking.k8s.io")
        _put(ref, "kind", "Gateway")
    for rule in spec.get("rules") or ():
        if not rule.get("matches"):
            rule["matches"] = [{"path": {"type": "PathPrefix", "value": "/"}}]
        for match in rule["matches"]:
            if isinstance(match.get("path"), dict):
                _put(match["path"], "type", "PathPrefix")
                _put(match["path"], "value", "/")
        for ref in rule.get("backendRefs") or ():
            _put(ref, "weight", 1)
            if ref.get("kind") in (None, "Service"):
                _put(ref, "group", "")
                _put(ref, "kind", "Service")


def _gateway(spec: dict) -> None:
    for listener in spec.get("listeners") or ():
        routes = listener.setdefault("allowedRoutes", {})
        _put(routes.setdefault("namespaces", {}), "from", "Same")


def _inference_pool(spec: dict) -> None:
    picker = spec.get("endpointPickerRef")
    if isinstance(picker, dict):
        _put(picker, "kind", "Service")
        _put(picker, "failureMode", "FailClose")


def _claim_template(spec: dict) -> None:
    for request in ((spec.get("spec") or {}).get("devices") or {}).get("requests") or ():
        exactly = request.get("exactly")
        if isinstance(exactly, dict):
            _put(exactly, "allocationMode", "ExactCount")
            if exactly["allocationMode"] == "ExactCount":
                _put(exactly, "count", 1)


def server_defaults(obj: dict, uid: str, serial: int) -> None:
    """Fill in, in place, what the API server defaults on ``obj`` (of a kind Manifesto renders)."""
    kind = obj.get("kind")
    spec = obj.setdefault("spec", {}) if kind not in ("ConfigMap", "ServiceAccount", "Role", "RoleBinding",
                                                      "Secret") else None
    if kind == "Deployment":
        _deployment(spec)
    elif kind == "Job":
        _job(spec, uid)
    elif kind == "Service":
        _service(spec, serial)
    elif kind == "LeaderWorkerSet":
        _leader_worker_set(spec)
    elif kind == "DisaggregatedSet":
        _disaggregated_set(spec)
    elif kind == "HTTPRoute":
        _http_route(spec)
    elif kind == "Gateway":
        _gateway(spec)
    elif kind == "InferencePool":
        _inference_pool(spec)
    elif kind == "ResourceClaimTemplate":
        _claim_template(spec)
    elif kind == "Secret":
        data = obj.setdefault("data", {})
        for key, value in (obj.pop("stringData", None) or {}).items():
            import base64

            data[key] = base64.b64encode(str(value).encode()).decode()
        _put(obj, "type", "Opaque")
    elif kind == "RoleBinding":
        for subject in obj.get("subjects") or ():
            if subject.get("kind") == "ServiceAccount":
                _put(subject, "apiGroup", "")


_STATUS = {
    "Deployment": lambda o: {"observedGeneration": o["metadata"]["generation"], "replicas": 0,
                             "conditions": [{"type": "Progressing", "status": "True",
                                             "reason": "NewReplicaSetCreated"}]},
    "LeaderWorkerSet": lambda o: {"replicas": 0, "conditions": [{"type": "Progressing", "status": "True"}]},
    "Service": lambda o: {"loadBalancer": {}},
    "Job": lambda o: {"active": 0},
    "Gateway": lambda o: {"conditions": [{"type": "Accepted", "status": "Unknown", "reason": "Pending"}]},
}


def _programmed(state: dict, obj: dict) -> None:
    """The gateway controller's part: a Gateway is accepted and programmed (unless the config
    says ``gateway_programmed: false``)."""
    if obj.get("kind") == "Gateway" and state.get("config", {}).get("gateway_programmed", True):
        obj["status"] = {"conditions": [{"type": "Accepted", "status": "True"},
                                        {"type": "Programmed", "status": "True"}]}


def stored(doc: dict, old: dict | None, text: str, serial: int) -> dict:
    """``doc`` as the server stores it after ``kubectl apply`` (``old``: the object it replaces)."""
    import copy
    import uuid

    obj = copy.deepcopy(doc)
    meta = obj.setdefault("metadata", {})
    old_meta = (old or {}).get("metadata") or {}
    uid = old_meta.get("uid") or str(uuid.UUID(int=serial))
    server_defaults(obj, uid, serial)
    if old is not None and obj.get("kind") == "Service":  # the allocated address stays
        for key in ("clusterIP", "clusterIPs"):
            if key in (old.get("spec") or {}) and key not in (doc.get("spec") or {}):
                obj["spec"][key] = old["spec"][key]
    annotations = {**(meta.get("annotations") or {}),
                   "kubectl.kubernetes.io/last-applied-configuration": text}
    generation = old_meta.get("generation", 0)
    if old is None or _spec_of(old) != _spec_of(obj):
        generation += 1
    if obj.get("kind") == "Deployment":
        annotations["deployment.kubernetes.io/revision"] = str(generation)
    meta.update({"annotations": annotations, "uid": uid, "resourceVersion": str(1000 + serial),
                 "generation": generation,
                 "creationTimestamp": old_meta.get("creationTimestamp") or "2026-01-01T00:00:00Z",
                 "managedFields": [{"manager": OURS, "operation": "Update",
                                    "apiVersion": obj.get("apiVersion"), "fieldsType": "FieldsV1"}]})
    if obj.get("kind") in _STATUS:
        obj["status"] = _STATUS[obj["kind"]](obj)
    return obj


def _spec_of(obj: dict):
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


_SERVER_META = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")
_SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")


def _comparable(obj: dict) -> dict:
    import copy

    out = {k: copy.deepcopy(v) for k, v in obj.items() if k != "status"}
    meta = out.get("metadata") or {}
    for key in _SERVER_META:
        meta.pop(key, None)
    annotations = meta.get("annotations") or {}
    for key in _SERVER_ANNOTATIONS:
        annotations.pop(key, None)
    if not annotations:
        meta.pop("annotations", None)
    return out


#: kubectl apply's field manager (client-side apply).
OURS = "kubectl-client-side-apply"


def _without_managed_fields(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    if "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def _last_applied(obj: dict):
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get("kubectl.kubernetes.io/last-applied-configuration")
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _named_list(items) -> bool:
    return isinstance(items, list) and all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items)


def _merge(new, live, last):
    """kubectl apply's three-way merge, as far as Manifesto's objects need it: a field of the
    new configuration wins; one the last applied configuration had and the new one lacks is
    removed; one only the live object has (another writer's, or the server's) stays. Maps
    merge field by field, lists of items with a name merge item by item (the strategic
    merge key of containers, env, volumes, ports), other lists are replaced."""
    if isinstance(new, dict) and isinstance(live, dict):
        last = last if isinstance(last, dict) else {}
        out = {k: v for k, v in live.items() if k in new or k not in last}
        for key, value in new.items():
            out[key] = _merge(value, live.get(key), last.get(key)) if key in live else value
        return out
    if _named_list(new) and _named_list(live):
        before = {i["name"]: i for i in last} if _named_list(last) else {}
        wanted = {i["name"] for i in new}
        live_items = {i["name"]: i for i in live}
        out = [_merge(i, live_items[i["name"]], before.get(i["name"])) if i["name"] in live_items else i for i in new]
        out += [i for i in live if i["name"] not in wanted and i["name"] not in before]
        return out
    return new


def _merged(doc: dict, live: dict) -> dict:
    """What ``kubectl apply`` of ``doc`` leaves of ``live``: the three-way merge, server
    metadata and status aside (the store sets those)."""
    base = {k: v for k, v in live.items() if k != "status"}
    base["metadata"] = {k: v for k, v in (live.get("metadata") or {}).items()
                        if k not in _SERVER_META and k != "namespace"}
    annotations = dict(base["metadata"].get("annotations") or {})
    for key in _SERVER_ANNOTATIONS:
        annotations.pop(key, None)
    if annotations:
        base["metadata"]["annotations"] = annotations
    else:
        base["metadata"].pop("annotations", None)
    merged = _merge(doc, base, _last_applied(live))
    merged["metadata"]["namespace"] = doc["metadata"].get("namespace") or ns_of(live)
    return merged


def hang():
    """A hung kubectl: a grandchild keeps our stdout open, and we never return."""
    import subprocess

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open(os.path.join(DIR, "hung.pids"), "a") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    time.sleep(3600)


def _track_overlap(step: int) -> None:
    """Count the calls asleep right now and remember the most there ever were."""
    path = os.path.join(DIR, "overlap.json")
    with open(os.path.join(DIR, "overlap.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path) as f:
                now, most = json.load(f)
        except FileNotFoundError:
            now, most = 0, 0
        now += step
        with open(path, "w") as f:
            json.dump([now, max(most, now)], f)


def _logged(stdin: str | None) -> str | None:
    """What the call log keeps of stdin: nothing but its size, since it may hold the HF token
    (hf-secret), unless FAKE_KUBE_LOG_STDIN=1 (the tests check what was sent)."""
    if not stdin or os.environ.get("FAKE_KUBE_LOG_STDIN") == "1":
        return stdin or None
    return f"({len(stdin)} characters, not logged; FAKE_KUBE_LOG_STDIN=1 logs them)"


def install(directory: str) -> int:
    """Link this program into ``directory`` as ``kubectl`` (the directory is created)."""
    import shutil

    program = shutil.which("manifesto-fake-kubectl") or os.path.abspath(sys.argv[0])
    os.makedirs(directory, exist_ok=True)
    link = os.path.join(directory, "kubectl")
    if os.path.lexists(link):
        if os.path.realpath(link) != os.path.realpath(program):
            die(f"manifesto-fake-kubectl: {link} exists and is not this fake; remove it or pick another directory")
        return 0
    os.symlink(program, link)
    print(f"manifesto-fake-kubectl: linked {link}; put {directory} first on PATH to use it", file=sys.stderr)
    return 0


# -- the controllers' stand-in ---------------------------------------------------------------

def _owner(obj: dict) -> str:
    return f"{obj['kind']}/{ns_of(obj)}/{obj['metadata']['name']}"


def _owned_by(pod: dict, key: str) -> bool:
    refs = (pod.get("metadata") or {}).get("ownerReferences") or ()
    return any(f"{r.get('kind')}/{ns_of(pod)}/{r.get('name')}" == key for r in refs)


#: The kinds whose pods the stand-in creates.
WORKLOADS = ("Deployment", "LeaderWorkerSet", "DisaggregatedSet")


def _set_children(obj: dict) -> list[dict]:
    """The LeaderWorkerSet the v0.10.0 controller makes for each role of a DisaggregatedSet
    (slice 0): named <set>-0-<revision>-<role>, the role's labels with app and
    disaggregatedset.x-k8s.io/{name,role,slice,revision} added, the same on its pod templates,
    the role's spec with its replicas (lws_manager.go:59-99)."""
    import copy
    import hashlib

    name = obj["metadata"]["name"]
    roles = (obj.get("spec") or {}).get("roles") or []
    digest = json.dumps([[r.get("name"), (r.get("spec") or {}).get("leaderWorkerTemplate")] for r in roles],
                        sort_keys=True)
    revision = hashlib.sha256(digest.encode()).hexdigest()[:8]
    out = []
    for role in roles:
        added = {"app": f"{name}-0-{role.get('name')}", "disaggregatedset.x-k8s.io/role": role.get("name"),
                 "disaggregatedset.x-k8s.io/slice": "0", "disaggregatedset.x-k8s.io/name": name,
                 "disaggregatedset.x-k8s.io/revision": revision}
        spec = copy.deepcopy(role.get("spec") or {})
        spec["replicas"] = spec.get("replicas", 1)
        lwt = spec.setdefault("leaderWorkerTemplate", {})
        for key in ("leaderTemplate", "workerTemplate"):
            if isinstance(lwt.get(key), dict):
                meta = lwt[key].setdefault("metadata", {})
                meta["labels"] = {**(meta.get("labels") or {}), **added}
        labels = {**(((role.get("metadata") or {}).get("labels")) or {}), **added}
        out.append({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                    "metadata": {"name": f"{name}-0-{revision}-{role.get('name')}", "namespace": ns_of(obj),
                                 "labels": labels, "ownerReferences": [{
                                     "apiVersion": obj.get("apiVersion"), "kind": "DisaggregatedSet", "name": name,
                                     "controller": True}]},
                    "spec": spec})
    return out


def _set_pods(obj: dict) -> list[tuple[str, dict]]:
    """The pods of a DisaggregatedSet's roles, each in its role's LeaderWorkerSet."""
    return [pod for child in _set_children(obj) for pod in _workload_pods(child)]


def _place_children(state: dict, obj: dict) -> None:
    """Keep a DisaggregatedSet's LeaderWorkerSets in the state: this revision's (made once, as the
    controller makes them), none of another (the stand-in rolls out at once)."""
    objs = state["objects"]
    key = _owner(obj)
    wanted = {c["metadata"]["name"]: c for c in _set_children(obj)}
    for child in [o for o in objs if o["kind"] == "LeaderWorkerSet" and _owned_by(o, key)]:
        if child["metadata"]["name"] not in wanted:
            objs.remove(child)
        else:
            child["spec"]["replicas"] = wanted.pop(child["metadata"]["name"])["spec"]["replicas"]  # Scale
    for child in wanted.values():
        state["serial"] = state.get("serial", 0) + 1
        meta = child["metadata"]
        meta.update({"uid": f"child-{state['serial']}", "generation": 1, "resourceVersion": str(1000 + state["serial"]),
                     "creationTimestamp": "2026-01-01T00:00:00Z"})
        child["status"] = {"replicas": 0}
        objs.append(child)


def _workload_pods(obj: dict) -> list[tuple[str, dict]]:
    """(pod name, pod template) of every pod a Deployment, LeaderWorkerSet or DisaggregatedSet runs."""
    spec = obj.get("spec") or {}
    name = obj["metadata"]["name"]
    if obj["kind"] == "DisaggregatedSet":
        return _set_pods(obj)
    if obj["kind"] == "Deployment":
        return [(f"{name}-{i}", spec.get("template") or {}) for i in range(int(spec.get("replicas", 1) or 0))]
    lwt = spec.get("leaderWorkerTemplate") or {}
    worker = lwt.get("workerTemplate") or {}
    leader = lwt.get("leaderTemplate") or worker
    out = []
    for group in range(int(spec.get("replicas", 1) or 0)):
        out.append((f"{name}-{group}", leader))
        out += [(f"{name}-{group}-{i}", worker) for i in range(1, int(lwt.get("size", 1) or 1))]
    return out


def start_pods(state: dict, obj: dict) -> None:
    """Create the pods ``obj`` (a workload just applied) runs, keeping those that exist."""
    objs = state["objects"]
    if obj["kind"] == "DisaggregatedSet":
        _place_children(state, obj)
    key = _owner(obj)
    wanted = _workload_pods(obj)
    names = {n for n, _ in wanted}
    for pod in [o for o in objs if o["kind"] == "Pod" and _owned_by(o, key)]:
        if pod["metadata"]["name"] not in names:
            objs.remove(pod)
    for pod in [o for o in objs if o["kind"] == "Pod" and _owned_by(o, key)]:
        template = dict(wanted)[pod["metadata"]["name"]]
        if pod["metadata"].get("labels") != ((template.get("metadata") or {}).get("labels") or {}):
            objs.remove(pod)  # a rollout replaces the pods of an older template
    have = {o["metadata"]["name"] for o in objs if o["kind"] == "Pod" and _owned_by(o, key)}
    after = int(state.get("config", {}).get("pods_ready_after", 1))
    for name, template in wanted:
        if name in have:
            continue
        labels = dict(((template.get("metadata") or {}).get("labels") or {}))
        objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": name, "namespace": ns_of(obj), "labels": labels,
            "ownerReferences": [{"apiVersion": obj.get("apiVersion"), "kind": obj["kind"],
                                 "name": obj["metadata"]["name"]}],
            "annotations": {"fake-kubectl/reads-until-ready": str(after)}},
            "status": {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]}})
    _settle(state)


def _settle(state: dict, reads: int = 0) -> None:
    """Count ``reads`` against every pending pod, then mark workloads whose pods are all Ready."""
    objs = state["objects"]
    for pod in (o for o in objs if o["kind"] == "Pod"):
        notes = pod["metadata"].get("annotations") or {}
        left = notes.get("fake-kubectl/reads-until-ready")
        if left is None:
            continue
        left = int(left) - reads
        if left <= 0:
            notes.pop("fake-kubectl/reads-until-ready")
            if not notes:
                pod["metadata"].pop("annotations")
            pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        else:
            notes["fake-kubectl/reads-until-ready"] = str(left)
    # v0.10.0's DisaggregatedSet controller writes no status on the set.
    for obj in (o for o in objs if o["kind"] in ("Deployment", "LeaderWorkerSet")):
        pods = _pods_of(objs, obj)
        ready = sum(1 for p in pods if _ready(p))
        status = obj.setdefault("status", {})
        status["readyReplicas"] = ready
        if obj["kind"] == "LeaderWorkerSet":
            # Groups, as the LWS controller counts them (leaderworkerset_controller.go:420-545):
            # every pod of the stand-in runs the current template.
            groups = _groups(obj, pods)
            status.update({"observedGeneration": obj["metadata"].get("generation", 1), "replicas": len(groups),
                           "updatedReplicas": len(groups),
                           "readyReplicas": sum(1 for g in groups.values() if all(_ready(p) for p in g))})
        available = "True" if pods and ready == len(pods) else "False"
        conditions = [c for c in status.get("conditions") or () if c.get("type") != "Available"]
        status["conditions"] = [*conditions, {"type": "Available", "status": available}]


def _pods_of(objs: list[dict], obj: dict) -> list[dict]:
    """The pods of a workload: its own, or for a DisaggregatedSet's LeaderWorkerSet the set's
    pods named after it."""
    key = _owner(obj)
    pods = [o for o in objs if o["kind"] == "Pod" and _owned_by(o, key)]
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("kind") == "DisaggregatedSet":
            parent = f"DisaggregatedSet/{ns_of(obj)}/{ref.get('name')}"
            prefix = obj["metadata"]["name"] + "-"
            pods += [o for o in objs if o["kind"] == "Pod" and _owned_by(o, parent)
                     and o["metadata"]["name"].startswith(prefix)]
    return pods


def _groups(obj: dict, pods: list[dict]) -> dict[str, list[dict]]:
    """A LeaderWorkerSet's pods by group (``<name>-<group>`` and ``<name>-<group>-<worker>``)."""
    prefix = obj["metadata"]["name"] + "-"
    groups: dict[str, list[dict]] = {}
    for pod in pods:
        rest = pod["metadata"]["name"][len(prefix):]
        groups.setdefault(rest.split("-")[0], []).append(pod)
    return groups


def _ready(obj: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or ())


def _condition(obj: dict, name: str) -> bool:
    return any(str(c.get("type", "")).lower() == name.lower() and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or ())



# -- the call: scripted faults, then the verb's handler ------------------------------------

def main():
    argv = sys.argv[1:]
    if argv[:1] in (["--help"], ["-h"]) and os.path.basename(sys.argv[0]) != "kubectl":
        print(__doc__)
        return
    if argv[:1] == ["--install"]:
        if len(argv) != 2:
            die("usage: manifesto-fake-kubectl --install DIR", 2)
        sys.exit(install(argv[1]))
    os.makedirs(DIR, mode=0o700, exist_ok=True)
    stdin = None if sys.stdin.isatty() else sys.stdin.read()
    _log_call(argv, stdin)
    flags, pos = parse(argv)
    verb = pos[0] if pos else ""
    keys = (f"{verb} {pos[1]}" if len(pos) > 1 else verb, verb)
    _scripted(keys, load().get("config", {}))
    with open(os.path.join(DIR, "state.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = load()
        _injected_failure(keys, state)
        rc = run(verb, pos, flags, stdin, state, set(state.get("config", {}).get("missing_apis") or ()))
        if verb == "get" and pos[1:2] == ["pods"]:
            _settle(state, reads=1)  # after this answer: every pending pod is one read nearer Ready
        save(state)
    sys.exit(rc)


def _log_call(argv: list[str], stdin: str | None) -> None:
    with open(os.path.join(DIR, "calls.jsonl"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(json.dumps({"argv": argv, "stdin": _logged(stdin), "kubeconfig": os.environ.get("KUBECONFIG")})
                + "\n")


def _scripted(keys: tuple[str, str], config: dict) -> None:
    """Answer as the config scripts it for ``keys`` ("verb resource", then "verb"): be killed,
    hang, or print a set text; then sleep, if told to, before the real answer."""
    for k in keys:
        if k in (config.get("signal") or {}):
            import signal

            os.kill(os.getpid(), config["signal"][k] or signal.SIGKILL)
        if k in (config.get("hang") or ()):
            hang()
        if k in (config.get("stdout") or {}):
            sys.stdout.write(config["stdout"][k])
            sys.exit(0)
        if k in (config.get("stdout_hex") or {}):
            sys.stdout.buffer.write(bytes.fromhex(config["stdout_hex"][k]))
            sys.exit(0)
    for k in keys:
        if k in (config.get("sleep") or {}):
            _track_overlap(+1)
            time.sleep(config["sleep"][k])
            _track_overlap(-1)
            break


def _injected_failure(keys: tuple[str, str], state: dict) -> None:
    """Fail as ``config.fail`` says for ``keys``, counting the failure down in the state."""
    for k in keys:
        fault = (state.get("config", {}).get("fail") or {}).get(k)
        if fault and fault.get("times", 0) != 0:
            fault["times"] -= 1
            save(state)
            die(fault.get("stderr", "Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout"),
                fault.get("rc", 1))


class _Call:
    """One kubectl call as a handler sees it: its positional words (the verb first), its
    flags, its stdin, the state it reads and changes, and the API groups the cluster lacks."""

    __slots__ = ("pos", "flags", "stdin", "state", "missing", "ns", "objs")

    def __init__(self, pos: list, flags: dict, stdin: str | None, state: dict, missing: set) -> None:
        self.pos = pos
        self.flags = flags
        self.stdin = stdin
        self.state = state
        self.missing = missing
        self.ns = flags.get("namespace") or "default"
        self.objs = state["objects"]


def run(verb, pos, flags, stdin, state, missing) -> int:
    """Answer one call on ``state`` (changed in place) with the handler of ``verb`` in :data:`VERBS`;
    its exit status."""
    call = _Call(pos, flags, stdin, state, missing)
    handler = VERBS.get(verb)
    if handler is None:
        _unsupported(call)
    return handler(call)


def _unsupported(call: _Call):
    die(f"fake kubectl: unsupported command {' '.join(call.pos)}", 2)


# -- what the handlers share ------------------------------------------------------------------

def _namespaced(kind: str) -> bool:
    return BY_KIND.get(kind, ("", "", True))[2]


def _refs(call: _Call, words):
    """Each ``TYPE/NAME`` of ``words`` as (resource, Kind, name, namespaced), resolved one at a
    time as they are used (so a missing object is reported before a later unknown type)."""
    for ref in words:
        res, _, name = ref.partition("/")
        kind, _, namespaced = resolve(res, call.missing)
        yield res, kind, name, namespaced


def _selected(call: _Call, kind: str, namespaced: bool) -> list:
    """The objects of ``kind`` in the call's namespace (any, for a cluster-wide kind) that
    match its ``-l`` selector (all, without one)."""
    return [o for o in call.objs if o["kind"] == kind and (not namespaced or ns_of(o) == call.ns)
            and matches(o, call.flags.get("l"))]


def _place(doc: dict, ns: str) -> bool:
    """Put ``doc`` in ``ns`` unless it names its namespace or its kind is cluster-wide, as
    ``kubectl -n`` does; whether its kind is namespaced."""
    namespaced = _namespaced(doc["kind"])
    doc.setdefault("metadata", {})
    if namespaced:
        doc["metadata"]["namespace"] = doc["metadata"].get("namespace") or ns
    return namespaced


def _not_found(res: str, name: str):
    die(f'Error from server (NotFound): {res} "{name}" not found')


# -- config, api-versions, get --------------------------------------------------------------

def _config(call: _Call) -> int:
    pos, config = call.pos, call.state.get("config", {})
    if pos[1:2] == ["use-context"] and len(pos) == 3:
        call.state.setdefault("config", {})["current_context"] = pos[2]
        print(f'Switched to context "{pos[2]}".')
        return 0
    if pos[1:2] == ["view"] and "minify" in call.flags:
        name = call.flags.get("context") or config.get("current_context")
        context = (config.get("contexts") or {}).get(name)
        if context is None:
            die(f"error: context was not found for specified context: {name}" if name
                else "error: current-context must exist in order to minify")
        field = str(call.flags.get("o", "")).removeprefix("jsonpath={.contexts[0].context.").removesuffix("}")
        print(context.get(field, ""), end="")
        return 0
    if pos[1:2] == ["current-context"]:
        if not config.get("current_context"):
            die("error: current-context is not set")
        print(config["current_context"])
        return 0
    _unsupported(call)


def _api_versions(call: _Call) -> int:
    print("\n".join(v for v in VERSIONS if v.split("/")[0] not in call.missing))
    return 0


def _get(call: _Call) -> int:
    kind, group, namespaced = resolve(call.pos[1], call.missing)
    found = _selected(call, kind, namespaced)
    if "show-managed-fields" not in call.flags:  # as kubectl: left out of -o json unless asked
        found = [_without_managed_fields(o) for o in found]
    if call.flags.get("o") == "name":
        return _get_names(call, found, kind.lower() + (f".{group}" if group else ""))
    if "o" not in call.flags:
        return _get_table(call, found, namespaced)
    return _get_json(call, found)


def _get_names(call: _Call, found: list, resource: str) -> int:
    """``-o name``, as kubectl: TYPE[.GROUP]/NAME a line, nothing when none exist."""
    names = call.pos[2:]
    for name in names:
        if not any(o["metadata"]["name"] == name for o in found) and "ignore-not-found" not in call.flags:
            _not_found(call.pos[1], name)
    for o in found:
        if not names or o["metadata"]["name"] in names:
            print(f"{resource}/{o['metadata']['name']}")
    return 0


def _get_table(call: _Call, found: list, namespaced: bool) -> int:
    """No ``-o``, as typed by hand: kubectl's table (its NAME column), or its note when empty."""
    pos = call.pos
    names = [o["metadata"]["name"] for o in found if len(pos) < 3 or o["metadata"]["name"] in pos[2:]]
    for name in pos[2:]:
        if name not in names and "ignore-not-found" not in call.flags:
            _not_found(pos[1], name)
    if names:
        print("NAME\n" + "\n".join(names))
    elif len(pos) < 3:
        print(f"No resources found in {call.ns} namespace." if namespaced else "No resources found", file=sys.stderr)
    return 0


def _get_json(call: _Call, found: list) -> int:
    """``-o json``: one named object, or a List (of the named ones, or of all found)."""
    pos = call.pos
    if len(pos) <= 2:
        print(json.dumps({"apiVersion": "v1", "kind": "List", "items": found}))
        return 0
    named = []
    for name in pos[2:]:
        hit = [o for o in found if o["metadata"]["name"] == name]
        if not hit and "ignore-not-found" not in call.flags:
            _not_found(pos[1], name)
        named += hit
    if len(pos) == 3 and named:
        print(json.dumps(named[0]))
    elif named or "ignore-not-found" not in call.flags:
        print(json.dumps({"apiVersion": "v1", "kind": "List", "items": named}))
    return 0


# -- apply, create, diff ----------------------------------------------------------------------

def _apply(call: _Call) -> int:
    for d in docs(call.flags, call.stdin):
        _apply_one(call, d)
    return 0


def _apply_one(call: _Call, d: dict) -> None:
    """Store one applied object as the API server does (three-way merged with the live one)."""
    objs, state = call.objs, call.state
    if d["apiVersion"].rpartition("/")[0] in call.missing:
        die(f'error: resource mapping not found for name: "{d["metadata"]["name"]}": '
            f'no matches for kind "{d["kind"]}" in version "{d["apiVersion"]}"')
    namespaced = _place(d, call.ns)
    old = [o for o in objs if same(o, d["kind"], ns_of(d), d["metadata"]["name"], namespaced)]
    for o in old:
        objs.remove(o)
    state["serial"] = state.get("serial", 0) + 1
    last_applied = json.dumps(d, sort_keys=True, separators=(",", ":"))
    new = stored(_merged(d, old[0]) if old else d, old[0] if old else None, last_applied, state["serial"])
    if old and _comparable(old[0]) == _comparable(new) and _last_applied(old[0]) == d:
        objs.append(old[0])  # as the API server: nothing to write
        print(f"{resource_name(d['kind'])}/{d['metadata']['name']} unchanged")
        return
    if old:
        fields = [m for m in (old[0]["metadata"].get("managedFields") or []) if m.get("manager") != OURS]
        new["metadata"]["managedFields"] = [*new["metadata"]["managedFields"], *fields]
    objs.append(new)
    if new["kind"] in WORKLOADS:
        start_pods(state, new)
    _programmed(state, new)
    print(f"{resource_name(d['kind'])}/{d['metadata']['name']} {'configured' if old else 'created'}")


def _create(call: _Call) -> int:
    for d in docs(call.flags, call.stdin):
        namespaced = _place(d, call.ns)
        if any(same(o, d["kind"], ns_of(d), d["metadata"]["name"], namespaced) for o in call.objs):
            source = "STDIN" if call.flags.get("f") == "-" else call.flags.get("f")
            die(f'Error from server (AlreadyExists): error when creating "{source}": '
                f'{BY_KIND.get(d["kind"], (d["kind"].lower() + "s",))[0]} "{d["metadata"]["name"]}" already exists')
        call.state["serial"] = call.state.get("serial", 0) + 1
        new = stored(d, None, "", call.state["serial"])
        new["metadata"]["annotations"].pop("kubectl.kubernetes.io/last-applied-configuration", None)
        if new["kind"] == "Job":
            new["status"] = _job_status(call.state.get("config", {}))
        if new["kind"] in WORKLOADS:
            start_pods(call.state, new)
        call.objs.append(new)
        print(f"{resource_name(d['kind'])}/{d['metadata']['name']} created")
    return 0


def _job_status(config: dict) -> dict:
    """A created Job's status: running for ever, failed, or (by default) complete at once."""
    if config.get("job_hangs"):
        return {"active": 1}
    if config.get("job_fails"):
        return {"failed": 1, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}
    return {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}


def _diff(call: _Call) -> int:
    """The live object against what apply would make of it; 1 when any differs."""
    rc = 0
    for d in docs(call.flags, call.stdin):
        namespaced = _namespaced(d["kind"])
        d["metadata"]["namespace"] = d["metadata"].get("namespace") or call.ns
        old = [o for o in call.objs if same(o, d["kind"], ns_of(d), d["metadata"]["name"], namespaced)]
        live = _comparable(old[0]) if old else None
        merged = _comparable(stored(_merged(d, old[0]) if old else d, old[0] if old else None, "", 0))
        if live != merged:
            _print_diff(f"{d['kind']}.{d['metadata']['name']}", live, merged)
            rc = 1
    return rc


def _print_diff(ref: str, live: dict | None, merged: dict) -> None:
    """As kubectl's: the header, then the hunks of the live object against the merged one
    (here as indented JSON, one field a line, where kubectl shows YAML)."""
    import difflib

    print(f"diff -u -N live/{ref} merged/{ref}")
    lines = [json.dumps(x, indent=2, sort_keys=True).splitlines(keepends=True) if x else [] for x in (live, merged)]
    sys.stdout.writelines(line if line.endswith("\n") else line + "\n" for line in
                          difflib.unified_diff(*lines, f"live/{ref}", f"merged/{ref}"))


# -- delete, label, wait, logs ----------------------------------------------------------------

def _delete(call: _Call) -> int:
    if call.pos[1:2] == ["namespace"] and len(call.pos) == 3:
        return _delete_namespace(call)
    if "f" in call.flags:
        targets = _delete_files(call)
    elif "l" in call.flags:
        kind, _, namespaced = resolve(call.pos[1], call.missing)
        targets = _selected(call, kind, namespaced)
    else:
        targets = []
        for res, kind, name, namespaced in _refs(call, call.pos[1:]):
            hit = [o for o in call.objs if same(o, kind, call.ns, name, namespaced)]
            if not hit and "ignore-not-found" not in call.flags:
                _not_found(res, name)
            targets += hit
    for o in targets:
        _remove(call, o)
    return 0


def _delete_files(call: _Call) -> list:
    """The objects ``delete -f`` names, each in its own namespace or the call's."""
    targets = []
    for d in docs(call.flags, call.stdin):
        namespaced = _namespaced(d["kind"])
        where = (d.get("metadata") or {}).get("namespace") or call.ns
        hit = [o for o in call.objs if same(o, d["kind"], where, d["metadata"]["name"], namespaced)]
        if not hit and "ignore-not-found" not in call.flags:
            die(f'Error from server (NotFound): {d["kind"].lower()}s "{d["metadata"]["name"]}" not found')
        targets += hit
    return targets


def _remove(call: _Call, o: dict) -> None:
    """Delete ``o`` and, as the garbage collector, what a workload owns."""
    objs = call.objs
    if o not in objs:  # the garbage collector took it with its owner, deleted just before
        print(f"{o['kind'].lower()} \"{o['metadata']['name']}\" deleted")
        return
    objs.remove(o)
    where = f" from {ns_of(o)} namespace" if _namespaced(o["kind"]) else ""
    force = "force " if "force" in call.flags else ""
    print(f"{resource_name(o['kind'])} \"{o['metadata']['name']}\" {force}deleted{where}")
    if o["kind"] in WORKLOADS:
        key = _owner(o)
        for pod in [p for p in objs if p["kind"] in ("Pod", "LeaderWorkerSet") and _owned_by(p, key)]:
            objs.remove(pod)


def _delete_namespace(call: _Call) -> int:
    """``delete namespace NAME``: the namespace and every namespaced object in it."""
    name, objs = call.pos[2], call.objs
    gone = [o for o in objs if (o["kind"] == "Namespace" and o["metadata"]["name"] == name)
            or ns_of(o) == name and _namespaced(o["kind"])]
    if not any(o["kind"] == "Namespace" for o in gone) and "ignore-not-found" not in call.flags:
        die(f'Error from server (NotFound): namespaces "{name}" not found')
    for o in gone:
        objs.remove(o)
    if any(o["kind"] == "Namespace" for o in gone):
        print(f'namespace "{name}" deleted')
    return 0


def _label(call: _Call) -> int:
    """``kubectl label TYPE/NAME KEY=VALUE|KEY-`` (or TYPE NAME ...): the labels set or
    removed, owned in managedFields by the manager kubectl-label, as the API server records."""
    refs, changes = [], []
    for arg in call.pos[1:]:
        (changes if "=" in arg or arg.endswith("-") else refs).append(arg)
    if len(refs) == 2 and "/" not in refs[0]:
        refs = [f"{refs[0]}/{refs[1]}"]
    for res, kind, name, namespaced in _refs(call, refs):
        hit = [o for o in call.objs if same(o, kind, call.ns, name, namespaced)]
        if not hit:
            _not_found(res, name)
        _relabel(hit[0], changes)
        print(f"{resource_name(kind)}/{name} labeled")
    return 0


def _relabel(obj: dict, changes: list[str]) -> None:
    meta = obj["metadata"]
    labels = meta.setdefault("labels", {})
    owned = {}
    for change in changes:
        if change.endswith("-"):
            labels.pop(change[:-1], None)
        else:
            key, _, value = change.partition("=")
            labels[key] = value
            owned[f"f:{key}"] = {}
    entries = [m for m in meta.get("managedFields") or [] if m.get("manager") != "kubectl-label"]
    if owned:
        entries.append({"manager": "kubectl-label", "operation": "Update", "apiVersion": obj.get("apiVersion"),
                        "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": owned}}})
    meta["managedFields"] = entries


def _wait(call: _Call) -> int:
    """``wait --for=condition=C``: time passes (every pod turns Ready), then each object must
    hold the condition."""
    cond = str(call.flags.get("for", "")).removeprefix("condition=")
    if "l" in call.flags:
        kind, _, namespaced = resolve(call.pos[1], call.missing)
        refs = [(call.pos[1], kind, o["metadata"]["name"], namespaced) for o in _selected(call, kind, namespaced)]
        if not refs:
            die("error: no matching resources found")
    else:
        refs = list(_refs(call, call.pos[1:]))
    _settle(call.state, reads=10 ** 9)  # waiting is as good as the time passing
    for res, kind, name, namespaced in refs:
        hit = [o for o in call.objs if same(o, kind, call.ns, name, namespaced)]
        if not hit:
            _not_found(res, name)
        if not _condition(hit[0], cond):
            die(f"error: timed out waiting for the condition on {res.split('.')[0]}/{name}")
        print(f"{resource_name(kind)}/{name} condition met")
    return 0


def _logs(call: _Call) -> int:
    ref = call.pos[1] if len(call.pos) > 1 else ""
    res, _, name = ref.partition("/") if "/" in ref else ("pod", "", ref)
    kind = {"job": "Job", "jobs": "Job", "pod": "Pod", "pods": "Pod"}.get(res) or resolve(res, call.missing)[0]
    if not any(o["kind"] == kind and o["metadata"]["name"] == name and ns_of(o) == call.ns for o in call.objs):
        die(f'Error from server (NotFound): {ref} not found')
    print(call.state.get("config", {}).get("logs", f"fake kubectl: {ref} ran no container: there is no cluster"))
    return 0


#: The handler of each verb the stand-in answers; any other is refused (exit 2).
VERBS = {
    "api-versions": _api_versions, "config": _config, "get": _get, "apply": _apply, "create": _create,
    "diff": _diff, "delete": _delete, "label": _label, "wait": _wait, "logs": _logs,
}


if __name__ == "__main__":
    main()
