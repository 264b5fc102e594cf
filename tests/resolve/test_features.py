"""Feature contracts: the registry, transitive closure, requirements, cycle rejection, and the
features and backends that resolution derives from a role."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kit
from kit import plan_of
from manifesto.errors import ResolveError
from manifesto.resolve.features import REGISTRY, Feature, check_registry, close

REPO = kit.REPO_ROOT
CLUSTERS = REPO / "clusters"


# ---- the registry ---------------------------------------------------------------------------


def test_bundled_registry_is_valid():
    check_registry(REGISTRY)
    for name, feat in REGISTRY.items():
        assert feat.name == name
        assert feat.summary, name


def test_spec_named_features_exist():
    assert {"data-parallel", "expert-parallel", "prefill-decode", "llm-d"} <= set(REGISTRY)


def _implied(name: str, registry=REGISTRY) -> set[str]:
    out, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n not in out:
            out.add(n)
            todo += registry[n].implies
    return out


@pytest.mark.parametrize(("seed", "expected"), [
    ("prefill-decode", {"prefill-decode", "llm-d"}),
    ("external-dp", {"external-dp", "data-parallel", "llm-d"}),
    ("internal-dp", {"internal-dp", "data-parallel"}),
])
def test_implications(seed, expected):
    assert _implied(seed) == expected


def test_pd_implies_llm_d_and_routing_proxy_implies_pd():
    assert close({"routing-proxy", "kv-connector"}) == ("kv-connector", "llm-d", "prefill-decode", "routing-proxy")


def test_requirement_checked_after_closing():
    with pytest.raises(ResolveError) as info:
        close({"routing-proxy"})  # implies prefill-decode, which requires kv-connector
    assert info.value.message == "feature 'prefill-decode' requires kv-connector"


def _satisfiable(seeds: set[str]) -> bool:
    closed = set().union(*(_implied(s) for s in seeds)) if seeds else set()
    return all(r in closed for n in closed for r in REGISTRY[n].requires)


@settings(max_examples=200, deadline=None)
@given(st.sets(st.sampled_from(sorted(REGISTRY))))
def test_close_is_the_transitive_closure(seeds):
    if not _satisfiable(seeds):
        with pytest.raises(ResolveError, match=r"^feature '[a-z-]+' requires "):
            close(seeds)
        return
    closed = close(seeds)
    assert list(closed) == sorted(set(closed))  # sorted, no duplicates
    assert set(seeds) <= set(closed)
    assert set(closed) == set().union(*(_implied(s) for s in seeds)) if seeds else closed == ()
    for name in closed:  # closed under implication, requirements met
        assert set(REGISTRY[name].implies) <= set(closed)
        assert set(REGISTRY[name].requires) <= set(closed)
    assert close(set(closed)) == closed  # idempotent


# ---- crafted registries ---------------------------------------------------------------------


def _registry(*features: Feature) -> dict[str, Feature]:
    return {f.name: f for f in features}


@pytest.mark.parametrize(("registry", "message"), [
    (_registry(Feature("a", implies=("b",)), Feature("b", implies=("c",)), Feature("c", implies=("a",))),
     "feature implication cycle: a -> b -> c -> a. To fix this, remove one of these implications from the registry."),
    (_registry(Feature("a", implies=("a",))),
     "feature implication cycle: a -> a. To fix this, remove one of these implications from the registry."),
    (_registry(Feature("root", implies=("x",)), Feature("x", implies=("y",)), Feature("y", implies=("x",))),
     "feature implication cycle: x -> y -> x. To fix this, remove one of these implications from the registry."),
    (_registry(Feature("a", implies=("nope",))), "feature 'a' names unknown feature 'nope'"),
    (_registry(Feature("a", requires=("nope",))), "feature 'a' names unknown feature 'nope'"),
], ids=["three-cycle", "self-cycle", "cycle-below-root", "unknown-implied", "unknown-required"])
def test_check_registry_rejects(registry, message):
    with pytest.raises(ResolveError) as info:
        check_registry(registry)
    assert info.value.message == message


def test_check_registry_accepts_diamonds_and_mutual_requirements():
    check_registry(_registry(
        Feature("top", implies=("left", "right")), Feature("left", implies=("bottom",)),
        Feature("right", implies=("bottom",)), Feature("bottom"),
        # requirements are checks, not implications: a mutual pair is not a cycle
        Feature("p", requires=("q",)), Feature("q", requires=("p",)),
    ))


def test_cycle_detected_whatever_the_declaration_order():
    names = ["a", "b", "c", "d"]
    for order in itertools.permutations(names):
        registry = {n: Feature(n, implies=(names[(names.index(n) + 1) % 4],)) for n in order}
        with pytest.raises(ResolveError, match="feature implication cycle: "):
            check_registry(registry)


def test_close_with_a_crafted_registry():
    registry = _registry(Feature("a", implies=("b",)), Feature("b", implies=("c",), requires=("d",)),
                         Feature("c"), Feature("d"))
    assert close({"a", "d"}, registry) == ("a", "b", "c", "d")
    with pytest.raises(ResolveError, match="^feature 'b' requires d$"):
        close({"a"}, registry)


# ---- features and backends that resolution derives ------------------------------------------




def _plan(tmp_path, body: str, cluster: Path = CLUSTERS / "example-stateless-b200.yaml"):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(body))
    return plan_of(path, cluster)[0]


def _role(body: str, routing: str = "disabled", topology: str = "aggregated") -> str:
    return f"release: demo\ntopology: {topology}\nmodel: {{id: org/model}}\nrouting: {{kind: {routing}}}\n" \
           f"roles:\n{textwrap.indent(textwrap.dedent(body), '  ')}"


def test_direct_vllm_with_dp_uses_internal_dp(tmp_path):
    role = _plan(tmp_path, _role("- name: decode\n  parallelism: {tp: 1, dp: 4}\n")).roles[0]
    assert role.features == ("data-parallel", "internal-dp")
    assert role.layout.dp_mode == "internal"
    assert role.routing_label is None


def test_load_aware_with_dp_uses_external_dp_and_llm_d(tmp_path):
    plan = _plan(tmp_path, _role("- name: decode\n  parallelism: {tp: 1, dp: 4}\n", routing="load_aware"))
    role = plan.roles[0]
    assert role.features == ("data-parallel", "external-dp", "llm-d")
    assert role.layout.dp_mode == "external"
    assert plan.routing.kind == "load_aware"
    assert role.routing_label == "decode"


def test_no_features_for_a_single_gpu_direct_role(tmp_path):
    role = _plan(tmp_path, _role("- name: decode\n")).roles[0]
    assert (role.features, role.backends) == ((), ())


def test_pd_roles(tmp_path):
    plan = _plan(tmp_path, _role("""\
        - name: prefill
          kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
        - name: decode
          kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
          env: {VLLM_NIXL_SIDE_CHANNEL_HOST: 10.0.0.1}
        """, routing="pd", topology="pd"))
    prefill, decode = plan.roles
    assert prefill.features == ("kv-connector", "llm-d", "prefill-decode")
    assert decode.features == ("kv-connector", "llm-d", "prefill-decode", "routing-proxy")
    assert (prefill.proxy, decode.proxy) == (False, True)
    assert (prefill.routing_label, decode.routing_label) == ("prefill", "decode")
    for role in plan.roles:
        assert role.backends == (("kv-connector", "NixlConnector"),)
    env = {r.name: {v.name: v for v in r.env} for r in plan.roles}
    side = env["prefill"]["VLLM_NIXL_SIDE_CHANNEL_HOST"]
    assert (side.field_ref, side.value, side.source) == ("status.podIP", None, "feature kv-connector (NIXL)")
    explicit = env["decode"]["VLLM_NIXL_SIDE_CHANNEL_HOST"]  # the role's own value wins
    assert (explicit.field_ref, explicit.value, explicit.source) == (None, "10.0.0.1", "role decode env")


def test_other_connectors_are_kept_and_not_treated_as_nixl(tmp_path):
    role = _plan(tmp_path, _role("""\
        - name: decode
          kv_transfer_config: {kv_connector: LMCacheConnectorV1, kv_role: kv_both}
        """)).roles[0]
    assert role.backends == (("kv-connector", "LMCacheConnectorV1"),)
    assert "kv-connector" in role.features
    assert "VLLM_NIXL_SIDE_CHANNEL_HOST" not in {v.name for v in role.env}
    kv = [a for a in role.args if a.flag == "--kv-transfer-config"]
    assert kv and '"kv_connector":"LMCacheConnectorV1"' in kv[0].value


@pytest.mark.parametrize(("vllm", "backend"), [("{}", "deepep"), ("{all2all_backend: pplx}", "pplx")])
def test_expert_parallel_reports_the_all2all_backend(tmp_path, vllm, backend):
    role = _plan(tmp_path, _role(f"- name: decode\n  parallelism: {{tp: 1, dp: 4, ep: true}}\n  vllm: {vllm}\n"))
    role = role.roles[0]
    assert "expert-parallel" in role.features
    assert ("all2all", backend) in role.backends


def test_multi_node_and_pipeline_features(tmp_path):
    role = _plan(tmp_path, _role("- name: decode\n  lws: {size: 2}\n  parallelism: {tp: 8, pp: 2}\n")).roles[0]
    assert role.features == ("multi-node", "pipeline-parallel")
    assert role.workload_kind == "LeaderWorkerSet"


def test_imex_claim_when_the_cluster_configures_a_compute_domain(tmp_path):
    cluster = tmp_path / "imex.yaml"
    cluster.write_text(textwrap.dedent("""\
        name: imex
        accelerators:
          default: gb200
          profiles:
            gb200:
              gpus_per_node: 4
              allocation: {extended_resource: {resource_name: nvidia.com/gpu}}
              compute_domain: {resource_claim_template_name: demo-imex-channel}
        """))
    plan = _plan(tmp_path, _role("- name: decode\n  lws: {size: 2}\n  parallelism: {tp: 1, dp: 8, ep: true}\n"),
                 cluster)
    assert [(c.name, c.template) for c in plan.roles[0].claims] == [("compute-domain-channel", "demo-imex-channel")]
    without = _plan(tmp_path, _role("- name: decode\n  parallelism: {tp: 1, dp: 4, ep: true}\n"))
    assert without.roles[0].claims == ()
