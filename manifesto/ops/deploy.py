"""deploy, deploy routing/bootstrap, file diff/apply: preconditions, secret, apply, prune.

Pure helpers decide what to check, delete and apply; :func:`deploy` runs the calls in
order through the one kubectl runner.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass

from manifesto.errors import OpsError, printable
from manifesto.ops.discovery import Live, list_types, selector
from manifesto.ops.kubectl import Kube, conditions, dig, is_not_found, is_not_served, run
from manifesto.resolve.names import (
    INSTANCE_LABEL, KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL, MANAGED_BY, MANAGED_BY_LABEL, OWNER_LABEL,
)

__all__ = ["SECRET", "secret_manifest", "hf_token", "ensure_secret", "required_apis", "check_apis", "pod_requests",
           "check_kueue", "check_dra", "foreign_objects", "live_by_name", "check_owners", "transitions",
           "frontend_leftovers", "apply_objects", "DeployFacts", "plan_facts",
           "object_facts", "deploy", "deploy_objects", "deploy_routing", "manifest_file", "file_owners",
           "check_file_owner", "file_diff", "file_apply", "file_delete"]

SECRET = "hf-secret"
QUEUE = KUEUE_QUEUE_LABEL
PRIORITY = KUEUE_PRIORITY_LABEL
LWS_API = "leaderworkerset.x-k8s.io/v1"
DSET_API = "disaggregatedset.x-k8s.io/v1"
#: The label the DisaggregatedSet controller puts on the LeaderWorkerSets it creates (its name).
DSET_NAME_LABEL = "disaggregatedset.x-k8s.io/name"
DRA_API = "resource.k8s.io/v1"
KUEUE_GROUP = "kueue.x-k8s.io/"
WORKLOADS = ("Deployment", "LeaderWorkerSet", "DisaggregatedSet")


def _say(text: str) -> None:
    from manifesto.errors import note

    note(f"manifesto: {text}")


def _pass_on(stdout: str) -> None:
    """kubectl's own lines (created, configured, deleted) for the terminal, escaped: they carry
    names from the cluster. Progress, not data: -q leaves them out."""
    from manifesto.errors import quiet

    if not quiet():
        sys.stdout.write(printable(stdout, keep="\n\t"))


# -- the Hugging Face token secret ------------------------------------------------------

def secret_manifest(namespace: str, token: str) -> str:
    """The hf-secret Secret as JSON, for kubectl apply's stdin (never argv, never a file)."""
    return json.dumps({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": SECRET, "namespace": namespace,
                     "labels": {MANAGED_BY_LABEL: MANAGED_BY}},
        "stringData": {"HF_TOKEN": token},
    })


def hf_token(env: dict[str, str], namespace: str | None) -> str:
    """HF_TOKEN from the settings; an OpsError when it is not set."""
    token = env.get("HF_TOKEN", "").strip()
    if not token:
        raise OpsError(f"HF_TOKEN is not set; set it in the environment or .env so {SECRET} can be created "
                       f"in namespace {namespace}")
    return token


def ensure_secret(kube: Kube, env: dict[str, str]) -> None:
    token = hf_token(env, kube.namespace)
    result = run(kube.write("apply", "-f", "-", stdin=secret_manifest(kube.namespace or "default", token),
                            check=False))
    if not result.ok:
        # kubectl may echo the object it rejected; never repeat stdout or stderr that could hold the token.
        raise OpsError(f"could not create or update {SECRET} in namespace {kube.namespace} "
                       f"(kubectl apply exit {result.returncode})")
    # kubectl says `secret/hf-secret created|configured|unchanged`; only that last word is read.
    outcome = result.stdout.split()[-1] if result.stdout.split() else ""
    said = {"created": "created", "configured": "updated", "unchanged": "up to date"}.get(outcome, "applied")
    _say(f"{SECRET} {said} in namespace {kube.namespace}")


# -- preconditions ----------------------------------------------------------------------

