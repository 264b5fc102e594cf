"""Parallel layout: GPUs per pod, DP rank placement, HTTP endpoints and ports.

The property tests compare ``plan_layout`` with an independent model: lay the replica's
GPUs out in order, pod after pod, and the DP ranks in order over them. A layout is valid
exactly when every pod fits the node and every rank either sits inside one pod or covers
whole pods; the HTTP endpoints are node 0 (direct vLLM) or each rank's first pod (llm-d).
"""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import kit
from kit import plan_of, scrub
from manifesto.errors import ResolveError
from manifesto.resolve.layout import PROXIED_BASE, PUBLIC_BASE, LayoutInput, plan_layout

REPO = kit.REPO_ROOT


def reference(tp, pp, dp, nodes, gpus_per_node):
    """None when the layout is impossible, else (per_pod, rank first pods, ranks starting on each pod)."""
    dp_size = dp if dp is not False else 1
    total = tp * pp * dp_size
    if total % nodes:
        return None
    per_pod = total // nodes
    if per_pod > gpus_per_node:
        return None
    rank = tp * pp
    firsts = []
    for r in range(dp_size):
        start, end = r * rank, (r + 1) * rank  # GPU indices [start, end)
        first_pod, last_pod = start // per_pod, (end - 1) // per_pod
        inside_one = first_pod == last_pod
        whole_pods = start % per_pod == 0 and end % per_pod == 0
        if not (inside_one or whole_pods):
            return None
        firsts.append(first_pod)
    starts = {p: firsts.count(p) for p in set(firsts)}
    return per_pod, firsts, starts


SIZES = st.sampled_from([1, 2, 3, 4, 6, 8, 16])
LAYOUTS = st.fixed_dictionaries({
    "tp": SIZES, "pp": st.sampled_from([1, 2, 3, 4]),
    "dp": st.one_of(st.just(False), st.sampled_from([1, 2, 3, 4, 6, 8, 16, 32])),
    "ep": st.booleans(), "nodes": st.sampled_from([1, 2, 3, 4, 8, 16]), "replicas": st.integers(1, 4),
    "gpus_per_node": st.sampled_from([1, 2, 4, 8]), "routed": st.booleans(), "proxied": st.booleans(),
})


