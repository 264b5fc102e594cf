"""Prefill/decode as one DisaggregatedSet (LeaderWorkerSet 0.10): when a P/D spec renders as
one, and the rules that keep its two roles a matching pair.

The choice (docs/decisions.md, "Prefill and decode as one DisaggregatedSet"): the spec's
``pd_workload`` says ``lws-pair``, ``disaggregatedset`` or ``auto``; ``auto`` picks the
DisaggregatedSet only when the cluster profile declares ``leaderworkerset.version`` 0.10 or
newer and every role is a LeaderWorkerSet, so Deployment-based P/D and every cluster that
declares nothing keep the pair. Slurm has no Kubernetes workloads and ignores the choice.

Rules of vLLM 0.33.0's NIXL connector, checked for every P/D spec whatever renders it:

- the larger TP size of two roles that hand KV caches over must be a multiple of the smaller
  (``TransferTopology.tp_ratio`` in vllm/distributed/kv_transfer/kv_connector/utils.py
  asserts it on the first handshake; the decode side then waits for KV that never comes).

And for a DisaggregatedSet, whose one object rolls both roles out together: one vLLM image,
and the same KV connector settings (``kv_connector``, ``kv_connector_module_path``,
``kv_connector_extra_config``); each role keeps its own size, parallelism, resources and its
other NIXL settings (``kv_role``, ``kv_buffer_device``, ``kv_load_failure_policy``, env).
"""

from __future__ import annotations

import json
import re

from manifesto.resolve.failures import Where, fail

__all__ = ["DSET_MIN_VERSION", "MAX_ROLES", "SHARED_CONNECTOR_KEYS", "lws_version", "check_tp_ratios", "plan_pd_set"]

#: The LeaderWorkerSet release that serves disaggregatedset.x-k8s.io/v1.
DSET_MIN_VERSION = (0, 10)
#: kv_transfer_config keys both roles of a DisaggregatedSet must agree on.
SHARED_CONNECTOR_KEYS = ("kv_connector", "kv_connector_module_path", "kv_connector_extra_config")
#: The most roles a DisaggregatedSet holds: ``+kubebuilder:validation:MaxItems=10`` on
#: ``spec.roles`` (api/disaggregatedset/v1/disaggregatedset_types.go:109 at v0.10.0; the CRD's
#: ``maxItems: 10``).
MAX_ROLES = 10
_VERSION = re.compile(r"^v?([0-9]+)\.([0-9]+)")


def lws_version(cluster) -> tuple[int, int] | None:
    """(major, minor) of the cluster's declared LeaderWorkerSet release, or None."""
    install = getattr(cluster, "leaderworkerset", None)
    if install is None:
        return None
    m = _VERSION.match(install.version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _connector_roles(spec) -> list[tuple[int, object]]:
    return [(i, r) for i, r in enumerate(spec.roles) if (r.kv_transfer_config or {}).get("kv_connector")]


def check_tp_ratios(spec, where: Where) -> None:
    """Refuse two KV-transferring roles of a P/D spec whose TP sizes vLLM cannot map onto each other."""
    if spec.topology != "pd":
        return
    roles = _connector_roles(spec)
    for n, (i, a) in enumerate(roles):
        for j, b in roles[n + 1:]:
            small, large = sorted((a.parallelism.tp, b.parallelism.tp))
            if large % small:
                raise fail(f"roles {a.name} (tp {a.parallelism.tp}) and {b.name} (tp {b.parallelism.tp}) cannot hand "
                           f"KV caches to each other: vLLM 0.33.0's NIXL connector needs the larger TP size to be a "
                           f"multiple of the smaller ({large} is not a multiple of {small}); the decode pods would "
                           "wait for KV that never arrives", where, ("roles", j, "parallelism", "tp"))


def _wants(spec, cluster, kinds: list[str], where: Where) -> bool:
    choice = spec.pd_workload
    if cluster.platform == "slurm" or choice == "lws-pair":
        return False
    if spec.topology != "pd":
        if choice == "disaggregatedset":
            raise fail("a DisaggregatedSet holds prefill and decode roles; it needs topology: pd", where,
                       ("pd_workload",))
        return False
    version = lws_version(cluster)
    new_enough = version is not None and version >= DSET_MIN_VERSION
    if choice == "auto":
        return new_enough and all(k == "LeaderWorkerSet" for k in kinds)
    if not new_enough:
        declared = f"declares LeaderWorkerSet {cluster.leaderworkerset.version}" if version else \
            "declares no leaderworkerset.version"
        raise fail(f"a DisaggregatedSet needs LeaderWorkerSet 0.10 or newer, and cluster '{cluster.name}' {declared}; "
                   "set leaderworkerset.version in the cluster profile, or pd_workload: lws-pair", where,
                   ("pd_workload",))
    for i, kind in enumerate(kinds):
        if kind != "LeaderWorkerSet":
            raise fail(f"role {spec.roles[i].name} renders as a {kind}, and every role of a DisaggregatedSet is a "
                       "LeaderWorkerSet; set workload: leaderworkerset on it, or pd_workload: lws-pair", where,
                       ("roles", i, "workload"))
    return True


def _shown(value) -> str:
    return json.dumps(value, sort_keys=True) if value is not None else "unset"


def _check_pair(spec, roles, instance: str, where: Where) -> None:
    first = roles[0]
    for i, role in enumerate(roles[1:], start=1):
        if role.image != first.image:
            raise fail(f"roles {first.name} and {role.name} run different images ({first.image}, {role.image}); "
                       "both roles of a DisaggregatedSet run one vLLM image", where, ("roles", i))
    kv = [spec.roles[i].kv_transfer_config or {} for i in range(len(roles))]
    for key in SHARED_CONNECTOR_KEYS:
        for i in range(1, len(roles)):
            if kv[i].get(key) != kv[0].get(key):
                raise fail(f"kv_transfer_config.{key} is {_shown(kv[i].get(key))} on role {roles[i].name} but "
                           f"{_shown(kv[0].get(key))} on role {roles[0].name}; both roles of a DisaggregatedSet use "
                           "the same KV connector settings (a mixed pair fails the NIXL handshake)", where,
                           ("roles", i, "kv_transfer_config", key))


def plan_pd_set(spec, cluster, roles, instance: str, where: Where) -> str | None:
    """The DisaggregatedSet's name when ``spec`` on ``cluster`` renders as one, else None
    (:func:`check_tp_ratios` runs first, before the roles are resolved)."""
    if not _wants(spec, cluster, [r.workload_kind for r in roles], where):
        return None
    if len(roles) > MAX_ROLES:
        raise fail(f"a DisaggregatedSet holds at most {MAX_ROLES} roles (LeaderWorkerSet v0.10.0's CRD: spec.roles "
                   f"maxItems {MAX_ROLES}), and this spec has {len(roles)}; the API server would refuse the set. "
                   "Set pd_workload: lws-pair to run each role as its own LeaderWorkerSet, or use fewer roles",
                   where, ("roles", MAX_ROLES))
    _check_pair(spec, roles, instance, where)
    return instance