def required_apis(objs: list[dict], kueue_queue: str | None, dra: bool) -> list[tuple[str, str]]:
    """(API group/version prefix, why) the cluster must serve before ``objs`` are applied."""
    needed = []
    if any(o["kind"] == "LeaderWorkerSet" for o in objs):
        needed.append((LWS_API, "the plan has LeaderWorkerSet roles; install LeaderWorkerSet"))
    if any(o["kind"] == "DisaggregatedSet" for o in objs):
        # The set's roles are LeaderWorkerSets the controller creates: both APIs must be served.
        needed.append((LWS_API, "the plan's DisaggregatedSet creates LeaderWorkerSets; install LeaderWorkerSet 0.10 "
                                "or newer"))
        needed.append((DSET_API, "the plan renders prefill and decode as one DisaggregatedSet; install "
                                 "LeaderWorkerSet 0.10 or newer (it serves DisaggregatedSet), or render with "
                                 "pd_workload: lws-pair"))
    if kueue_queue:
        needed.append((KUEUE_GROUP, f"the cluster profile selects Kueue LocalQueue {kueue_queue}; install Kueue"))
    if dra:
        needed.append((DRA_API, "the accelerator allocates GPUs through DRA; the cluster must serve resource.k8s.io/v1"))
    return needed


def check_apis(kube: Kube, needed: list[tuple[str, str]]) -> None:
    if not needed:
        return
    served = set(run(kube.read("api-versions", namespaced=False)).stdout.split())
    for api, why in needed:
        ok = any(v.startswith(api) for v in served) if api.endswith("/") else api in served
        if not ok:
            raise OpsError(f"the cluster does not serve {api.rstrip('/')}: {why}")


def _templates(obj: dict) -> list[tuple[str, dict]]:
    spec = obj.get("spec") or {}
    if obj["kind"] == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        return [(k, lwt[k]) for k in ("leaderTemplate", "workerTemplate") if k in lwt]
    if obj["kind"] == "DisaggregatedSet":
        return [(f"role {role.get('name')} {k}", tpl)
                for role in spec.get("roles") or []
                for k, tpl in _templates({"kind": "LeaderWorkerSet", "spec": role.get("spec") or {}})]
    return [("template", spec["template"])] if "template" in spec else []


def pod_requests(objs: list[dict]) -> list[tuple[str, dict[str, str]]]:
    """(``Kind/name template init-container|container NAME``, requests) of every queued workload."""
    out = []
    for obj in objs:
        if obj["kind"] not in WORKLOADS or QUEUE not in (obj["metadata"].get("labels") or {}):
            continue
        for tname, tpl in _templates(obj):
            pod = tpl.get("spec") or {}
            for field, what in (("initContainers", "init-container"), ("containers", "container")):
                for c in pod.get(field) or []:
                    res = c.get("resources") or {}
                    req = {**(res.get("limits") or {}), **(res.get("requests") or {})}
                    out.append((f"{obj['kind']}/{obj['metadata']['name']} {tname} {what} {c['name']}",
                                {k: str(v) for k, v in req.items()}))
    return out


def _active(obj: dict) -> tuple[bool, str]:
    for cond in conditions(obj):
        if cond.get("type") == "Active":
            return cond.get("status") == "True", str(cond.get("reason") or cond.get("message") or "")
    return False, "no Active condition yet"


def _get_one(kube: Kube, resource: str, name: str, what: str, *, namespaced: bool = True) -> dict:
    result = run(kube.read("get", resource, name, "-o", "json", namespaced=namespaced, check=False))
    if result.ok:
        return result.json()
    if is_not_found(result.stderr):
        where = f" in namespace {kube.namespace}" if namespaced else ""
        raise OpsError(f"{what} {name} does not exist{where}")
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
    raise OpsError(f"could not read {what} {name}: {last}")


def check_kueue(kube: Kube, queue: str, objs: list[dict]) -> None:
    lq = _get_one(kube, "localqueues.kueue.x-k8s.io", queue, "Kueue LocalQueue")
    active, why = _active(lq)
    if not active:
        raise OpsError(f"Kueue LocalQueue {queue} in namespace {kube.namespace} is not Active ({why})")
    cq_name = dig(lq, "spec", "clusterQueue", default="")
    if not cq_name or not isinstance(cq_name, str):
        raise OpsError(f"Kueue LocalQueue {queue} names no ClusterQueue")
    cq = _get_one(kube, "clusterqueues.kueue.x-k8s.io", cq_name, "Kueue ClusterQueue", namespaced=False)
    active, why = _active(cq)
    if not active:
        raise OpsError(f"Kueue ClusterQueue {cq_name} (of LocalQueue {queue}) is not Active ({why})")
    groups = dig(cq, "spec", "resourceGroups", default=[])
    covered = {r for g in (groups if isinstance(groups, list) else []) if isinstance(g, dict)
               for r in (g.get("coveredResources") if isinstance(g.get("coveredResources"), list) else [])
               if isinstance(r, str)}
    requests = pod_requests(objs)
    for where, req in requests:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(req.items())) or "(none)"
        _pass_on(f"kueue {queue}: {where}: {shown}\n")
    missing = sorted({k for _, req in requests for k in req} - covered)
    if missing:
        raise OpsError(f"Kueue ClusterQueue {cq_name} does not cover requested resource(s) {', '.join(missing)}; "
                       "add them to its coveredResources or drop the requests")


