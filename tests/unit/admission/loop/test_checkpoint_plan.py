"""How the loop plans checkpoint-aware evictions and what their usage records (PURE)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from admission.engine.types import EvictionDecision
from admission.loop.actuation import CHECKPOINT, EVICT
from admission.loop.plan import CyclePlan, plan_evictions, plan_requeues
from quota.core.checkpoints import CHECKPOINT_GRACE, CHECKPOINTED_AT, format_time
from quota.core.cycle_writes import WorkloadRecord
from quota.core.workload import Admission, PodSet, PodSetAssignment, Workload, WorkloadState

T0 = datetime(2026, 1, 1, tzinfo=UTC)
GPU = "nvidia.com/gpu"
MIN = timedelta(minutes=1)


def record(*, state: WorkloadState = WorkloadState.ADMITTED, grace: str | None = "10m",
           saved: datetime | None = None, evicted_at: datetime | None = None,
           why: str | None = None) -> WorkloadRecord:
    notes = {}
    if grace is not None:
        notes[CHECKPOINT_GRACE] = grace
    if saved is not None:
        notes[CHECKPOINTED_AT] = format_time(saved)
    admission = Admission("team", (PodSetAssignment("main", 1, {GPU: "h100"}, {GPU: 4000}),))
    workload = Workload("ns", "train", "q", (PodSet("main", 1, {GPU: 4000}),), T0,
                        state=state, admission=admission, admitted_at=T0, annotations=notes,
                        evicted_at=evicted_at, eviction_reason=why)
    return WorkloadRecord(1, 3, workload)


def evict(rec: WorkloadRecord, reason: str, now: datetime) -> CyclePlan:
    decision = EvictionDecision("ns/train", "ns/urgent" if reason == "Preempted" else "", None,
                                "team", reason)
    return plan_evictions(CyclePlan(), {"ns/train": rec}, [decision], now)


@pytest.mark.parametrize("reason", ["Preempted", "NodeUnhealthy"])
def test_a_victim_with_a_grace_is_asked_to_checkpoint_and_keeps_its_quota(reason: str) -> None:
    plan = evict(record(), reason, T0 + 30 * MIN)

    (transition,) = plan.transitions
    assert (transition.state, transition.releases, transition.end_reason) == (
        WorkloadState.EVICTING, False, reason)
    (action,) = plan.actions
    assert (action.action, action.requested_at, action.deadline) == (
        CHECKPOINT, T0 + 30 * MIN, T0 + 40 * MIN)
    assert plan.records["ns/train"].workload.eviction_reason == reason


@pytest.mark.parametrize(
    ("reason", "saved", "lost_from"),
    [
        pytest.param("Preempted", None, None, id="preempted, never saved: all lost"),
        pytest.param("NodeUnhealthy", T0 + 20 * MIN, T0 + 20 * MIN,
                     id="node fault after a checkpoint: lost since it"),
    ],
)
def test_an_eviction_without_grace_records_why_and_since_when_work_is_lost(
    reason: str, saved: datetime | None, lost_from: datetime | None
) -> None:
    plan = evict(record(grace=None, saved=saved), reason, T0 + 30 * MIN)

    (transition,) = plan.transitions
    assert (transition.state, transition.releases) == (WorkloadState.PENDING, True)
    assert (transition.end_reason, transition.lost_from) == (reason, lost_from)
    assert [a.action for a in plan.actions] == [EVICT]


@pytest.mark.parametrize(
    ("saved", "now", "requeued_by"),
    [
        pytest.param(None, T0 + 39 * MIN, None, id="grace running, no checkpoint: waits"),
        pytest.param(None, T0 + 41 * MIN, "CheckpointGraceExpired", id="grace over: evicted"),
        pytest.param(T0 + 33 * MIN, T0 + 34 * MIN, "Checkpointed",
                     id="checkpointed after the request: evicted at once"),
        pytest.param(T0 + 29 * MIN, T0 + 34 * MIN, None,
                     id="a checkpoint from before the request does not answer it"),
        pytest.param(T0 + 30 * MIN, T0 + 31 * MIN, "Checkpointed",
                     id="a whole-second stamp in the request's own second answers it"),
    ],
)
def test_an_evicting_victim_is_released_by_a_checkpoint_or_its_deadline(
    saved: datetime | None, now: datetime, requeued_by: str | None
) -> None:
    asked = T0 + 30 * MIN + timedelta(milliseconds=400)
    rec = record(state=WorkloadState.EVICTING, saved=saved, evicted_at=asked, why="NodeUnhealthy")

    plan = plan_requeues({"ns/train": rec}, now)

    if requeued_by is None:
        assert plan.empty and not plan.actions
        return
    (transition,) = plan.transitions
    assert (transition.state, transition.admission, transition.releases) == (
        WorkloadState.PENDING, None, True)
    assert transition.events[0].reason == requeued_by
    # Usage ends with the reason it was evicted for; lost work since the last checkpoint.
    assert (transition.end_reason, transition.lost_from) == ("NodeUnhealthy", saved)
    (action,) = plan.actions
    assert action.action == EVICT and action.reason is not None
    assert requeued_by in action.reason.message
