"""DisaggregatedSet scaling for the idle-shutdown controller.

Shipped beside ``idle_controller.py`` in the controller's ConfigMap, only for an instance
whose prefill and decode roles are one DisaggregatedSet, and run in its place
(``python /opt/manifesto/idle_dset.py``): it imports the controller from the same
directory, teaches its Kubernetes client to scale a DisaggregatedSet, and runs the
controller's ``main()``. Every other workload is scaled exactly as the controller does it,
and the controller's own text stays the same for every instance.

A DisaggregatedSet (disaggregatedset.x-k8s.io/v1, LeaderWorkerSet 0.10) has no
``spec.replicas``: each role has its own at ``spec.roles[i].spec.replicas``, and a JSON
merge patch would replace the whole roles list. So a set is scaled with one JSON patch that
tests each role's name at its position and sets every role's replicas, applied atomically
by the API server: both roles go to zero together, and a failed shutdown puts both back to
their previous counts together (the set's validation also wants every role at zero or
none).

Standard library only, like the controller; importing it has no side effects.
"""

from __future__ import annotations

import idle_controller as base  # the controller file beside this one (the script's directory is on sys.path)

DSET_PREFIX = "/apis/disaggregatedset.x-k8s.io/"
JSON_PATCH = "application/json-patch+json"


class RoleReplicas(tuple):
    """((role, replicas), ...) of one DisaggregatedSet, in the order of its spec.roles."""

    def __str__(self) -> str:
        return "(" + ", ".join(f"{role} {count}" for role, count in self) + ")"


def is_set(workload) -> bool:
    return workload.path.startswith(DSET_PREFIX)


class Kube(base.Kube):
    """The controller's client, plus DisaggregatedSets: replicas per role, scaled in one patch."""

    def roles(self, workload) -> RoleReplicas:
        obj = self.request("GET", workload.path)
        roles = ((obj or {}).get("spec") or {}).get("roles") if isinstance(obj, dict) else None
        if not isinstance(roles, list) or not roles:
            raise base.KubeError(f"GET {workload.path}: spec.roles is not a list of roles")
        out = []
        for i, role in enumerate(roles):
            name = role.get("name") if isinstance(role, dict) else None
            spec = role.get("spec") if isinstance(role, dict) else None
            count = spec.get("replicas", 1) if isinstance(spec, dict) else None
            if not isinstance(name, str) or not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise base.KubeError(f"GET {workload.path}: spec.roles[{i}] has no name or replica count")
            out.append((name, count))
        return RoleReplicas(out)

    def replicas(self, workload):
        if not is_set(workload):
            return super().replicas(workload)
        return self.roles(workload)

    def scale(self, workload, replicas) -> None:
        if not is_set(workload):
            return super().scale(workload, replicas)
        live = self.roles(workload)
        wanted = dict(replicas) if isinstance(replicas, RoleReplicas) else {role: replicas for role, _ in live}
        ops: list[dict] = []
        for i, (role, _) in enumerate(live):
            if role not in wanted:
                raise base.KubeError(f"{workload.name}: role {role} appeared since the replicas were read")
            # The test fails the whole patch if the roles moved since they were read.
            ops.append({"op": "test", "path": f"/spec/roles/{i}/name", "value": role})
            ops.append({"op": "add", "path": f"/spec/roles/{i}/spec/replicas", "value": wanted[role]})
        self.request("PATCH", workload.path, ops, JSON_PATCH)
        return None


def main() -> None:
    base.Kube = Kube  # the controller builds its client from this name
    base.main()


if __name__ == "__main__":
    main()
