"""The queue-order time of a workload through its evictions and admissions, under
``waitForPodsReady.requeuingStrategy.timestamp`` (Kueue's ``GetQueueOrderTimestamp``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from admission.engine.check_states import reserved
from admission.engine.preemption import within_allows
from admission.engine.transitions import admitted, evicted, requeue_due
from quota.core.checkpoints import CHECKPOINT_GRACE
from quota.core.model import WithinClusterQueue
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.reasons import EvictionReason
from quota.core.workload import (
    Admission,
    PodSet,
    PodSetAssignment,
    Workload,
    pending_order,
    queue_time,
)

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)
HELD = Admission("team", (PodSetAssignment("main", 1, {"cpu": "default"}, {"cpu": 1000}),))
EVICTION, CREATION = RequeuingTimestamp.EVICTION, RequeuingTimestamp.CREATION
TIMEOUT, CHECK = EvictionReason.PODS_READY_TIMEOUT, EvictionReason.ADMISSION_CHECK


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def lived(*history: tuple[str, int], notes: dict[str, str] | None = None) -> Workload:
    """A workload created at T0 through ``history``: ("admit", minute), ("reserve",
    minute) or (an eviction reason, minute); a graceful victim runs on to its grace end."""
    workload = Workload("ns", "job", "q", (PodSet("main", 1, {"cpu": 1000}),), T0,
                        annotations=notes or {})  # fmt: skip
    for move, minute in history:
        if move == "admit":
            workload = admitted(workload, HELD, at(minute))
        elif move == "reserve":
            workload = reserved(workload, HELD, ("prov",), at(minute))
        else:
            workload = evicted(workload, move, at(minute)).workload
            back = requeue_due(workload, at(minute + 60))
            workload = workload if back is None else back.workload
    return workload


ORDER = [
    pytest.param(lived(), T0, T0, id="never evicted: its creation either way"),
    pytest.param(lived(("admit", 1), (TIMEOUT, 6)), at(6), T0,
                 id="timed out waiting for its pods: the eviction, or creation"),
    pytest.param(lived(("admit", 1), (TIMEOUT, 6), ("admit", 8), (TIMEOUT, 13)), at(13), T0,
                 id="timed out twice: the last eviction counts"),
    pytest.param(lived(("admit", 1), (TIMEOUT, 6), ("admit", 8)), T0, T0,
                 id="admitted again after a timeout: the eviction no longer counts"),
    pytest.param(lived(("admit", 1), (TIMEOUT, 6), ("admit", 8),
                       (EvictionReason.PREEMPTED, 9)), T0, T0,
                 id="preempted after an earlier timeout: creation, the timeout is forgotten"),
    pytest.param(lived(("admit", 1), (EvictionReason.PREEMPTED, 6)), T0, T0,
                 id="preempted: creation either way, as in Kueue"),
    pytest.param(lived(("admit", 1), (EvictionReason.PREEMPTED, 6),
                       notes={CHECKPOINT_GRACE: "10m"}), T0, T0,
                 id="preempted with a checkpoint grace, then requeued: creation either way"),
    pytest.param(lived(("admit", 1), (EvictionReason.NODE_UNHEALTHY, 6)), T0, T0,
                 id="evicted off an unhealthy node: creation either way"),
    pytest.param(lived(("reserve", 1), (CHECK, 6)), at(6), at(6),
                 id="an admission check's Retry: the eviction either way, as in Kueue"),
    pytest.param(lived(("reserve", 1), (CHECK, 6), ("reserve", 7)), T0, T0,
                 id="quota reserved again after a Retry: creation"),
]  # fmt: skip


@pytest.mark.parametrize(("workload", "by_eviction", "by_creation"), ORDER)
def test_queue_time_follows_the_requeuing_timestamp(
    workload: Workload, by_eviction: datetime, by_creation: datetime
) -> None:
    assert queue_time(workload, EVICTION) == by_eviction
    assert queue_time(workload, CREATION) == by_creation
    assert pending_order(workload, EVICTION)[1] == by_eviction
    assert pending_order(workload, CREATION)[1] == by_creation


def test_a_timed_out_workload_queues_behind_a_younger_one_only_by_eviction() -> None:
    timed_out = lived(("admit", 1), (TIMEOUT, 6))
    younger = Workload("ns", "younger", "q", (PodSet("main", 1, {"cpu": 1000}),), at(2))
    urgent = Workload("ns", "urgent", "q", (PodSet("main", 1, {"cpu": 1000}),), at(9),
                      priority=5)  # fmt: skip

    def order(timestamp: RequeuingTimestamp) -> list[str]:
        return [w.name for w in sorted([timed_out, younger, urgent],
                                       key=lambda w: pending_order(w, timestamp))]  # fmt: skip

    assert order(EVICTION) == ["urgent", "younger", "job"]
    assert order(CREATION) == ["urgent", "job", "younger"]


@pytest.mark.parametrize(
    ("timestamp", "allowed"),
    [
        pytest.param(EVICTION, False,
                     id="eviction: the timed-out preemptor is newer than a victim created since"),
        pytest.param(CREATION, True,
                     id="creation: the timed-out preemptor is older and may take a newer one"),
    ],
)  # fmt: skip
def test_newer_equal_priority_preemption_compares_queue_times(
    timestamp: RequeuingTimestamp, allowed: bool
) -> None:
    preemptor = lived(("admit", 1), (TIMEOUT, 6))  # created at T0, evicted at minute 6
    victim = admitted(Workload("ns", "victim", "q", (PodSet("main", 1, {"cpu": 1000}),), at(3)),
                      HELD, at(3))  # fmt: skip

    newer_equal = WithinClusterQueue.LOWER_OR_NEWER_EQUAL_PRIORITY
    assert within_allows(newer_equal, preemptor, victim, timestamp) is allowed
    assert not within_allows(WithinClusterQueue.LOWER_PRIORITY, preemptor, victim, timestamp)