@st.composite
def valid_layouts(draw):
    """Layouts built to be valid: k ranks fill each pod, or each rank covers m whole pods."""
    gpus_per_node = draw(st.sampled_from([1, 2, 4, 8]))
    pp = draw(st.sampled_from([1, 2]))
    if draw(st.booleans()):
        tp = draw(st.sampled_from([t for t in (1, 2, 3, 4, 8) if t * pp <= gpus_per_node] or [1]))
        pp = pp if tp * pp <= gpus_per_node else 1
        k = draw(st.integers(1, gpus_per_node // (tp * pp)))
        nodes = draw(st.sampled_from([1, 2, 3, 4, 8]))
        dp = k * nodes
    else:
        per_pod = draw(st.sampled_from([g for g in (1, 2, 4, 8) if g <= gpus_per_node]))
        m = draw(st.sampled_from([2, 3, 4]))
        pp = pp if (per_pod * m) % pp == 0 else 1
        tp = per_pod * m // pp
        ranks = draw(st.sampled_from([1, 2, 4]))
        nodes, dp = m * ranks, ranks
    if dp == 1 and draw(st.booleans()):
        dp = False
    return {"tp": tp, "pp": pp, "dp": dp, "ep": draw(st.booleans()), "nodes": nodes,
            "replicas": draw(st.integers(1, 3)), "gpus_per_node": gpus_per_node,
            "routed": draw(st.booleans()), "proxied": draw(st.booleans())}


def _layout(kw):
    return plan_layout(LayoutInput(**kw))


@settings(max_examples=600, deadline=None)
@given(st.one_of(LAYOUTS, valid_layouts()))
@example({"tp": 1, "pp": 1, "dp": 16, "ep": True, "nodes": 4, "replicas": 1, "gpus_per_node": 4,
          "routed": True, "proxied": True})
@example({"tp": 16, "pp": 1, "dp": 2, "ep": False, "nodes": 8, "replicas": 2, "gpus_per_node": 4,
          "routed": True, "proxied": False})
def test_layout_matches_reference(kw):
    if kw["proxied"]:
        kw = {**kw, "routed": True}  # only a routed role sits behind the P/D proxy
    ref = reference(kw["tp"], kw["pp"], kw["dp"], kw["nodes"], kw["gpus_per_node"])
    if ref is None:
        with pytest.raises(ResolveError):
            _layout(kw)
        return
    lay = _layout(kw)
    per_pod, firsts, starts = ref
    dp_size = kw["dp"] if kw["dp"] is not False else 1

    # GPUs
    assert lay.gpus_per_pod == per_pod <= kw["gpus_per_node"]
    assert lay.total_gpus == kw["tp"] * kw["pp"] * dp_size * kw["replicas"]
    assert lay.rank_gpus == kw["tp"] * kw["pp"]
    assert lay.dp == dp_size and lay.dp_enabled == (dp_size > 1)
    if lay.nodes_per_rank > 1:
        assert lay.ranks_per_node == 1 and lay.nodes_per_rank * per_pod == lay.rank_gpus
    else:
        assert lay.ranks_per_node * lay.rank_gpus == per_pod
    assert lay.ranks_per_node * kw["nodes"] == dp_size * lay.nodes_per_rank  # every rank placed once

    # DP balancing and endpoints
    expected_mode = "none" if dp_size == 1 else ("external" if kw["routed"] else "internal")
    assert lay.dp_mode == expected_mode
    if expected_mode == "external":
        assert lay.serving_nodes == tuple(sorted(set(firsts)))
        assert set(starts.values()) == {len(lay.public_ports)}  # each serving pod: one port per rank it starts
    else:
        assert lay.serving_nodes == (0,)
        assert len(lay.public_ports) == 1
    assert all(0 <= n < kw["nodes"] for n in lay.serving_nodes)
    assert list(lay.serving_nodes) == sorted(set(lay.serving_nodes))
    if len(lay.serving_nodes) > 1:  # evenly spaced: one every nodes_per_rank pods, from pod 0
        assert lay.serving_nodes == tuple(range(0, kw["nodes"], lay.nodes_per_rank))

    # ports: contiguous, non-overlapping, and clear of the fixed RPC / supervisor ports
    k = len(lay.public_ports)
    assert lay.public_ports == tuple(range(PUBLIC_BASE, PUBLIC_BASE + k))
    backend_base = PROXIED_BASE if kw["proxied"] else PUBLIC_BASE
    assert lay.backend_ports == tuple(range(backend_base, backend_base + k))
    if kw["proxied"]:
        assert not set(lay.public_ports) & set(lay.backend_ports)
    fixed = {lay.rpc_port, lay.supervisor_port}
    assert not fixed & (set(lay.public_ports) | set(lay.backend_ports))

    # launch mode follows
    expected_launch = {"none": "single", "internal": "internal"}.get(expected_mode)
    if expected_mode == "external":
        expected_launch = "multi-port" if lay.ranks_per_node > 1 else "external-rank"
    assert lay.launch == expected_launch


@settings(max_examples=200, deadline=None)
@given(valid_layouts())
def test_constructed_layouts_are_accepted(kw):
    ref = reference(kw["tp"], kw["pp"], kw["dp"], kw["nodes"], kw["gpus_per_node"])
    assert ref is not None, kw
    lay = _layout(kw)
    assert lay.gpus_per_pod * lay.nodes == kw["tp"] * kw["pp"] * (kw["dp"] or 1)


@pytest.mark.parametrize(("kw", "message"), [
    ({"tp": 3, "nodes": 2}, "tp x pp x dp = 3 x 1 x 1 = 3 GPUs do not divide evenly over lws.size = 2 pods"),
    ({"tp": 16, "nodes": 1}, "16 GPUs per pod (tp x pp x dp / lws.size = 16 / 1) exceed the accelerator's "
                             "gpus_per_node = 8; raise lws.size to spread the role over more nodes"),
    ({"tp": 3, "dp": 4, "nodes": 3}, "a pod has 4 GPUs, which is not a whole number of DP ranks of tp x pp = 3 GPUs"),
    ({"tp": 6, "dp": 2, "nodes": 3}, "one DP rank needs tp x pp = 6 GPUs, which is not a whole number of pods of "
                                     "4 GPUs; a rank must fit one node or span whole nodes"),
], ids=["uneven-over-pods", "over-gpus-per-node", "rank-does-not-tile-pod", "rank-not-whole-pods"])
def test_invalid_layout_messages(kw, message):
    full = {"tp": 1, "pp": 1, "dp": False, "ep": False, "nodes": 1, "replicas": 1, "gpus_per_node": 8,
            "routed": False, "proxied": False, **kw}
    with pytest.raises(ResolveError) as info:
        _layout(full)
    assert info.value.message == message


def test_wide_ep_decode_layout():
    """The bundled DeepSeek decode role: EP16 over four 4-GPU trays behind the P/D proxy."""
    lay = plan_layout(LayoutInput(tp=1, pp=1, dp=16, ep=True, nodes=4, replicas=1, gpus_per_node=4, routed=True,
                                  proxied=True))
    assert (lay.gpus_per_pod, lay.ranks_per_node, lay.nodes_per_rank) == (4, 4, 1)
    assert (lay.dp_mode, lay.launch) == ("external", "multi-port")
    assert lay.serving_nodes == (0, 1, 2, 3)
    assert lay.public_ports == (8000, 8001, 8002, 8003)
    assert lay.backend_ports == (8200, 8201, 8202, 8203)


def test_routed_rank_spanning_nodes_serves_from_each_rank_head():
    """Under llm-d each rank's first node serves HTTP (the others are headless); on a platform
    with pod groups per rank the layout is one rank per group, served by the group leader."""
    flat = plan_layout(LayoutInput(tp=8, pp=1, dp=2, ep=False, nodes=4, replicas=3, gpus_per_node=4, routed=True,
                                   proxied=False))
    assert (flat.serving_nodes, flat.launch, flat.nodes, flat.replicas, flat.rank_groups) == \
        ((0, 2), "external-rank", 4, 3, 1)
    grouped = plan_layout(LayoutInput(tp=8, pp=1, dp=2, ep=False, nodes=4, replicas=3, gpus_per_node=4, routed=True,
                                      proxied=False, rank_groups=True))
    assert (grouped.serving_nodes, grouped.launch, grouped.nodes, grouped.replicas, grouped.rank_groups) == \
        ((0,), "external-rank", 2, 6, 2)
    assert grouped.total_gpus == flat.total_gpus == 48 and grouped.nodes_per_rank == 2
    # Ranks that fit a pod, and direct serving, never form groups.
    assert plan_layout(LayoutInput(tp=4, pp=1, dp=2, ep=False, nodes=2, replicas=1, gpus_per_node=4, routed=True,
                                   proxied=False, rank_groups=True)).rank_groups == 1
    internal = plan_layout(LayoutInput(tp=8, pp=1, dp=2, ep=False, nodes=4, replicas=1, gpus_per_node=4, routed=False,
                                       proxied=False, rank_groups=True))
    assert (internal.serving_nodes, internal.launch, internal.rank_groups) == ((0,), "internal", 1)


# ---- workload kind, through resolution ------------------------------------------------------


@pytest.fixture
def resolve_role(tmp_path):
    from manifesto.cluster import load_cluster

    cluster = load_cluster(str(REPO / "clusters/example-stateless-b200.yaml"))

    def run(role_yaml: str):
        path = tmp_path / "spec.yaml"
        path.write_text("release: demo\nmodel: {id: org/model}\nroles:\n"
                        + textwrap.indent(textwrap.dedent(role_yaml), "  "))
        return plan_of(path, cluster)[0].roles[0]

    return run


@pytest.mark.parametrize(("role", "kind"), [
    ("- name: d\n  parallelism: {tp: 8}\n", "Deployment"),
    ("- name: d\n  lws: {size: 2}\n  parallelism: {tp: 16}\n", "LeaderWorkerSet"),
    ("- name: d\n  workload: leaderworkerset\n  parallelism: {tp: 8}\n", "LeaderWorkerSet"),
    ("- name: d\n  workload: deployment\n  parallelism: {tp: 8}\n", "Deployment"),
    ("- name: d\n  lws: {replicas: 3}\n  parallelism: {tp: 2}\n", "Deployment"),
], ids=["one-node", "two-nodes", "explicit-lws-one-node", "explicit-deployment", "replicas-stay-deployment"])
def test_workload_kind(resolve_role, role, kind):
    assert resolve_role(role).workload_kind == kind


def test_multi_node_deployment_is_rejected(resolve_role, tmp_path):
    with pytest.raises(ResolveError) as info:
        resolve_role("- name: d\n  workload: deployment\n  lws: {size: 2}\n  parallelism: {tp: 16}\n")
    assert scrub(str(info.value), tmp_path) == (
        '<tmp>/spec.yaml:5:5: roles[0].workload: a Deployment cannot span 2 nodes (lws.size); multi-node '
        'roles need a LeaderWorkerSet')


@settings(max_examples=40, deadline=None)
@given(tp=st.sampled_from([1, 2, 4, 8, 16]), dp=st.sampled_from([False, 2, 4]), nodes=st.sampled_from([1, 2, 4]))
def test_resolved_layout_matches_plan_layout(tmp_path_factory, tp, dp, nodes):
    """Resolution hands the role's numbers to plan_layout unchanged (or fails the same way)."""
    from manifesto.cluster import load_cluster

    path = tmp_path_factory.mktemp("spec") / "spec.yaml"
    dp_text = "false" if dp is False else dp
    path.write_text(f"release: demo\nmodel: {{id: org/model}}\nroles:\n  - name: d\n    lws: {{size: {nodes}}}\n"
                    f"    parallelism: {{tp: {tp}, dp: {dp_text}}}\n")
    cluster = load_cluster(str(REPO / "clusters/example-stateless-b200.yaml"))
    kw = {"tp": tp, "pp": 1, "dp": dp, "ep": False, "nodes": nodes, "replicas": 1, "gpus_per_node": 8,
          "routed": False, "proxied": False}
    try:
        expected = _layout(kw)
    except ResolveError as exc:
        with pytest.raises(ResolveError) as info:
            plan_of(path, cluster)
        assert info.value.message == exc.message
        assert info.value.path == "roles[0].parallelism"
        return
    role = plan_of(path, cluster)[0].roles[0]
    assert role.layout == expected
    assert role.resources.gpus == expected.gpus_per_pod
