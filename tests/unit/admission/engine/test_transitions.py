"""What a decision does to a workload: the moves the loop's plan and the simulator share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from admission.engine.transitions import (
    CHECKPOINTED,
    GRACE_EXPIRED,
    admitted,
    checkpointed,
    evicted,
    requeue_due,
)
from quota.core.checkpoints import CHECKPOINT_GRACE, CHECKPOINTED_AT, format_time
from quota.core.reasons import EvictionReason
from quota.core.workload import Admission, PodSet, PodSetAssignment, Workload, WorkloadState

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)
HELD = Admission("team", (PodSetAssignment("main", 1, {"cpu": "default"}, {"cpu": 1000}),))
GRACE = {CHECKPOINT_GRACE: "10m"}


def running(**notes: str) -> Workload:
    pending = Workload("ns", "job", "q", (PodSet("main", 1, {"cpu": 1000}),), T0, annotations=notes)
    return admitted(pending, HELD, T0)


EVICTIONS = [
    pytest.param({}, EvictionReason.PREEMPTED, WorkloadState.PENDING, None,
                 id="a victim without a grace is back in the queue at once"),
    pytest.param(GRACE, EvictionReason.PREEMPTED, WorkloadState.EVICTING, timedelta(minutes=10),
                 id="a victim with a grace keeps running to its checkpoint"),
    pytest.param(GRACE, EvictionReason.NODE_UNHEALTHY, WorkloadState.EVICTING,
                 timedelta(minutes=10), id="a node fault honours the grace too"),
    pytest.param(GRACE, EvictionReason.DEACTIVATED, WorkloadState.DEACTIVATED, None,
                 id="a deactivated holder leaves the queue, grace or not"),
]


@pytest.mark.parametrize(("notes", "reason", "state", "grace"), EVICTIONS)
def test_an_eviction_is_counted_and_stamped_when_decided(
    notes: dict[str, str], reason: str, state: WorkloadState, grace: timedelta | None
) -> None:
    now = T0 + timedelta(hours=1)
    moved = evicted(running(**notes), reason, now)

    assert (moved.workload.state, moved.grace) == (state, grace)
    assert (moved.workload.eviction_count, moved.workload.evicted_at) == (1, now)
    keeps = state is WorkloadState.EVICTING
    assert moved.workload.admission == (HELD if keeps else None)
    assert moved.workload.admitted_at == (T0 if keeps else None)


def test_admission_clears_the_last_eviction_stamp() -> None:
    victim = evicted(running(), EvictionReason.PREEMPTED, T0 + timedelta(minutes=5)).workload
    again = admitted(victim, HELD, T0 + timedelta(minutes=6))
    assert (again.state, again.admitted_at, again.evicted_at, again.eviction_count) == (
        WorkloadState.ADMITTED, T0 + timedelta(minutes=6), None, 1,
    )


ASKED = T0 + timedelta(hours=1)
REQUEUES = [
    pytest.param(None, ASKED + timedelta(minutes=5), None, id="still saving within its grace"),
    pytest.param(ASKED + timedelta(minutes=2), ASKED + timedelta(minutes=3), CHECKPOINTED,
                 id="a checkpoint since it was asked releases it"),
    pytest.param(ASKED - timedelta(minutes=30), ASKED + timedelta(minutes=5), None,
                 id="a checkpoint from before it was asked does not count"),
    pytest.param(None, ASKED + timedelta(minutes=10), GRACE_EXPIRED,
                 id="the grace running out releases it"),
]


@pytest.mark.parametrize(("saved", "now", "why"), REQUEUES)
def test_an_evicting_victim_goes_back_once_it_saved_or_its_grace_ends(
    saved: datetime | None, now: datetime, why: str | None
) -> None:
    notes = dict(GRACE) if saved is None else {**GRACE, CHECKPOINTED_AT: format_time(saved)}
    victim = evicted(running(**notes), EvictionReason.PREEMPTED, ASKED).workload

    requeue = requeue_due(victim, now)

    if why is None:
        assert requeue is None
        return
    assert requeue is not None and requeue.why == why
    back = requeue.workload
    assert (back.state, back.admission, back.admitted_at) == (WorkloadState.PENDING, None, None)
    assert back.eviction_count == 1  # counted when it was evicted, not again


def test_a_checkpoint_report_no_newer_than_the_stored_one_changes_nothing() -> None:
    saved = checkpointed(running(), T0 + timedelta(minutes=5), "s3://ckpt/5")
    assert saved is not None
    assert saved.annotations[CHECKPOINTED_AT] == format_time(T0 + timedelta(minutes=5))
    assert checkpointed(saved, T0 + timedelta(minutes=5)) is None
    assert checkpointed(saved, T0 + timedelta(minutes=4)) is None
