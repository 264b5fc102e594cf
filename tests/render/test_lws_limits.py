"""How long a LeaderWorkerSet's name may be (LeaderWorkerSet v0.10.0's derived names), and a
release too long for it refused when the spec loads, for the LWS pair and the
DisaggregatedSet, at every replica count.

The names, from kubernetes-sigs/lws at tag v0.10.0: the leaders' StatefulSet is the LWS
name (pkg/controllers/leaderworkerset_controller.go:846), each group's workers' StatefulSet
its leader pod's name ``<lws>-<group>`` (pkg/controllers/pod_controller.go:438), only when
the group has more than one pod (pod_controller.go:137-140), workers numbered from 1
(pod_controller.go:444); a DisaggregatedSet's child is ``<set>-<slice>-<revision>-<role>``
(pkg/utils/disaggregatedset/utils.go:93-95, the revision 8 characters, utils.go:142) with a
Service ``<child>-prv`` (pkg/controllers/disaggregatedset/service_manager.go:147).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from kit import REPO_ROOT, plan_of
from manifesto.errors import ResolveError
from manifesto.render.k8s import objects
from manifesto.resolve.lws_limits import lws_name_limit
from manifesto.util.rules import REVISION_HASH

LWS010 = REPO_ROOT / "clusters" / "example-gb200-lws.yaml"
GB200 = REPO_ROOT / "clusters" / "example-gb200.yaml"
HASH = "h" * REVISION_HASH  # the longest controller-revision-hash suffix


def _derived(name: str, replicas: int, size: int) -> list[str]:
    """Every name and label value LWS and the StatefulSet controller derive from ``name``."""
    out = [name, f"{name}-{HASH}"]  # the LWS (its headless Service), the leaders' StatefulSet's label
    for group in range(max(replicas, 1)):
        leader = f"{name}-{group}"
        out.append(leader)  # the leader pod, and its Service with subdomainPolicy UniquePerReplica
        if size > 1:
            out.append(f"{leader}-{HASH}")  # the workers' StatefulSet <leader> labels its pods
            out += [f"{leader}-{worker}" for worker in range(1, size)]
    return out


@pytest.mark.parametrize("size", [1, 2, 4, 16])
def test_the_limit_is_the_longest_name_every_derived_name_allows(size):
    counts = [*range(0, 130), 999, 1000, 1001, 1002, 10000, 10001]
    for replicas in counts:
        limit = lws_name_limit(replicas, size)
        assert max(map(len, _derived("n" * limit, replicas, size))) <= 63, (replicas, size)
        assert max(map(len, _derived("n" * (limit + 1), replicas, size))) > 63, (replicas, size)


def test_the_limit_against_lws_own_docs():
    # site/content/en/docs/troubleshooting/_index.md:66 (v0.10.0) gives 51 - replicas // 10; the
    # derivation is stricter where the docs assume a hash under 10 characters (replicas < 10)
    # or miss the second digit of the last group index (11..19), and looser from 21 on.
    for replicas in range(1, 200):
        docs = 51 - replicas // 10
        ours = lws_name_limit(replicas, 2)
        assert ours == 51 - len(str(replicas - 1))
        if replicas < 10 or 11 <= replicas <= 19:
            assert ours == docs - 1
        elif replicas <= 20:
            assert ours == docs
        else:
            assert ours >= docs


PD = {
    "release": "x", "topology": "pd",
    "model": {"id": "Qwen/Qwen3-0.6B", "label": "Qwen3-0.6B", "image_ref": "vllm.standard"},
    "routing": {"kind": "pd", "target_role": "decode"}, "runtime": {"sidecars": []},
    "roles": [
        {"name": "prefill", "workload": "leaderworkerset", "parallelism": {"tp": 1, "dp": False, "ep": False},
         "kv_transfer_config": {"kv_connector": "NixlConnector", "kv_role": "kv_both"},
         "vllm": {"max_model_len": 8192}},
        {"name": "decode", "workload": "leaderworkerset", "parallelism": {"tp": 2, "dp": False, "ep": False},
         "lws": {"size": 2, "replicas": 1},
         "kv_transfer_config": {"kv_connector": "NixlConnector", "kv_role": "kv_both"},
         "vllm": {"max_model_len": 8192}},
    ],
}


def _spec(tmp_path: Path, release: str, replicas: int) -> Path:
    data = copy.deepcopy(PD)
    data["release"] = release
    data["roles"][1]["lws"]["replicas"] = replicas
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _most(replicas: int, dset: bool) -> int:
    """The longest release: the decode role's LWS (2 pods a group) binds; the prefill role's
    (1 pod) allows 52 characters."""
    suffixes = {"decode": (2, replicas), "prefill": (1, 1)}
    most = 63
    for role, (size, count) in suffixes.items():
        child_extra = len(f"-0-{'r' * 8}-{role}") if dset else len(f"-{role}")
        label_extra = 1 + REVISION_HASH + (1 + len(str(count - 1)) if size > 1 else 0)
        most = min(most, 63 - label_extra - child_extra)
    return most


@pytest.mark.parametrize("cluster", [LWS010, GB200], ids=["disaggregatedset", "lws-pair"])
@pytest.mark.parametrize("replicas", [1, 10, 11, 100, 101])
def test_a_release_too_long_for_the_lws_names_is_refused_at_load(tmp_path, cluster, replicas):
    dset = cluster == LWS010
    most = _most(replicas, dset)
    release = "r" + "e" * (most - 1)
    plan, _, _ = plan_of(_spec(tmp_path, release, replicas), cluster)
    assert (plan.pd_set is not None) == dset
    objects(plan)  # the render's own last check agrees: nothing too long at the limit
    with pytest.raises(ResolveError) as err:
        plan_of(_spec(tmp_path, release + "e", replicas), cluster)
    assert err.value.path == "release"
    assert f"The release may have at most {most} characters (it has {most + 1})" in err.value.message
    assert f"{replicas} group{'s' if replicas > 1 else ''} of 2 pods" in err.value.message


def test_a_role_name_that_leaves_no_room_is_blamed(tmp_path):
    data = copy.deepcopy(PD)
    data["roles"][1]["name"] = "d" * 45
    data["routing"]["target_role"] = "d" * 45
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ResolveError) as err:
        plan_of(path, LWS010)
    assert err.value.path == "roles[1].name"
    # x-0-<8>-<role> in the 50 characters a 2-pod group leaves: 13 + 37.
    assert "roles[1].name may have at most 37 characters (it has 45)" in err.value.message
    assert f"LeaderWorkerSet x-0-<revision>-{'d' * 45} (58 characters)" in err.value.message


def test_the_user_prefix_counts_against_the_release(tmp_path):
    # naming.user_prefix: the instance is <user>-<release>, and the release gets what is left.
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(LWS010.read_text().replace("# naming:\n#   user_prefix: true\n",
                                                  "naming:\n  user_prefix: true\n"))
    most = _most(1, dset=True) - len("alice-")
    release = "r" + "e" * (most - 1)
    plan, _, _ = plan_of(_spec(tmp_path, release, 1), cluster, user="alice")
    assert plan.pd_set == f"alice-{release}"
    with pytest.raises(ResolveError) as err:
        plan_of(_spec(tmp_path, release + "e", 1), cluster, user="alice")
    assert err.value.path == "release"
    assert f"The release may have at most {most} characters with the user prefix (it has {most + 1})" \
        in err.value.message
