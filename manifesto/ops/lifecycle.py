"""servers, stop and ready: stateless discovery through instance labels."""

from __future__ import annotations

import sys

from manifesto.errors import OpsError, note, printable, quiet
from manifesto.ops.discovery import COMPONENT, OWNER, Live, discover, selector
from manifesto.ops.kubectl import Kube, conditions, dig, items, run

__all__ = ["servers_rows", "servers_json", "print_servers", "teardown_phases", "foreign_owners", "stop", "pick", "ready_report", "awaited",
           "wait_ready"]

ROUTING_COMPONENTS = ("endpoint-picker", "gateway")
ROUTING_KINDS = ("Gateway", "HTTPRoute", "DestinationRule", "InferencePool")
WORKLOAD_KINDS = ("DisaggregatedSet", "LeaderWorkerSet", "Deployment", "Job")
#: The label the DisaggregatedSet controller puts on its pods: the revision of the roles' templates.
DSET_REVISION_LABEL = "disaggregatedset.x-k8s.io/revision"


# -- servers ----------------------------------------------------------------------------

def servers_rows(groups: dict[str, list[Live]]) -> list[tuple[str, str, str]]:
    """(instance, owner, summary of kinds) per instance."""
    rows = []
    for instance, objs in groups.items():
        owner = next((o.label(OWNER) for o in objs if o.label(OWNER)), "")
        counts: dict[str, int] = {}
        for o in objs:
            counts[o.kind] = counts.get(o.kind, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        rows.append((instance, owner, summary))
    return rows


def servers_json(groups: dict[str, list[Live]]) -> list[dict]:
    return [{"instance": instance,
             "owner": next((o.label(OWNER) for o in objs if o.label(OWNER)), None),
             "resources": [{"kind": o.kind, "name": o.name, "resource": o.ref.split("/", 1)[0]}
                           for o in sorted(objs, key=lambda o: (o.kind, o.name))]}
            for instance, objs in groups.items()]


def print_servers(groups: dict[str, list[Live]], output: str, namespace: str | None, instance: str | None = None
                  ) -> None:
    """The servers table (or -o json/yaml/name); ``instance``: only that instance, and the
    text form lists its objects too."""
    from manifesto.util.outputs import emit

    if instance is not None:
        groups = {k: v for k, v in groups.items() if k == instance}
    emit(output, servers_json(groups), names=lambda: list(groups),
         text=lambda: _servers_table(groups, namespace, instance))


def _servers_table(groups: dict[str, list[Live]], namespace: str | None, instance: str | None = None) -> None:
    if not groups:
        if instance is not None:
            note(f"manifesto: no live objects of instance {printable(instance)} in namespace {namespace}")
        else:
            note(f"no Manifesto servers in namespace {namespace}")
        return
    rows = [("INSTANCE", "OWNER", "RESOURCES"), *(tuple(map(printable, r)) for r in servers_rows(groups))]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    for a, b, c in rows:  # labels come from the cluster: printable() escapes what a terminal would run
        print(f"{a.ljust(w0)}  {b.ljust(w1)}  {c}".rstrip())
    if instance is not None:
        print("\nresources:")
        for o in sorted(groups[instance], key=lambda o: (o.kind, o.name)):
            print(f"  {printable(o.ref)}")


# -- stop -------------------------------------------------------------------------------

def teardown_phases(objs: list[Live]) -> list[tuple[str, list[Live]]]:
    """Routing, then model workloads, then supporting objects (pods are deleted last by label)."""
    from manifesto.ops.discovery import TYPES

    order = {kind: i for i, kind in enumerate(TYPES)}
    routing, workloads, support = [], [], []
    for o in sorted(objs, key=lambda o: (order.get(o.kind, len(order)), o.name)):
        if o.kind == "Pod":
            continue
        if o.kind in ROUTING_KINDS or o.component in ROUTING_COMPONENTS:
            routing.append(o)
        elif o.kind in WORKLOAD_KINDS:
            workloads.append(o)
        else:
            support.append(o)
    return [(name, group) for name, group in
            (("routing", routing), ("model workloads", workloads), ("supporting objects", support)) if group]


def foreign_owners(objs: list[Live], owner: str) -> list[str]:
    """The owners (llm-d.ai/owner) other than ``owner`` of the live objects (pure)."""
    return sorted({o.label(OWNER) for o in objs if o.label(OWNER) and o.label(OWNER) != owner})


def stop(kube: Kube, instance: str, *, owner: str, take_over: bool = False, now: bool = False,
         output: str = "text") -> int:
    """Delete the instance's live objects, routing first. Nothing live is no error: stop is
    idempotent, as ``kubectl delete --ignore-not-found`` is. An instance whose objects carry
    another ``owner`` is refused, naming the owner, unless ``take_over``, as deploy refuses.
    ``output`` other than text: the deleted objects as data, instead of kubectl's lines."""
    from manifesto.util.outputs import emit

    objs = discover(kube, instance)
    others = foreign_owners(objs, owner)
    if others and not take_over:
        raise OpsError(f"instance {printable(instance)} in namespace {kube.namespace} belongs to "
                       f"{printable(', '.join(others))}, not {printable(owner)}; pass --take-over to stop it anyway")
    if others:
        note(f"manifesto: stopping {printable(instance)} of {printable(', '.join(others))} (--take-over)")
    deleted: list[str] = []
    if not objs:
        note(f"manifesto: nothing to stop: no live objects of instance {printable(instance)} in namespace "
             f"{kube.namespace}")
    else:
        force = ("--grace-period=0", "--force") if now else ()
        for phase, group in teardown_phases(objs):
            note(f"manifesto: deleting {phase} of {printable(instance)}: {len(group)} object(s)")
            deleted += _deleted(run(kube.write("delete", "--ignore-not-found", *force, *[o.ref for o in group])).stdout,
                                output)
        deleted += _deleted(run(kube.write("delete", "pods", "-l", selector(instance), "--ignore-not-found",
                                           *force)).stdout, output)
        note(f"manifesto: stopped {printable(instance)}")
    if output != "text":
        emit(output, {"instance": instance, "namespace": kube.namespace, "deleted": deleted},
             names=lambda: deleted)
    return 0


def _deleted(stdout: str, output: str) -> list[str]:
    """``kind/name`` of each ``TYPE "NAME" [force ]deleted`` line; in text mode the lines are passed on."""
    import re

    if output == "text" and not quiet():  # kubectl's lines carry names from the cluster: escaped
        sys.stdout.write(printable(stdout, keep="\n"))
    # `pod "x" deleted from ns namespace`; with --force (stop --now): `pod "x" force deleted ...`
    return [f"{m.group(1)}/{m.group(2)}" for m in re.finditer(r'^(\S+) "([^"]+)" (?:force )?deleted', stdout, re.M)]


def pick(instances: list[str], *, fzf: str | None, ask=None) -> str | None:
    """One instance chosen interactively: fzf when available, else a numbered prompt."""
    if fzf:
        from manifesto.ops.programs import pick_line

        return pick_line(fzf, instances, "stop> ")
    for i, name in enumerate(instances, 1):
        print(f"{i:3d}) {printable(name)}", file=sys.stderr)
    try:
        answer = (ask or input)(f"instance to stop [1-{len(instances)}]: ").strip()
    except EOFError:
        return None
    if answer in instances:
        return answer
    if answer.isascii() and answer.isdigit() and 1 <= int(answer) <= len(instances):
        return instances[int(answer) - 1]
    if answer:
        raise OpsError(f"'{answer}' is not one of 1-{len(instances)}")
    return None


# -- ready ------------------------------------------------------------------------------

def _pod_ready(pod: dict) -> bool:
    return _condition(pod, "Ready")


def _condition(obj: dict, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions(obj))


def _waiting(plan, pods: list[dict], epp: dict | None, gateway: dict | None,
             workloads: dict | None = None) -> tuple[list[str], list[str]]:
    """(model roles not ready, routing frontend not ready), as short phrases. ``workloads``
    (``{"lws": [live LeaderWorkerSets], "set": the live DisaggregatedSet or None}``) also
    holds the LeaderWorkerSets and the set to having rolled out what was applied
    (:mod:`manifesto.ops.lws_ready`)."""
    from manifesto.resolve import names

    model, frontend = [], []
    if workloads is not None:
        model += _rollouts(plan, workloads)
    for role in plan.roles:
        want = role.layout.replicas * role.layout.nodes
        sel = dict(role.selector)
        have = sum(1 for p in pods if _pod_ready(p)
                   and all(dig(p, "metadata", "labels", k) == v for k, v in sel.items()))
        if have < want:
            model.append(f"role {role.name}: {have}/{want} pods ready")
    if plan.pd_set is not None:
        # A rollout keeps the old revision's pods (ready) beside the new one's until the new
        # one is up; the set is ready once a single revision is left.
        revisions = {dig(p, "metadata", "labels", DSET_REVISION_LABEL) for p in pods
                     if dig(p, "metadata", "labels", COMPONENT) == "model-server"
                     and not dig(p, "metadata", "deletionTimestamp")} - {None}
        if len(revisions) > 1:
            model.append(f"DisaggregatedSet {plan.pd_set}: rolling out ({len(revisions)} revisions live)")
    if plan.routing is not None:
        if epp is None or not _condition(epp, "Available"):
            frontend.append(f"Deployment {names.epp(plan.instance)} not available")
        if plan.routing.frontend == "gateway" and (gateway is None or not _condition(gateway, "Programmed")):
            frontend.append(f"Gateway {names.gateway(plan.instance)} not programmed")
    return model, frontend


def _rollouts(plan, workloads: dict) -> list[str]:
    """What the model workloads of ``plan`` still roll out (LeaderWorkerSets, a DisaggregatedSet)."""
    from manifesto.ops.lws_ready import lws_waiting, set_waiting

    lws = [o for o in workloads.get("lws") or () if isinstance(o, dict)]
    if plan.pd_set is not None:
        rendered = workloads.get("applied")
        if rendered is None:
            raise ValueError("a DisaggregatedSet's readiness needs the applied set (workloads['applied'])")
        return set_waiting(rendered, workloads.get("set"), lws)
    out = []
    for role in plan.roles:
        if role.workload_kind != "LeaderWorkerSet":
            continue
        live = next((o for o in lws if dig(o, "metadata", "name") == role.workload_name), None)
        why = f"LeaderWorkerSet {role.workload_name}: not in the cluster" if live is None else lws_waiting(live)
        if why:
            out.append(why)
    return out


def ready_report(plan, pods: list[dict], epp: dict | None, gateway: dict | None,
                 workloads: dict | None = None) -> list[str]:
    """What is not ready yet, as short phrases (empty when everything is)."""
    model, frontend = _waiting(plan, pods, epp, gateway, workloads)
    return model + frontend


def awaited(plan) -> str:
    """What ``ready`` waits for, in one phrase."""
    from manifesto.resolve import names

    parts = [f"{r.layout.replicas * r.layout.nodes} {r.name} pod(s)" for r in plan.roles]
    if plan.pd_set is not None:
        parts.append(f"DisaggregatedSet {plan.pd_set} rolled out")
    elif any(r.workload_kind == "LeaderWorkerSet" for r in plan.roles):
        parts.append("LeaderWorkerSets rolled out")
    if plan.routing is not None:
        parts.append(f"Deployment {names.epp(plan.instance)} available")
        if plan.routing.frontend == "gateway":
            parts.append(f"Gateway {names.gateway(plan.instance)} programmed")
    return ", ".join(parts)


#: Seconds between two progress lines of ``ready`` when nothing changes.
REPORT_EVERY = 30.0

#: The least time one poll's kubectl reads get, however little of the deadline is left.
POLL_FLOOR = 1.0


def _get_json(kube: Kube, *args: str, deadline: float | None = None) -> dict | None:
    result = run(kube.read("get", *args, "-o", "json", check=False, deadline=deadline))
    return result.json() if result.ok else None


def _applied_set(plan, objects: list[dict] | None) -> dict | None:
    """The DisaggregatedSet of ``plan`` among ``objects``, the artifact applied (what ``ready``
    holds the live set's children to); None when ``plan`` runs none. ``ready`` reads the objects
    it was handed (the artifact's, or the file's of a target): it never builds objects itself."""
    if plan.pd_set is None:
        return None
    found = [o for o in objects or () if o.get("kind") == "DisaggregatedSet"
             and (o.get("metadata") or {}).get("name") == plan.pd_set]
    if len(found) != 1:
        raise OpsError(f"the artifact holds {len(found)} DisaggregatedSets named '{printable(plan.pd_set)}', not one: "
                       "`ready` waits for the set it applied; render it again")
    return found[0]


def _workloads(kube: Kube, plan, deadline: float, applied: dict | None = None) -> dict | None:
    """The live LeaderWorkerSets of ``plan``'s instance (a DisaggregatedSet's included: they carry
    its role's labels) and its DisaggregatedSet; None when it runs none. ``applied``: the
    rendered set, passed on so a wait renders it once, not on every poll."""
    if plan.pd_set is None and not any(r.workload_kind == "LeaderWorkerSet" for r in plan.roles):
        return None
    listed = run(kube.read("get", "leaderworkersets.leaderworkerset.x-k8s.io", "-l", selector(plan.instance),
                           "-o", "json", check=False, deadline=deadline))
    found: dict = {"lws": items(listed) if listed.ok else [], "set": None, "applied": applied}
    if plan.pd_set is not None:
        found["set"] = _get_json(kube, "disaggregatedsets.disaggregatedset.x-k8s.io", plan.pd_set, deadline=deadline)
    return found


def wait_ready(kube: Kube, plan, timeout: float, interval: float = 5.0, clock=None, sleep=None, *,
               objects: list[dict] | None = None, frontend_timeout: float | None = None) -> None:
    """Poll until every role's pods and the routing frontend are ready, or ``timeout`` passes.
    ``objects``: the artifact applied (needed when ``plan`` runs a DisaggregatedSet, whose
    rollout is held to the applied set).

    Progress goes to stderr: what it waits for at the start, then a line whenever what is
    still missing changes, and at least every ``REPORT_EVERY`` seconds. ``frontend_timeout``
    (``--gateway-timeout``): once the model pods are ready, the routing frontend (EPP
    Deployment, Gateway) has this long to follow before the wait fails.

    Every kubectl read is capped by the time left (but given at least ``POLL_FLOOR``, so
    ``--timeout 0`` still looks once): a hung API server cannot stretch the wait more
    than that floor past ``timeout``.
    """
    import time

    from manifesto.resolve import names

    clock = clock or time.monotonic
    sleep = sleep or time.sleep
    started = clock()
    deadline = started + timeout
    frontend_deadline: float | None = None
    note(f"manifesto: waiting up to {timeout:g}s for {printable(plan.instance)} in namespace {kube.namespace}: "
         f"{awaited(plan)}")
    applied = _applied_set(plan, objects)
    waiting = ["no answer from the cluster yet"]
    shown: list[str] | None = None
    shown_at = started
    while True:
        calls_deadline = time.monotonic() + max(POLL_FLOOR, deadline - clock())
        model: list[str] | None = None  # None: this poll did not finish
        try:
            listed = run(kube.read("get", "pods", "-l", selector(plan.instance), "-o", "json",
                                   check=False, deadline=calls_deadline))
            pods = items(listed) if listed.ok else []
            workloads = _workloads(kube, plan, calls_deadline, applied)
            epp = gw = None
            if plan.routing is not None:
                epp = _get_json(kube, "deployments.apps", names.epp(plan.instance), deadline=calls_deadline)
                if plan.routing.frontend == "gateway":
                    gw = _get_json(kube, "gateways.gateway.networking.k8s.io", names.gateway(plan.instance),
                                   deadline=calls_deadline)
            model, frontend = _waiting(plan, pods, epp, gw, workloads)
            waiting = [printable(w) for w in model + frontend]  # pod states: the cluster's text
        except OpsError as exc:
            if clock() < deadline:
                raise
            waiting = [f"the last poll did not finish ({exc.message})"]
        now = clock()
        if not waiting:
            note(f"manifesto: {plan.instance} is ready (after {now - started:.0f}s)")
            return
        if frontend_timeout is not None and model == []:
            if frontend_deadline is None:
                frontend_deadline = now + frontend_timeout
            elif now >= frontend_deadline:
                raise OpsError(f"{plan.instance}: the model pods are ready but the routing frontend is not "
                               f"{frontend_timeout:g}s later (--gateway-timeout): {'; '.join(waiting)}")
        if now >= deadline:
            raise OpsError(f"{plan.instance} not ready after {timeout:g}s: {'; '.join(waiting)}")
        if waiting != shown or now - shown_at >= REPORT_EVERY:
            note(f"manifesto: waiting ({now - started:.0f}s of {timeout:g}s): {'; '.join(waiting)}")
            shown, shown_at = waiting, now
        until = deadline if frontend_deadline is None else min(deadline, frontend_deadline)
        sleep(min(interval, max(0.0, until - now)))