def check_dra(kube: Kube, device_class: str) -> None:
    _get_one(kube, "deviceclasses.resource.k8s.io", device_class, "DRA DeviceClass", namespaced=False)


# -- kind transitions and frontend pruning (pure) ---------------------------------------

def _queue(labels) -> str | None:
    return dict(labels).get(QUEUE)


def transitions(objs: list[dict], live: list[Live]) -> list[tuple[Live, str]]:
    """Live workloads to delete before applying ``objs``, with the reason."""
    wanted = {o["metadata"]["name"]: o for o in objs if o["kind"] in WORKLOADS}
    dset = next((o["metadata"]["name"] for o in objs if o["kind"] == "DisaggregatedSet"), None)
    out = []
    for obj in live:
        new = wanted.get(obj.name)
        if obj.kind not in WORKLOADS or obj.label(DSET_NAME_LABEL):
            continue  # a LeaderWorkerSet of a DisaggregatedSet belongs to its controller
        if new is None:
            # The roles move into one DisaggregatedSet, or out of one: the old workloads would
            # otherwise keep serving (and holding GPUs) beside the new ones.
            if dset is not None and obj.component == "model-server":
                out.append((obj, f"its role moves into DisaggregatedSet {dset}"))
            elif dset is None and obj.kind == "DisaggregatedSet":
                out.append((obj, "its roles move out into their own workloads"))
            continue
        if new["kind"] != obj.kind:
            out.append((obj, f"{obj.name} changes from {obj.kind} to {new['kind']}"))
        elif obj.kind in ("LeaderWorkerSet", "DisaggregatedSet") and _queue(obj.labels) != _queue((new["metadata"].get("labels") or {}).items()):
            out.append((obj, f"{obj.kind} {obj.name} changes Kueue queue "
                             f"{_queue(obj.labels) or '(none)'} -> {_queue(new['metadata'].get('labels') or {}) or '(none)'}"))
        elif obj.kind == "DisaggregatedSet" and (dict(obj.labels).get(PRIORITY)
                                                 != (new["metadata"].get("labels") or {}).get(PRIORITY)):
            # A role's labels reach its LeaderWorkerSet only when the controller creates one
            # (LWS v0.10.0 lws_manager.go:59-104): Kueue would keep the old priority class.
            out.append((obj, f"DisaggregatedSet {obj.name} changes Kueue priority class "
                             f"{dict(obj.labels).get(PRIORITY) or '(none)'} -> "
                             f"{(new['metadata'].get('labels') or {}).get(PRIORITY) or '(none)'}"))
    return out


FRONTEND_KINDS = ("ConfigMap", "Gateway", "HTTPRoute", "DestinationRule")


def frontend_leftovers(instance: str, frontend: str, live: list[Live]) -> list[Live]:
    """Objects of the other routing frontend that carry ``instance``'s labels."""
    from manifesto.resolve import names

    if frontend == "gateway":
        other = {("ConfigMap", names.envoy_config(instance))}
    else:
        other = {("ConfigMap", names.gateway_options(instance)), ("Gateway", names.gateway(instance)),
                 ("HTTPRoute", names.route(instance)),
                 ("DestinationRule", names.epp_destination_rule(instance)),
                 ("DestinationRule", names.pool_destination_rule(instance))}
    return [o for o in live if o.instance == instance and (o.kind, o.name) in other]


# -- objects of someone else --------------------------------------------------------------

