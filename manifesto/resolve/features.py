"""Feature contracts: typed serving features, their implications and requirements.

A feature may imply others (closed transitively) and require others (checked after
closing). The registry itself must be acyclic in its implications; ``check_registry``
rejects a cycle and prints the chain.
"""

from __future__ import annotations

from typing import NamedTuple

from manifesto.errors import ResolveError

__all__ = ["Feature", "REGISTRY", "check_registry", "close"]


class Feature(NamedTuple):
    name: str
    implies: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    summary: str = ""


REGISTRY: dict[str, Feature] = {
    f.name: f
    for f in (
        Feature("llm-d", summary="llm-d endpoint picker routes requests to this role"),
        Feature("prefill-decode", implies=("llm-d",), requires=("kv-connector",),
                summary="prefill and decode run in separate pools and hand KV over"),
        Feature("routing-proxy", implies=("llm-d", "prefill-decode"),
                summary="a P/D sidecar fronts vLLM and calls the prefill pool first"),
        Feature("data-parallel", summary="several engine replicas (DP ranks) form one group"),
        Feature("external-dp", implies=("data-parallel", "llm-d"),
                summary="each DP rank has its own HTTP endpoint; llm-d balances between them"),
        Feature("internal-dp", implies=("data-parallel",),
                summary="one HTTP endpoint on node 0; vLLM balances between ranks"),
        Feature("expert-parallel", summary="MoE experts sharded across the DP x TP ranks"),
        Feature("pipeline-parallel", summary="layers split into pipeline stages"),
        Feature("multi-node", summary="one replica spans several nodes (LeaderWorkerSet)"),
        Feature("kv-connector", summary="a vLLM KV-transfer connector is configured"),
    )
}


def check_registry(registry: dict[str, Feature]) -> None:
    """Reject unknown names and implication cycles (``a -> b -> a``)."""
    for feat in registry.values():
        for dep in feat.implies + feat.requires:
            if dep not in registry:
                raise ResolveError(f"feature '{feat.name}' names unknown feature '{dep}'")
    state: dict[str, int] = {}

    def visit(name: str, chain: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = chain[chain.index(name):] + [name]
            raise ResolveError(
                "feature implication cycle: " + " -> ".join(cycle)
                + ". To fix this, remove one of these implications from the registry."
            )
        state[name] = 1
        for dep in registry[name].implies:
            visit(dep, chain + [name])
        state[name] = 2

    for name in sorted(registry):
        visit(name, [])


def close(seeds: set[str], registry: dict[str, Feature] = REGISTRY) -> tuple[str, ...]:
    """Close ``seeds`` under implication and check every requirement; sorted result."""
    out: set[str] = set()
    todo = sorted(seeds)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        todo.extend(registry[name].implies)
    for name in sorted(out):
        missing = [r for r in registry[name].requires if r not in out]
        if missing:
            raise ResolveError(f"feature '{name}' requires {', '.join(missing)}")
    return tuple(sorted(out))
