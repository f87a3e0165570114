"""Checkpoint-aware preemption through the loop: a victim with a grace keeps running and its
quota until it reports a checkpoint (REST) or the grace ends; metering records the waste."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from builders.loop import Ledgered, RecordingActuator, pool
from builders.manifests import job

from admission.loop.loop import AdmissionLoop
from quota.core.checkpoints import format_time

GRACE = {"berth.dev/checkpoint-grace": "10m"}


async def _preempting(ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator,
                      annotations: dict[str, str]) -> None:
    """``low`` (4 GPUs, the given annotations) admitted, then ``urgent`` preempting it."""
    ledgered.apply(pool(("team-a", 4), preempt=True))
    ledgered.submit(job("low", 4, annotations=annotations))
    await loop.begin()
    await loop.cycle()
    ledgered.submit(job("urgent", 4, priority="high"))
    actuator.clear()
    await loop.cycle()


async def _report(api: httpx.Client, key: str, body: dict[str, Any]) -> httpx.Response:
    # The API runs in its own thread; a blocking call would stall the test's event loop.
    return await asyncio.to_thread(api.post, f"/api/v1/workloads/{key}/checkpointed", json=body)


def _interval(ledgered: Ledgered, name: str) -> dict[str, Any]:
    (row,) = ledgered.rows(
        "SELECT u.started_at, u.ended_at, u.end_reason, u.lost_from FROM usage_intervals u "
        "JOIN workloads w ON w.id = u.workload_id WHERE w.name = :name ORDER BY u.id",
        name=name,
    )
    return row


@pytest.mark.asyncio
async def test_a_victim_with_a_grace_is_asked_to_checkpoint_not_suspended(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    await _preempting(ledgered, loop, actuator, GRACE)

    low, urgent = ledgered.workload("low"), ledgered.workload("urgent")
    assert (low["state"], low["admission"] is not None) == ("Evicting", True)
    assert low["eviction_reason"] == "Preempted"
    assert urgent["reason_code"] == "WaitingForPreemptedWorkloads"
    assert urgent["reasons"][0]["details"]["victims"] == ["team-a/low"]
    checkpoint = [a for a in actuator.actions if a.key == "team-a/low"]
    assert [a.action for a in checkpoint] == ["checkpoint"]
    assert checkpoint[0].deadline is not None and checkpoint[0].requested_at is not None
    assert checkpoint[0].deadline - checkpoint[0].requested_at == timedelta(minutes=10)
    assert _interval(ledgered, "low")["ended_at"] is None  # still held while it saves
    await loop.cycle()  # later cycles still name the deadline the victim was given
    deadline = ledgered.workload("urgent")["reasons"][0]["details"]["deadline"]
    assert datetime.fromisoformat(deadline) == low["evicted_at"] + timedelta(minutes=10)


@pytest.mark.asyncio
async def test_a_reported_checkpoint_ends_the_grace_and_little_work_is_lost(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator, api: httpx.Client
) -> None:
    await _preempting(ledgered, loop, actuator, GRACE)
    actuator.clear()

    saved = datetime.now(UTC)
    response = await _report(api, "team-a/low",
                             {"at": saved.isoformat(), "location": "s3://ckpt/low/42"})
    assert response.status_code == 200, response.text
    await loop.cycle()  # requeues the victim, releasing its quota
    await loop.cycle()  # admits the preemptor

    low = ledgered.workload("low")
    assert (low["state"], low["admission"]) == ("Pending", None)
    assert low["annotations"]["berth.dev/checkpointed-at"] == format_time(saved)
    assert low["annotations"]["berth.dev/checkpoint-location"] == "s3://ckpt/low/42"
    assert ledgered.events("low") == ["Admitted", "Evicted", "Checkpointed", "Requeued"]
    assert ledgered.workload("urgent")["state"] == "Admitted"
    assert [(a.key, a.action) for a in actuator.actions if a.action != "reason"] == [
        ("team-a/low", "evict"), ("team-a/urgent", "admit")]
    interval = _interval(ledgered, "low")
    # Lost work runs from the checkpoint, not from the admission.
    assert (interval["end_reason"], interval["lost_from"]) == ("Preempted", saved)
    assert interval["started_at"] < saved


@pytest.mark.asyncio
async def test_without_a_checkpoint_the_victim_is_suspended_when_the_grace_ends(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    await _preempting(ledgered, loop, actuator, GRACE)
    await loop.cycle()
    assert ledgered.workload("low")["state"] == "Evicting"  # the grace is not over yet

    ledgered.execute(
        "UPDATE workloads SET evicted_at = evicted_at - interval '11 minutes' WHERE name = 'low'"
    )
    actuator.clear()
    await loop.cycle()
    await loop.cycle()

    assert ledgered.workload("low")["state"] == "Pending"
    assert ledgered.workload("urgent")["state"] == "Admitted"
    evict = [a for a in actuator.actions if a.key == "team-a/low" and a.action != "reason"]
    assert [a.action for a in evict] == ["evict"]
    assert evict[0].reason is not None and "CheckpointGraceExpired" in evict[0].reason.message
    interval = _interval(ledgered, "low")
    # Nothing saved: the whole interval is lost work.
    assert (interval["end_reason"], interval["lost_from"]) == ("Preempted", interval["started_at"])


@pytest.mark.asyncio
async def test_a_checkpoint_from_before_the_eviction_does_not_end_the_grace(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator, api: httpx.Client
) -> None:
    await _preempting(ledgered, loop, actuator, GRACE)
    before = ledgered.workload("low")["evicted_at"] - timedelta(seconds=30)

    response = await _report(api, "team-a/low", {"at": before.isoformat()})
    assert response.status_code == 200, response.text
    await loop.cycle()

    assert ledgered.workload("low")["state"] == "Evicting"


@pytest.mark.asyncio
async def test_without_a_grace_the_victim_is_evicted_at_once_and_loses_everything(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    await _preempting(ledgered, loop, actuator, {})

    assert ledgered.workload("low")["state"] == "Pending"
    interval = _interval(ledgered, "low")
    assert (interval["end_reason"], interval["lost_from"]) == ("Preempted", interval["started_at"])


@pytest.mark.asyncio
async def test_a_finished_workload_closes_its_usage_as_finished(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("done", 4))
    await loop.begin()
    await loop.cycle()
    ledgered.finish("team-a", "done")

    interval = _interval(ledgered, "done")
    assert (interval["end_reason"], interval["lost_from"]) == ("Finished", None)


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        pytest.param("team-a/nobody", {}, 404, "name", id="an unknown workload is 404"),
        pytest.param("team-a/low", {"at": "yesterday"}, 422, "at", id="a time that is not RFC 3339"),
        pytest.param("team-a/low", {"at": "2026-01-01T00:00:00"}, 422, "at",
                     id="a time without a zone"),
        pytest.param("team-a/low", {"at": "2999-01-01T00:00:00Z"}, 422, "at",
                     id="a time in the future"),
        pytest.param("team-a/low", {"location": ""}, 422, "location", id="an empty location"),
        pytest.param("team-a/low", {"step": 3}, 422, "step", id="an unknown field"),
    ],
)
def test_bad_checkpoint_reports_are_refused_and_change_nothing(
    ledgered: Ledgered, api: httpx.Client, path: str, body: dict[str, Any], status: int,
    field: str,
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("low", 4))

    response = api.post(f"/api/v1/workloads/{path}/checkpointed", json=body)

    assert response.status_code == status, response.text
    assert response.json()["error"].get("field") == field
    assert "berth.dev/checkpointed-at" not in ledgered.workload("low")["annotations"]
    assert "Checkpointed" not in ledgered.events("low")


def test_a_finished_workload_refuses_a_checkpoint(
    ledgered: Ledgered, api: httpx.Client
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("low", 4))
    ledgered.finish("team-a", "low")

    response = api.post("/api/v1/workloads/team-a/low/checkpointed")

    assert response.status_code == 409