def foreign_objects(objs: list[dict], live: list[dict]) -> dict[str, list[str]]:
    """Live objects (of the names in ``objs``) whose instance or owner label is not the one
    ``objs`` carry: ``instance I of user U`` -> [``Kind name``, ...] (pure)."""
    want = {(o["kind"], o["metadata"]["name"]): o["metadata"].get("labels") or {} for o in objs}
    out: dict[str, list[str]] = {}
    for item in live:
        key = (item.get("kind"), dig(item, "metadata", "name"))
        labels = dig(item, "metadata", "labels", default={})
        if key not in want or not isinstance(labels, dict):
            continue
        mine = want[key]
        if any(labels.get(k) not in (None, mine.get(k)) for k in (INSTANCE_LABEL, OWNER_LABEL)):
            owner = (f"instance {labels.get(INSTANCE_LABEL) or '(none)'} of user "
                     f"{labels.get(OWNER_LABEL) or '(unknown)'}")
            out.setdefault(owner, []).append(f"{key[0]} {key[1]}")
    return out


def live_by_name(kube: Kube, objs: list[dict], *, managed_fields: bool = False) -> list[dict]:
    """The live objects that have the names of ``objs`` (whatever their labels), one
    concurrent get per kind; a kind the cluster does not serve has none. ``managed_fields``:
    with metadata.managedFields (kubectl leaves them out unless asked)."""
    from concurrent.futures import ThreadPoolExecutor

    from manifesto.ops.discovery import resource_of
    from manifesto.ops.kubectl import failure, items

    names: dict[str, list[str]] = {}
    for o in objs:
        names.setdefault(o["kind"], []).append(o["metadata"]["name"])
    shown = ("--show-managed-fields",) if managed_fields else ()
    calls = [kube.read("get", resource_of(kind), *group, "--ignore-not-found", *shown, "-o", "json", check=False)
             for kind, group in names.items()]
    if not calls:
        return []
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        results = list(pool.map(run, calls))
    out: list[dict] = []
    for call, result in zip(calls, results):
        if not result.ok:
            if is_not_served(result.stderr):
                continue
            raise OpsError(failure(call, result))
        found = result.json()
        out += items(result) if found.get("kind", "").endswith("List") else ([found] if found else [])
    return out


def check_owners(kube: Kube, objs: list[dict], take_over: bool) -> None:
    """Refuse to modify live objects another instance or user owns, unless ``take_over``."""
    foreign = foreign_objects(objs, live_by_name(kube, objs))
    if not foreign:
        return
    owned = "; ".join(f"{owner}: {', '.join(refs)}" for owner, refs in foreign.items())
    if take_over:
        _say(f"taking over objects of {owned}")
        return
    count = sum(len(refs) for refs in foreign.values())
    raise OpsError(f"{count} object(s) to apply already exist in namespace {kube.namespace} and belong to "
                   f"{owned}; pass --take-over to modify them anyway")


def _delete(kube: Kube, objs: list[Live], *extra: str) -> None:
    if objs:
        run(kube.write("delete", "--ignore-not-found", *extra, *[o.ref for o in objs]))


# -- apply ------------------------------------------------------------------------------

def apply_objects(kube: Kube, objs: list[dict], text: str | None = None) -> None:
    """``kubectl apply`` the objects (``text``: their exact bytes, applied as they are)."""
    if text is None:
        from manifesto.util.yamlemit import dump_all

        text = dump_all(objs)
    result = run(kube.write("apply", "-f", "-", stdin=text))
    _pass_on(result.stdout)


def _prune_frontend(kube: Kube, instance: str, frontend: str) -> None:
    live = list_types(kube, FRONTEND_KINDS, selector(instance))
    stale = frontend_leftovers(instance, frontend, live)
    if stale:
        _say(f"removing {', '.join(o.ref for o in stale)} left by the previous routing frontend")
        _delete(kube, stale)


@dataclass(frozen=True)
class DeployFacts:
    """What deploying needs to know beyond the objects: the instance, its Kueue queue, the DRA
    device classes it claims and its routing frontend (None: no routing)."""

    instance: str
    kueue_queue: str | None = None
    device_classes: tuple[str, ...] = ()
    frontend: str | None = None


def plan_facts(plan) -> DeployFacts:
    dra = (plan.accelerator.device_class_name,) if plan.accelerator.backend == "dra" else ()
    return DeployFacts(plan.instance, plan.kueue_queue, dra, plan.routing.frontend if plan.routing is not None else None)


