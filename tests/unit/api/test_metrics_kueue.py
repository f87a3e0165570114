"""Kueue's ``status`` label of a pending workload: ``active`` while Kueue would try it again
next cycle, ``inadmissible`` while it waits for the cluster to change."""

from __future__ import annotations

import pytest

from api.metrics_kueue import WAIT_BUCKETS, pending_status
from quota.core.model import QueueingStrategy
from quota.core.reasons import WaitReason

BEST, STRICT = QueueingStrategy.BEST_EFFORT_FIFO, QueueingStrategy.STRICT_FIFO


@pytest.mark.parametrize(
    ("reason", "strategy", "status"),
    [
        pytest.param(WaitReason.PENDING_EVALUATION, BEST, "active", id="not evaluated yet is active"),
        pytest.param(WaitReason.WAITING_FOR_PREEMPTED_WORKLOADS, BEST, "active", id="preemptions under way: retried at once"),
        pytest.param(WaitReason.WAITING_FOR_QUOTA, BEST, "inadmissible", id="no quota: parked until the cluster changes"),
        pytest.param(WaitReason.INSUFFICIENT_CAPACITY, BEST, "inadmissible", id="no room on nodes: parked"),
        pytest.param(WaitReason.WAITING_FOR_QUOTA, STRICT, "active", id="StrictFIFO retries every workload"),
        pytest.param(WaitReason.BLOCKED_BY_QUEUE_HEAD, STRICT, "active", id="StrictFIFO: behind the head, still in the queue"),
        pytest.param(WaitReason.MISCONFIGURED, STRICT, "inadmissible", id="StrictFIFO parks a misconfigured one"),
    ],
)
def test_pending_status(reason: WaitReason, strategy: QueueingStrategy, status: str) -> None:
    assert pending_status(str(reason), strategy) == status


def test_wait_buckets_are_kueues() -> None:
    """Kueue's generateExponentialBuckets(16): 1, then 2.5 doubling: quantiles agree."""
    assert WAIT_BUCKETS[:4] == (1.0, 2.5, 5.0, 10.0)
    assert (len(WAIT_BUCKETS), WAIT_BUCKETS[-1]) == (16, 40960.0)
