"""When a LeaderWorkerSet, or a DisaggregatedSet's roles, have rolled out what was applied and
are ready: what ``ready`` waits for beyond the pods (which a rollout not yet started would
show ready, from the old template).

LeaderWorkerSet v0.10.0 (kubernetes-sigs/lws, tag v0.10.0) writes on each LeaderWorkerSet
(api/leaderworkerset/v1/leaderworkerset_types.go:364-392): ``observedGeneration``, the
generation its status is of (pkg/controllers/leaderworkerset_controller.go:536-538; releases
before v0.9.0 write none); ``updatedReplicas``, the groups whose leader pod and workers'
StatefulSet carry the current template revision (:463-471); ``readyReplicas``, the groups
whose leader is ready and whose workers' StatefulSet is (:458-461); ``replicas``, the
leaders' StatefulSet's replicas (:529-533); and the ``Available`` condition once every group
is both (:499-500).

The DisaggregatedSet controller of v0.10.0 writes no status on the set (its reconciler never
updates it; ``observedGeneration`` and ``roleStatuses`` came after the release). What tells
that it has seen the applied set is the LeaderWorkerSets it made: one per role and revision,
named ``<set>-<slice>-<revision>-<role>`` and labelled with the set, role and revision
(pkg/utils/disaggregatedset/utils.go:93-111), each the role's spec with those labels added to
its pod templates (pkg/controllers/disaggregatedset/lws_manager.go:59-99). The revision is a
hash of every role's name and template (utils.go:144-169), so the applied set's revision is
the one whose LeaderWorkerSet holds the applied template for every role; the rollout is done
when those hold the role's replicas, rolled out and ready, and every other revision's are
scaled to zero (the executor's end state: pkg/controllers/disaggregatedset/executor.go:155-165,
planner.go:177-184). A set that does write ``status.observedGeneration`` (later releases) is
also held to it.
"""

from __future__ import annotations

from manifesto.ops.kubectl import conditions, dig

__all__ = ["lws_waiting", "set_waiting", "template_within", "DSET_NAME_LABEL", "DSET_ROLE_LABEL",
           "DSET_REVISION_LABEL"]

DSET_NAME_LABEL = "disaggregatedset.x-k8s.io/name"
DSET_ROLE_LABEL = "disaggregatedset.x-k8s.io/role"
DSET_REVISION_LABEL = "disaggregatedset.x-k8s.io/revision"
#: Mappings of quantities (a container's and a claim's resources) and quantity fields of a pod
#: template (an emptyDir's sizeLimit): Go writes them back in canonical form.
_QUANTITY_KEYS = ("requests", "limits")
_QUANTITY_FIELDS = ("sizeLimit",)