def object_facts(objs: list[dict], instance: str) -> DeployFacts:
    """The same facts read from rendered objects (an artifact deployed as it is)."""
    queue = next((q for o in objs if o["kind"] in WORKLOADS
                  for q in [(o["metadata"].get("labels") or {}).get(QUEUE)] if q), None)
    classes = sorted({r["exactly"]["deviceClassName"] for o in objs if o["kind"] == "ResourceClaimTemplate"
                      for r in ((o.get("spec") or {}).get("spec") or {}).get("devices", {}).get("requests") or []
                      if (r.get("exactly") or {}).get("deviceClassName")})
    kinds = {o["kind"] for o in objs}
    frontend = "gateway" if "Gateway" in kinds else ("standalone" if "InferencePool" in kinds else None)
    return DeployFacts(instance, queue, tuple(classes), frontend)


def deploy(kube: Kube, plan, objs: list[dict], env: dict[str, str], *, take_over: bool = False) -> None:
    """Verify (owners included), ensure hf-secret, resolve kind transitions, apply, prune the
    old frontend."""
    deploy_objects(kube, plan_facts(plan), objs, env, take_over=take_over)


def deploy_objects(kube: Kube, facts: DeployFacts, objs: list[dict], env: dict[str, str], text: str | None = None, *,
                   take_over: bool = False) -> None:
    """:func:`deploy` from facts; ``text`` (an artifact's exact bytes) is applied instead of ``objs``."""
    hf_token(env, kube.namespace)
    check_apis(kube, required_apis(objs, facts.kueue_queue, bool(facts.device_classes)))
    if facts.kueue_queue:
        check_kueue(kube, facts.kueue_queue, objs)
    for device_class in facts.device_classes:
        check_dra(kube, device_class)
    check_owners(kube, objs, take_over)
    ensure_secret(kube, env)
    # Both kinds are listed even without an LWS in the plan: an older LWS of a role may remain.
    live = list_types(kube, WORKLOADS, selector(facts.instance))
    for obj, why in transitions(objs, live):
        _say(f"deleting {obj.ref} first: {why}")
        _delete(kube, [obj], "--wait=true")
    apply_objects(kube, objs, text)
    if facts.frontend is not None:
        _prune_frontend(kube, facts.instance, facts.frontend)
    _say(f"applied {len(objs)} objects of {facts.instance} to namespace {kube.namespace}")


def deploy_routing(kube: Kube, plan, objs: list[dict]) -> None:
    apply_objects(kube, objs)
    _prune_frontend(kube, plan.instance, plan.routing.frontend)
    _say(f"applied the routing layer of {plan.instance} ({len(objs)} objects)")


# -- the file workflow ------------------------------------------------------------------

def manifest_file(path: str) -> str:
    """``path`` if it is an existing Kubernetes manifest; Slurm scripts are pointed at `manifesto slurm`."""
    from manifesto.edge.files import read_lenient
    from manifesto.load.yamlio import file_problem

    problem = file_problem(path)
    if problem == "file not found":
        raise OpsError(f"{path} does not exist; write it first with `manifesto render file SPEC`")
    if problem:  # a FIFO would hang the read below and kubectl; a directory applies a whole tree
        raise OpsError(f"{path}: {problem.replace('YAML file', 'manifest file')}")
    head = (read_lenient(path) or "")[:200]
    if path.endswith(".sbatch") or head.startswith("#!"):
        raise OpsError(f"{path} is a Slurm batch script; submit it with sbatch or use `manifesto slurm ...`")
    return path


def file_diff(kube: Kube, path: str, shown: str | None = None) -> int:
    """kubectl diff's exit code: 0 no differences, 1 differences; anything else is an error.
    ``shown``: how messages name the file (a copy of an artifact is named as the artifact).

    Two things kubectl diff alone gets wrong are settled here. A field another writer added
    live (a label, an env var) is drift kubectl diff does not show: it is read from the live
    objects' managedFields (:func:`manifesto.ops.targets.foreign_fields`) and shown after
    kubectl's diff. And a RoleBinding whose Role is new in the same file cannot be dry-run by
    a user without the ``bind`` verb (the API server checks a new binding against the live
    Role's rules, and the Role does not exist yet): it is left out of the dry run and shown
    as new."""
    import tempfile

    from manifesto.edge.raw import read_lenient

    path = manifest_file(path)
    shown = shown or path
    text = read_lenient(path)
    objs, problem = file_objects(text, shown) if text is not None else ([], "unreadable")
    # Only what kubectl could name goes on its command line: the file is not trusted.
    objs = [o for o in objs if _SAFE_KIND.fullmatch(str(o.get("kind"))) and _SAFE_NAME.fullmatch(str(_metadata(o).get("name")))]
    live = _live_in(kube, objs) if problem is None and objs else {}
    held = _bindings_before_roles(objs, live)
    extra = [f"# RoleBinding {printable(b)}: new, not in the dry run above: its Role {printable(r)} is new too, "
             "and the API server checks a new binding against the live Role" for b, r in held]
    with tempfile.TemporaryDirectory(prefix="manifesto-diff-") as folder:
        diffed = _without(objs, {b for b, _ in held}, folder) if held else path
        rc = 0
        if diffed is not None:
            result = run(kube.read("diff", "-f", diffed, check=False, retries=0))  # changes nothing
            sys.stdout.write(printable(result.stdout, keep="\n\t"))  # the cluster's text, escaped
            if result.returncode not in (0, 1):
                last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
                raise OpsError(f"kubectl diff -f {shown} failed: {last}")
            rc = result.returncode
    extra += _foreign_drift(objs, live)
    if extra:
        print("\n".join(extra))
        rc = 1
    if rc == 0:
        _say(f"no differences between {shown} and the cluster")
    return rc


