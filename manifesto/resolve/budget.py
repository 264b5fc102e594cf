"""GPU budget of an artifact: GPUs, nodes and pods per role and in total, and cost when the
cluster profile prices its accelerator. Pure function of the resolved roles."""

from __future__ import annotations

import math

from manifesto.resolve.plan import Accelerator, Budget, RoleBudget

__all__ = ["plan_budget", "role_budget"]


def role_budget(role, accel: Accelerator, whole_nodes: bool = False) -> RoleBudget:
    """A pod sits on one node; on Kubernetes pods that leave room on a node may share it, so a
    role needs ceil(pods / pods per node) nodes. ``whole_nodes``: each pod is a node of its own
    (a Slurm job step per node)."""
    lay = role.layout
    pods = lay.nodes * lay.replicas
    gpus = lay.gpus_per_pod * pods
    per_node = 1 if whole_nodes or not lay.gpus_per_pod else max(accel.gpus_per_node // lay.gpus_per_pod, 1)
    nodes = math.ceil(pods / per_node)
    cost = None if accel.hourly_price is None else round(gpus * accel.hourly_price, 4)
    return RoleBudget(role=role.name, gpus=gpus, nodes=nodes, pods=pods, hourly_cost=cost)


def plan_budget(roles, accel: Accelerator, whole_nodes: bool = False) -> Budget:
    per_role = tuple(role_budget(r, accel, whole_nodes) for r in roles)
    gpus = sum(b.gpus for b in per_role)
    cost = None if accel.hourly_price is None else round(gpus * accel.hourly_price, 4)
    return Budget(roles=per_role, gpus=gpus, nodes=sum(b.nodes for b in per_role), pods=sum(b.pods for b in per_role),
                  accelerator=accel.name, hourly_price=accel.hourly_price, hourly_cost=cost)
