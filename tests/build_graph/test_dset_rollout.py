"""The Python copy of LeaderWorkerSet v0.10.0's DisaggregatedSet rollout planner
(manifesto/review/dset_rollout.py) against step sequences of the upstream tests
(pkg/controllers/disaggregatedset/planner_test.go at tag v0.10.0, the line of each case
given), and what it says of the rollout the renderer asks for."""

from __future__ import annotations

import pytest

from manifesto.review.dset_rollout import all_steps, dark_roles, default_config, role_config

# (upstream line, initial old, target, config as (maxSurge, maxUnavailable), expected steps)
SEQUENCES = [
    (118, [1, 1], [1, 1], default_config(2), [([1, 1], [0, 0]), ([1, 1], [1, 1]), ([0, 0], [1, 1])]),
    (128, [2, 2], [2, 2], default_config(2),
     [([2, 2], [0, 0]), ([2, 2], [1, 1]), ([1, 1], [1, 1]), ([1, 1], [2, 2]), ([0, 0], [2, 2])]),
    (140, [3, 3], [3, 3], default_config(2),
     [([3, 3], [0, 0]), ([3, 3], [1, 1]), ([2, 2], [1, 1]), ([2, 2], [2, 2]), ([1, 1], [2, 2]), ([1, 1], [3, 3]),
      ([0, 0], [3, 3])]),
    (204, [10, 1], [10, 1], default_config(2),
     [([10, 1], [0, 0]), ([10, 1], [1, 1])]
     + [step for k in range(9, 0, -1) for step in (([k, 1], [10 - k, 1]), ([k, 1], [11 - k, 1]))]
     + [([0, 0], [10, 1])]),
]


@pytest.mark.parametrize("line,old,target,config,expected", SEQUENCES, ids=[f"planner_test.go:{s[0]}" for s in SEQUENCES])
def test_the_copy_gives_the_upstream_steps(line, old, target, config, expected):
    assert all_steps(old, target, config) == expected


def test_the_upstream_unavailable_properties():
    # planner_test.go:507-519 and 554-567: with maxUnavailable 1 and no surge the rollout
    # completes and the total drops below the target; with surge it never does (542-552).
    steps = all_steps([4, 4], [4, 4], [(0, 1), (0, 1)])
    assert steps[-1] == ([0, 0], [4, 4]) and min(sum(p) + sum(n) for p, n in steps) < 8
    steps = all_steps([4, 4], [4, 4], [(1, 1), (1, 1)])
    assert steps[-1] == ([0, 0], [4, 4]) and min(sum(p) + sum(n) for p, n in steps) >= 8


def test_the_executor_reads_a_roles_configuration():
    # executor.go:273-297: the default (1, 0) without a configuration; a percentage of the role's
    # replicas, maxSurge rounded up and maxUnavailable down; the CRD's defaults (0, 1) inside one.
    assert role_config(None, 3) == (1, 0)
    assert role_config({"maxUnavailable": "100%"}, 3) == (0, 3)
    assert role_config({"maxUnavailable": "50%", "maxSurge": "10%"}, 3) == (1, 1)
    assert role_config({}, 3) == (0, 1)
    assert role_config({"maxUnavailable": 0, "maxSurge": 2}, 3) == (2, 0)


@pytest.mark.parametrize("replicas", [(a, b) for a in range(1, 7) for b in range(1, 7)]
                         + [(2, 2, 2), (2, 5, 3), (3, 2, 7, 4)])
def test_what_the_set_renders_keeps_serving_when_every_role_has_two(replicas):
    rendered = {"maxSurge": 0, "maxUnavailable": 1}  # manifesto/render/k8s/model.py SET_ROLLING_UPDATE
    config = [role_config(rendered, r) for r in replicas]
    dark = dark_roles(list(replicas), list(replicas), config)
    if min(replicas) >= 2:
        assert dark == [], (replicas, dark)
    elif replicas in ((1, 1), (1, 2), (2, 1)):
        # A role of one replica is down between its old and new revision, and the planner's
        # orphan prevention (planner.go:268-298) drains the other role with it ...
        assert dark == [0, 1]
    elif replicas in ((1, 3), (4, 1)):
        # ... or, with three or more beside it, keeps the one old replica until its new one
        # is up (tryForceDrain, planner.go:300-322): what diff --base says comes from the steps.
        assert dark == []
    # The LeaderWorkerSet's own maxUnavailable 100%, which the set carried before, drained every role.
    before = [role_config({"maxUnavailable": "100%"}, r) for r in replicas]
    assert dark_roles(list(replicas), list(replicas), before) == list(range(len(replicas)))