_SAFE_KIND = re.compile(r"[A-Z][A-Za-z0-9]{0,62}")
_SAFE_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


def _live_in(kube: Kube, objs: list[dict]) -> dict[tuple[str, str], dict]:
    """(kind, name) -> the live object, managedFields included, of each object of ``objs``:
    read in the namespace the object names, else in kube's (one namespace per object name)."""
    from dataclasses import replace

    spaces: dict[str | None, list[dict]] = {}
    for o in objs:
        where = _metadata(o).get("namespace")
        spaces.setdefault(where if isinstance(where, str) and _SAFE_NAME.fullmatch(where) else kube.namespace,
                          []).append(o)
    found = {}
    for where, group in spaces.items():
        for item in live_by_name(replace(kube, namespace=where), group, managed_fields=True):
            found[(item.get("kind"), dig(item, "metadata", "name"))] = item
    return found


def _bindings_before_roles(objs: list[dict], live: dict) -> list[tuple[str, str]]:
    """(binding, role) of the file's RoleBindings whose Role is in the file but not live."""
    roles = {_metadata(o)["name"] for o in objs if o["kind"] == "Role"}
    out = []
    for o in objs:
        ref = o.get("roleRef") if isinstance(o.get("roleRef"), dict) else {}
        name = ref.get("name")
        if o["kind"] == "RoleBinding" and ref.get("kind") == "Role" and name in roles and ("Role", name) not in live \
                and ("RoleBinding", _metadata(o)["name"]) not in live:
            out.append((_metadata(o)["name"], name))
    return out


def _without(objs: list[dict], bindings: set[str], folder: str) -> str | None:
    """A copy of the objects without those RoleBindings, written in ``folder`` (None:
    nothing is left)."""
    from manifesto.edge.fs import write_atomic
    from manifesto.util.yamlemit import dump_all

    kept = [o for o in objs if not (o["kind"] == "RoleBinding" and _metadata(o)["name"] in bindings)]
    if not kept:
        return None
    path = os.path.join(folder, "manifest.yaml")
    write_atomic(path, dump_all(kept), root=folder)
    return path


def _foreign_drift(objs: list[dict], live: dict) -> list[str]:
    """One line per live field another writer added that the file lacks (the rule in
    :mod:`manifesto.ops.targets`)."""
    from manifesto.ops.targets import foreign_fields, idle_scaled

    try:
        skip = idle_scaled(objs)
    except OpsError:
        skip = {}
    lines = []
    for obj in objs:
        key = (obj["kind"], _metadata(obj)["name"])
        have = live.get(key)
        if have is None:
            continue
        for field, value, manager in foreign_fields(obj, have, skip.get(key, ())):
            lines.append(f"# {printable(key[0])} {printable(key[1])}: {printable(field)} = "
                         f"{printable(json.dumps(value, sort_keys=True))}, set live by {printable(manager)}, "
                         "is not in the file")
    return lines


