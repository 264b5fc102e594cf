"""The DisaggregatedSet rollout planner of LeaderWorkerSet v0.10.0, rewritten in Python so
``diff --base`` can say what a set's rollout does to each role's serving replicas:
pkg/controllers/disaggregatedset/planner.go (ComputeNextStep and its helpers, lines 52-389)
and how the executor reads a role's rollingUpdateConfiguration
(pkg/controllers/disaggregatedset/executor.go:268-300, extractRollingUpdateConfig). The Go
module proxy does not serve sigs.k8s.io/lws, so the controller cannot run in the tests; this
copy of its arithmetic is checked against step sequences of the upstream planner_test.go
(tests/build_graph/test_dset_rollout.py).

Names follow the Go source. A step is ``(past, new)``: the replicas of the old revision's and
the new revision's LeaderWorkerSet per role. Before each step the executor waits until every
new-revision LeaderWorkerSet has all its replicas ready (executor.go:148-154), so what serves
during a step is the step's old replicas and the previous step's new ones
(:func:`dark_roles`).
"""

from __future__ import annotations

import math
import re


def default_config(n: int) -> list[tuple[int, int]]:
    """(maxSurge, maxUnavailable) per role when a role sets no rollingUpdateConfiguration
    (planner.go:52-59)."""
    return [(1, 0)] * n


def _scaled(value, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, ``N%`` of ``total`` rounded."""
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"([0-9]+)%", str(value))
    if not m:
        raise ValueError(f"not an int or a percentage: {value!r}")
    exact = int(m.group(1)) * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def role_config(rolling: dict | None, replicas: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) the executor plans one role with (executor.go:280-297); the
    CRD defaults maxSurge to 0 and maxUnavailable to 1 inside a given configuration."""
    surge, unavailable = 1, 0
    if rolling is not None:
        s = _scaled(rolling.get("maxSurge", 0), replicas, True)
        u = _scaled(rolling.get("maxUnavailable", 1), replicas, False)
        if u > 0:
            surge, unavailable = s, u
        elif s > 0:
            surge = s
    return surge, unavailable


def _batch(surge: int, unavailable: int) -> int:
    return surge if surge > 0 else max(1, unavailable)


def _total_steps(initial_old, target, config) -> int:
    total = 0
    for i in range(len(initial_old)):
        most = max(initial_old[i], target[i], 0)
        b = _batch(*config[i])
        total = max(total, (most + b - 1) // b)
    return total


def _next_new(target, current_new, total: int) -> list[int]:
    if total == 0:
        return list(target)

    def index(current, t):
        return total if t == 0 else int(current * total / t)

    next_index = min([total] + [index(current_new[i], target[i]) for i in range(len(target))]) + 1
    return [max(min(math.ceil(next_index * target[i] / total), target[i]), current_new[i]) for i in range(len(target))]


def _next_old(initial_old, current_old, total: int) -> list[int]:
    if total == 0:
        return [0] * len(initial_old)
    worst = 0
    for i in range(len(initial_old)):
        if initial_old[i] == 0:
            continue
        removed = initial_old[i] - current_old[i]
        worst = max(worst, int(removed * total / initial_old[i]))
    next_index = worst + 1
    return [min(max(0, initial_old[i] - math.floor(next_index * initial_old[i] / total)), current_old[i])
            for i in range(len(initial_old))]


def _can_drain_all(next_new, initial_old, target, config) -> bool:
    return all(not initial_old[i] >= target[i] or next_new[i] >= target[i] - config[i][1]
               for i in range(len(target)))


def _orphan_prevention(next_old, current_new, initial_old, target, config) -> None:
    live = [i for i in range(len(next_old)) if initial_old[i] != 0]
    any_zero = any(next_old[i] == 0 for i in live)
    all_zero = all(next_old[i] == 0 for i in live)
    if not any_zero or all_zero:
        return
    if _can_drain_all(current_new, initial_old, target, config):
        for i in range(len(next_old)):
            next_old[i] = 0
        return
    for i in range(len(next_old)):
        if next_old[i] == 0 and initial_old[i] > 0:
            next_old[i] = 1


def next_step(initial_old, current_old, current_new, target, config):
    """planner.go:324-356, ComputeNextStep: the next (past, new), or None when done."""
    n = len(initial_old)
    if all(current_old[i] == 0 and current_new[i] >= target[i] for i in range(n)):
        return None
    total = _total_steps(initial_old, target, config)
    if total == 0:
        return None
    expected = [min(initial_old[i], current_old[i]) for i in range(n)]
    if any(current_old[i] > expected[i] for i in range(n)):
        return expected, list(current_new)
    if all(current_new[i] >= target[i] for i in range(n)):
        return [0] * n, list(current_new)
    nxt = _next_new(target, current_new, total)
    min_old = [max(0, target[i] - config[i][1] - current_new[i]) if initial_old[i] >= target[i] else 0
               for i in range(n)]
    # tryScaleUp
    if any(nxt[i] > current_new[i] for i in range(n)) and all(
            target[i] == 0 or current_old[i] + nxt[i] <= target[i] + config[i][0] for i in range(n)):
        return list(current_old), nxt
    # tryProportionalDrain
    old = [max(v, min_old[i]) for i, v in enumerate(_next_old(initial_old, current_old, total))]
    _orphan_prevention(old, current_new, initial_old, target, config)
    if any(old[i] < current_old[i] for i in range(n)):
        return old, list(current_new)
    # tryForceDrain
    drained = []
    for i in range(n):
        d = max(0, min(current_old[i], target[i] + config[i][0] - nxt[i]))
        if initial_old[i] >= target[i]:
            d = max(d, max(0, target[i] - config[i][1] - nxt[i]))
        drained.append(d)
    if not any(drained[i] < current_old[i] for i in range(n)):
        return None
    _orphan_prevention(drained, nxt, initial_old, target, config)
    return drained, nxt


def all_steps(initial_old, target, config) -> list[tuple[list[int], list[int]]]:
    """planner.go:359-389, ComputeAllSteps: every step from (initial_old, 0) to the end."""
    old, new = list(initial_old), [0] * len(initial_old)
    steps = [(list(old), list(new))]
    for _ in range(max([*initial_old, *target, 0]) * 2 + 10):
        step = next_step(initial_old, old, new, target, config)
        if step is None:
            break
        steps.append(step)
        old, new = step
    return steps


def dark_roles(initial_old, target, config) -> list[int]:
    """The roles (indices) that have no serving replica at some point of the rollout: the
    old revision's replicas of a step plus the new revision's of the step before (those the
    executor saw ready), zero while the role is meant to serve."""
    steps = all_steps(initial_old, target, config)
    dark = []
    for i in range(len(initial_old)):
        if initial_old[i] == 0 or target[i] == 0:
            continue
        if any(past[i] + steps[k - 1][1][i] == 0 for k, (past, _) in enumerate(steps) if k > 0):
            dark.append(i)
    return dark
