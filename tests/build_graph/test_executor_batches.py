"""How the executor splits a build's jobs into the batches its worker processes take."""

from __future__ import annotations

from manifesto.build_graph.executor import Job, _batches
from manifesto.tasks import Task


def _job(name: str, monitoring: bool = False) -> Job:
    return Job((name, "c"), Task.MONITORING if monitoring else Task.RENDER, None, None, "c")


def test_pairs_are_batched_in_order_and_every_job_is_in_exactly_one_batch():
    jobs = [_job(f"m{i}") for i in range(100)]
    batches = _batches(jobs, 2)
    assert [j for b in batches for j in b] == jobs
    sizes = [len(b) for b in batches]
    assert sizes[0] == 6  # 100 // (2 workers * 8)
    assert sizes == sorted(sizes, reverse=True) and sizes[-16:] == [1] * 16  # the end in single pairs
    many = [len(b) for b in _batches([_job(f"m{i}") for i in range(1000)], 2)]
    assert many[0] == 16 and len(many) < 1000 // 4  # few round trips


def test_a_monitoring_job_is_a_batch_of_its_own_sent_first():
    pairs = [_job(f"m{i}") for i in range(40)]
    monitor = _job("//:mon", monitoring=True)
    batches = _batches(pairs[:20] + [monitor] + pairs[20:], 2)
    assert batches[0] == [monitor]
    assert [j for b in batches[1:] for j in b] == pairs