def file_objects(text: str, name: str = "the manifest") -> tuple[list[dict], str | None]:
    """The objects of a manifest's text, read as kubectl reads it: JSON or YAML documents, a
    ``List``'s items included, whatever the layout (flow mappings, quoted keys); with None,
    or with why the text is neither."""
    from manifesto.errors import ManifestoError

    stripped = text.lstrip()
    try:
        if stripped.startswith(("{", "[")):  # JSON, as kubectl takes it (YAML could misread a tab)
            from manifesto.edge.jsonio import loads

            docs = [loads(text, name)]
        else:
            from manifesto.load.yamlio import parse_documents

            docs = [d for d, _ in parse_documents(text, name, max_entries=2_000_000, max_documents=10_000)]
    except ManifestoError as exc:
        return [], str(exc)
    objects: list[dict] = []
    stack = list(docs)
    while stack:
        obj = stack.pop()
        if isinstance(obj, list):
            stack.extend(obj)
            continue
        if not isinstance(obj, dict):
            continue
        if isinstance(obj.get("items"), list):  # a List (v1 List, DeploymentList...): kubectl applies its items
            stack.extend(obj["items"])
        objects.append(obj)
    return objects, None


def _metadata(obj: dict) -> dict:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def file_owners(text: str, name: str = "the manifest") -> set[str]:
    """The values of the llm-d.ai/owner labels of the objects in a manifest's text
    (:func:`file_objects`). Raises OpsError when the text cannot be read: then no owner can be
    known, and an owner check must not pass."""
    objects, problem = file_objects(text, name)
    if problem is not None:
        raise OpsError(f"cannot read the owners of {name}'s objects: {problem}")
    owners: set[str] = set()
    for obj in objects:
        labels = _metadata(obj).get("labels")
        if isinstance(labels, dict) and OWNER_LABEL in labels:
            value = labels[OWNER_LABEL]
            owners.add(value if isinstance(value, str) else str(value))
    return owners


def file_namespaces(text: str, name: str = "the manifest") -> set[str]:
    """The namespaces the objects of a manifest's text name (:func:`file_objects`); empty when
    the text cannot be read (kubectl then judges it)."""
    objects, _ = file_objects(text, name)
    return {ns for ns in (_metadata(obj).get("namespace") for obj in objects) if isinstance(ns, str) and ns}


def check_file_owner(path: str, user: str) -> None:
    """Refuse ``path`` when its objects name an owner other than ``user`` (``--user``); a file
    without owner labels (written by hand) has nobody to disagree with. The file is read as
    kubectl reads it (JSON or YAML, :func:`file_owners`); one that cannot be read is refused."""
    from manifesto.edge.files import read_lenient
    from manifesto.resolve.identity import label_value

    text = read_lenient(path)
    if text is None:
        raise OpsError(f"--user {printable(user)}: cannot read {path} to check its owners")
    owners = file_owners(text, path)
    want = label_value(user) or "unknown"
    others = sorted(owners - {want})
    if others:
        raise OpsError(f"--user {printable(user)}: {path} was rendered for user {printable(', '.join(others))} "
                       f"(its {OWNER_LABEL} label); render it again with --user {printable(user)}, or drop --user")


def _kubectl_failed(call_text: str, result) -> OpsError:
    """kubectl's whole error text (escaped: it holds the cluster's words), not only its last line."""
    from manifesto.edge.escape import lines

    said = lines(result.stderr.strip()) or f"exit {result.returncode}"
    return OpsError(f"`{call_text}` failed:\n{said}")


def file_apply(kube: Kube, path: str, env: dict[str, str], secret_namespace: str | None = None) -> None:
    """Ensure hf-secret (in ``secret_namespace``, else kube's), then apply ``path`` as-is.
    kubectl's error text is shown in full: an apply of many objects may fail on several."""
    from dataclasses import replace

    manifest_file(path)
    ensure_secret(replace(kube, namespace=secret_namespace or kube.namespace), env)
    call = kube.write("apply", "-f", path, check=False)
    result = run(call)
    _pass_on(result.stdout)
    if not result.ok:
        raise _kubectl_failed(call.show(), result)


def file_delete(kube: Kube, path: str, *, now: bool = False) -> None:
    """``kubectl delete -f path --ignore-not-found`` (``now``: --grace-period=0 --force). The
    namespace's hf-secret is shared by every instance and stays."""
    manifest_file(path)
    force = ("--grace-period=0", "--force") if now else ()
    call = kube.write("delete", "-f", path, "--ignore-not-found", *force, check=False)
    result = run(call)
    _pass_on(result.stdout)
    if not result.ok:
        raise _kubectl_failed(call.show(), result)
    if not result.stdout.strip():
        _say(f"nothing to delete: no object of {path} exists in the cluster")