def _int(value, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _unobserved(obj: dict, kind: str) -> str | None:
    generation = _int(dig(obj, "metadata", "generation"), 0)
    observed = dig(obj, "status", "observedGeneration")
    if isinstance(observed, int) and not isinstance(observed, bool) and observed < generation:
        return (f"{kind} {dig(obj, 'metadata', 'name', default='?')}: its controller has not seen generation "
                f"{generation} yet (status is of {observed})")
    return None


def lws_waiting(lws: dict) -> str | None:
    """Why a live LeaderWorkerSet has not rolled out its current template to every group, all
    ready; None when it has."""
    name = dig(lws, "metadata", "name", default="?")
    unobserved = _unobserved(lws, "LeaderWorkerSet")
    if unobserved:
        return unobserved
    want = _int(dig(lws, "spec", "replicas"), 1)
    if want == 0:
        return None
    updated = _int(dig(lws, "status", "updatedReplicas"))
    ready = _int(dig(lws, "status", "readyReplicas"))
    if updated < want:
        return f"LeaderWorkerSet {name}: {updated}/{want} groups on the current template"
    if ready < want:
        return f"LeaderWorkerSet {name}: {ready}/{want} groups ready"
    generation = _int(dig(lws, "metadata", "generation"), 0)
    available = [c for c in conditions(lws) if c.get("type") == "Available"]
    if not any(c.get("status") == "True" and _int(c.get("observedGeneration"), generation) >= generation
               for c in available):
        return f"LeaderWorkerSet {name}: not Available"
    return None


def template_within(want, have, quantities: bool = False) -> bool:
    """Whether the live ``have`` holds everything of ``want`` (a rendered template): mappings may
    have more keys (server defaults, the labels a controller adds), an empty value may be
    missing (Go leaves empty fields out), and resource requests and limits and an emptyDir's
    sizeLimit compare by value (the controller writes them back in canonical form: ``1024Mi``
    as ``1Gi``)."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return False
        for k, v in want.items():
            if k not in have:
                if v in ({}, [], None, "", False, 0):
                    continue
                return False
            scalar_quantity = quantities or k in _QUANTITY_FIELDS
            if not template_within(v, have[k], k in _QUANTITY_KEYS if isinstance(v, dict) else scalar_quantity):
                return False
        return True
    if isinstance(want, list):
        return isinstance(have, list) and len(want) == len(have) and all(
            template_within(a, b) for a, b in zip(want, have))
    if want == have and type(want) is type(have):
        return True
    if quantities and isinstance(want, (str, int)) and isinstance(have, (str, int)):
        return _same_quantity(want, have)
    return False


def _same_quantity(a, b) -> bool:
    from manifesto.util import quantity

    try:
        return quantity.parse(str(a)) == quantity.parse(str(b))
    except ValueError:
        return False


def set_waiting(rendered: dict, live_set: dict | None, children: list[dict]) -> list[str]:
    """What keeps the applied DisaggregatedSet ``rendered`` from being rolled out and ready,
    given the live set and the live LeaderWorkerSets (any; those of the set are picked by its
    name label). Empty when it is."""
    name = dig(rendered, "metadata", "name", default="?")
    if live_set is None:
        return [f"DisaggregatedSet {name}: not in the cluster"]
    unobserved = _unobserved(live_set, "DisaggregatedSet")
    if unobserved:
        return [unobserved]
    roles = [r for r in dig(rendered, "spec", "roles", default=[]) if isinstance(r, dict)]
    mine = [c for c in children if dig(c, "metadata", "labels", DSET_NAME_LABEL) == name
            and dig(c, "metadata", "deletionTimestamp") is None]
    by_revision: dict[str, dict[str, dict]] = {}
    for child in mine:
        revision = dig(child, "metadata", "labels", DSET_REVISION_LABEL)
        role = dig(child, "metadata", "labels", DSET_ROLE_LABEL)
        if isinstance(revision, str) and isinstance(role, str):
            by_revision.setdefault(revision, {})[role] = child
    current = [rev for rev, found in sorted(by_revision.items())
               if all(r.get("name") in found and template_within(
                   dig(r, "spec", "leaderWorkerTemplate", default={}),
                   dig(found[r.get("name")], "spec", "leaderWorkerTemplate", default={})) for r in roles)]
    if not current:
        return [f"DisaggregatedSet {name}: its controller has not made the LeaderWorkerSets of the applied "
                "templates yet"]
    revision = current[0]
    waiting = []
    for role in roles:
        child = by_revision[revision][role.get("name")]
        want = _int(dig(role, "spec", "replicas"), 1)
        have = _int(dig(child, "spec", "replicas"), 1)
        if have < want:
            waiting.append(f"DisaggregatedSet {name}: role {role.get('name')} at {have}/{want} replicas of revision "
                           f"{revision}")
            continue
        why = lws_waiting(child)
        if why:
            waiting.append(why)
    for other, found in sorted(by_revision.items()):
        if other == revision:
            continue
        left = sum(max(_int(dig(c, "spec", "replicas"), 1), _int(dig(c, "status", "replicas")))
                   for c in found.values())
        if left:
            waiting.append(f"DisaggregatedSet {name}: rolling out, revision {other} still runs {left} group(s)")
    return waiting
