"""Parallel layout: GPUs per pod, DP rank placement, HTTP endpoints and ports.

Each engine replica (DP rank) uses tp x pp GPUs and either fits on one node or spans
whole nodes. GPUs per pod = tp x pp x dp / lws.size (disabled DP counts as one).
"""

from __future__ import annotations

import msgspec

from manifesto.errors import ResolveError
from manifesto.resolve.plan import Layout

__all__ = ["LayoutInput", "plan_layout", "PUBLIC_BASE", "PROXIED_BASE"]

PUBLIC_BASE = 8000  # vLLM (or the P/D sidecar in front of it) for local rank i: 8000 + i
PROXIED_BASE = 8200  # vLLM behind the P/D sidecar: 8200 + i


class LayoutInput(msgspec.Struct, frozen=True, kw_only=True):
    """What one role's layout is planned from: the spec's parallelism and pod grid, the GPU,
    how the role is routed and what the platform does with wide DP ranks."""

    tp: int
    pp: int
    dp: int | bool  # False: data parallelism off; a number (even 1): on with that many ranks
    ep: bool
    nodes: int  # lws.size: pods per replica
    replicas: int  # lws.replicas
    gpus_per_node: int  # the accelerator's
    routed: bool  # the endpoint picker routes to the role (DP ranks then serve HTTP each: external DP)
    proxied: bool  # the P/D sidecar sits in front of vLLM (vLLM moves to the proxied ports)
    # The platform gives each routed DP rank wider than one pod its own group of pods
    # (Kubernetes: one LeaderWorkerSet group per rank), so the layout describes one rank per
    # group (``nodes`` = the rank's pods, ``replicas`` = ranks x replicas).
    rank_groups: bool = False


def plan_layout(given: LayoutInput) -> Layout:
    """The role's layout; a ResolveError (no path: the caller places it at the role's
    ``parallelism``) when the numbers do not tile the pods."""
    tp, pp, dp, ep, nodes, replicas = given.tp, given.pp, given.dp, given.ep, given.nodes, given.replicas
    gpus_per_node, routed, proxied = given.gpus_per_node, given.routed, given.proxied
    where = ""
    dp_enabled = dp is not False
    dp_size = int(dp) if dp_enabled else 1
    total = tp * pp * dp_size
    if total % nodes:
        raise ResolveError(
            f"tp x pp x dp = {tp} x {pp} x {dp_size} = {total} GPUs do not divide evenly "
            f"over lws.size = {nodes} pods", path=where)
    per_pod = total // nodes
    if per_pod > gpus_per_node:
        raise ResolveError(
            f"{per_pod} GPUs per pod (tp x pp x dp / lws.size = {total} / {nodes}) exceed the "
            f"accelerator's gpus_per_node = {gpus_per_node}; raise lws.size to spread the role "
            "over more nodes", path=where)
    rank_gpus = tp * pp
    if rank_gpus <= per_pod:
        if per_pod % rank_gpus:
            raise ResolveError(
                f"a pod has {per_pod} GPUs, which is not a whole number of DP ranks of "
                f"tp x pp = {rank_gpus} GPUs", path=where)
        ranks_per_node, nodes_per_rank = per_pod // rank_gpus, 1
    else:
        if rank_gpus % per_pod:
            raise ResolveError(
                f"one DP rank needs tp x pp = {rank_gpus} GPUs, which is not a whole number of "
                f"pods of {per_pod} GPUs; a rank must fit one node or span whole nodes", path=where)
        ranks_per_node, nodes_per_rank = 1, rank_gpus // per_pod
    dp_mode = "none" if dp_size == 1 else ("external" if routed else "internal")
    groups = 1
    if given.rank_groups and dp_mode == "external" and nodes_per_rank > 1:
        # One group per rank: its first pod serves HTTP, the rest run headless workers.
        groups, nodes, replicas = dp_size, nodes_per_rank, replicas * dp_size
    launch, serving = _launch(dp_mode, ranks_per_node, nodes_per_rank, nodes)
    ports_per_node = ranks_per_node if dp_mode == "external" else 1
    public = tuple(PUBLIC_BASE + i for i in range(ports_per_node))
    backend = tuple((PROXIED_BASE if proxied else PUBLIC_BASE) + i for i in range(ports_per_node))
    return Layout(
        tp=tp, pp=pp, dp=dp_size, dp_enabled=dp_enabled and dp_size > 1, ep=ep, nodes=nodes,
        replicas=replicas, gpus_per_pod=per_pod, gpus_per_node=gpus_per_node, rank_gpus=rank_gpus,
        ranks_per_node=ranks_per_node, nodes_per_rank=nodes_per_rank, dp_mode=dp_mode,
        launch=launch, serving_nodes=serving, public_ports=public, backend_ports=backend, rank_groups=groups,
    )


def _launch(dp_mode: str, ranks_per_node: int, nodes_per_rank: int, nodes: int) -> tuple[str, tuple[int, ...]]:
    if dp_mode == "none":
        return "single", (0,)
    if dp_mode == "internal":
        return "internal", (0,)
    first_nodes = tuple(range(0, nodes, nodes_per_rank))
    if ranks_per_node > 1:
        return "multi-port", first_nodes
    return "external-rank", first_nodes
