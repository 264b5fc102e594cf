"""How long a LeaderWorkerSet's name may be, from the names LeaderWorkerSet v0.10.0 derives
from it, and the refusal of a release (or a role's ``workload_name``) that is too long for
them, when the spec loads rather than when the StatefulSet controller refuses the pods.

What LeaderWorkerSet v0.10.0 (kubernetes-sigs/lws, tag v0.10.0) builds from a name ``N`` with
``replicas`` groups of ``size`` pods:

- ``N`` itself is a DNS-1035 label (pkg/webhooks/leaderworkerset_webhook.go:127-129);
- the leaders' StatefulSet is ``N`` (pkg/controllers/leaderworkerset_controller.go:846), its
  pods ``N-<group>``;
- with ``size`` > 1 each group has a workers' StatefulSet named after its leader pod,
  ``N-<group>`` (pkg/controllers/pod_controller.go:438), with pods ``N-<group>-<worker>``,
  workers numbered from 1 (pod_controller.go:444); with ``size`` 1 there is none
  (pod_controller.go:137-140);
- the StatefulSet controller labels every pod ``controller-revision-hash=<StatefulSet>-<hash>``,
  the hash up to :data:`manifesto.util.rules.REVISION_HASH` characters; a label value holds
  63.

So ``N`` may have at most ``63 - 1 - REVISION_HASH`` = 52 characters with ``size`` 1, and
``63 - 1 - REVISION_HASH - 1 - digits(replicas - 1)`` (51 less the digits of the last group
index) otherwise; the pod names and the Services (``N``, or ``N-<group>`` with
``subdomainPolicy: UniquePerReplica``) are never longer than that label. LWS's own
troubleshooting page (site/content/en/docs/troubleshooting/_index.md:52-66) gives
``51 - replicas // 10``, which assumes a hash shorter than 10 characters (one in four is
9 or fewer) and counts the group index one off: the derivation above is what the
controllers do, and is never more permissive for a worker StatefulSet.

A DisaggregatedSet ``S`` names each role's LeaderWorkerSet ``S-<slice>-<revision>-<role>``
(pkg/utils/disaggregatedset/utils.go:93-95; the revision 8 hex digits, utils.go:142-169; the
set renders no ``slices``, so the only slice is 0) and adds a Service ``<that>-prv``
(pkg/controllers/disaggregatedset/service_manager.go:147), which the bound above covers.
"""

from __future__ import annotations

from manifesto.resolve.failures import Where, fail
from manifesto.util import rules

__all__ = ["lws_name_limit", "set_child_name", "check_lws_names"]

#: Characters of the DisaggregatedSet controller's revision (utils.go:142, revisionLength).
SET_REVISION_CHARS = 8
#: The label value limit the StatefulSet controller's controller-revision-hash label meets.
LABEL_MAX = 63


def lws_name_limit(replicas: int, size: int) -> int:
    """The longest LeaderWorkerSet name whose StatefulSets' pods can all be labelled."""
    limit = LABEL_MAX - 1 - rules.REVISION_HASH
    if size > 1:
        limit -= 1 + len(str(max(replicas - 1, 0)))
    return limit


def set_child_name(set_name: str, role: str, slice_index: int = 0) -> str:
    """The LeaderWorkerSet the DisaggregatedSet controller creates for ``role``, with the
    revision written as ``<revision>`` of its real length."""
    return f"{set_name}-{slice_index}-{'x' * SET_REVISION_CHARS}-{role}"


def _shown(set_name: str, role: str) -> str:
    return f"{set_name}-0-<revision>-{role}"


def check_lws_names(spec, roles, instance: str, pd_set: str | None, where: Where) -> None:
    """Refuse a name that makes a LeaderWorkerSet the StatefulSet controller cannot label
    the pods of, naming the field to shorten and how long it may be."""
    prefix = len(instance) - len(spec.release)  # the user prefix and its '-', when the cluster adds one
    for i, role in enumerate(roles):
        if role.workload_kind != "LeaderWorkerSet":
            continue
        lay = role.layout
        limit = lws_name_limit(lay.replicas, lay.nodes)
        shape = (f"{lay.replicas} group{'s' if lay.replicas != 1 else ''} of {lay.nodes} pod{'s' if lay.nodes != 1 else ''}")
        why = (f"the StatefulSet controller labels each pod controller-revision-hash=<StatefulSet>-<hash of up to "
               f"{rules.REVISION_HASH} characters> in 63, so with {shape} a LeaderWorkerSet name may have at most "
               f"{limit} characters (LeaderWorkerSet v0.10.0)")
        if pd_set is not None:
            name = set_child_name(pd_set, role.name)
            if len(name) <= limit:
                continue
            most = limit - (len(name) - len(spec.release))
            if most < 1:
                _role_too_long(spec, i, role.name, name, _shown(pd_set, role.name), limit, why, where)
            raise fail(f"release '{spec.release}' is too long for DisaggregatedSet {pd_set}: its controller names role "
                       f"{role.name}'s LeaderWorkerSet {_shown(pd_set, role.name)} ({len(name)} characters); {why}. "
                       f"The release may have at most {max(most, 0)} characters"
                       f"{' with the user prefix' if prefix else ''} (it has {len(spec.release)}); a shorter role "
                       "name leaves it more", where, ("release",))
        name = role.workload_name
        if len(name) <= limit:
            continue
        explicit = name != f"{instance}-{role.name}"
        if explicit:
            given = spec.roles[i].workload_name
            raise fail(f"workload_name '{given}' makes LeaderWorkerSet {name} ({len(name)} characters); {why}. "
                       f"roles[{i}].workload_name may have at most {max(limit - (len(name) - len(given)), 0)} "
                       f"characters (it has {len(given)})", where, ("roles", i, "workload_name"))
        most = limit - (len(name) - len(spec.release))
        if most < 1:
            _role_too_long(spec, i, role.name, name, name, limit, why, where)
        raise fail(f"release '{spec.release}' is too long for role {role.name}'s LeaderWorkerSet {name} "
                   f"({len(name)} characters); {why}. The release may have at most {max(most, 0)} characters"
                   f"{' with the user prefix' if prefix else ''} (it has {len(spec.release)}); a shorter role name "
                   "leaves it more", where, ("release",))


def _role_too_long(spec, i: int, role: str, name: str, shown: str, limit: int, why: str, where: Where) -> None:
    """The role's own name leaves the release no room at all: blame the role name."""
    most = limit - (len(name) - len(role))
    raise fail(f"role name '{role}' makes LeaderWorkerSet {shown} ({len(name)} characters); {why}. With release "
               f"'{spec.release}', roles[{i}].name may have at most {max(most, 0)} characters (it has {len(role)})",
               where, ("roles", i, "name"))
