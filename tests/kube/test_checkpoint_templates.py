"""The pure Job patches of checkpoint-aware preemption: ask once, keep what the job saved."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from builders.templates import H100, apply, evict, job

from admission.kube import templates
from quota.core.checkpoints import (
    CHECKPOINT_DEADLINE,
    CHECKPOINT_GRACE,
    CHECKPOINT_LOCATION,
    CHECKPOINT_REQUESTED,
    CHECKPOINTED_AT,
)

ASKED = datetime(2026, 11, 30, 21, 0, tzinfo=UTC)
SAVED = {CHECKPOINTED_AT: "2026-11-30T21:04:00Z", CHECKPOINT_LOCATION: "s3://b/k"}


def test_the_request_is_annotated_once_with_its_deadline() -> None:
    running = job(suspend=False)
    patch = templates.checkpoint_patch(running, ASKED, ASKED + timedelta(minutes=10))
    asked = apply(running, patch)

    assert templates.annotations_of(asked)[CHECKPOINT_REQUESTED] == "2026-11-30T21:00:00Z"
    assert templates.annotations_of(asked)[CHECKPOINT_DEADLINE] == "2026-11-30T21:10:00Z"
    assert not templates.is_suspended(asked)
    assert templates.checkpoint_patch(asked, ASKED, ASKED + timedelta(minutes=10)) is None


def test_readmission_clears_the_request_and_keeps_the_saved_checkpoint() -> None:
    notes: dict[str, Any] = {**SAVED, CHECKPOINT_REQUESTED: "x", CHECKPOINT_DEADLINE: "y"}
    evicted = job(suspend=True, annotations=notes)

    admitted = apply(evicted, templates.admit_patch(evicted, [H100]))

    kept = templates.annotations_of(admitted)
    assert {k: kept.get(k) for k in SAVED} == SAVED
    assert CHECKPOINT_REQUESTED not in kept and CHECKPOINT_DEADLINE not in kept
    again = evict(admitted)
    assert {k: templates.annotations_of(again).get(k) for k in SAVED} == SAVED


def test_the_workload_keeps_the_users_checkpoint_annotations_not_berths_notes() -> None:
    notes = {**SAVED, CHECKPOINT_GRACE: "10m", CHECKPOINT_REQUESTED: "x",
             templates.WAIT_REASON: "WaitingForQuota", "team": "vision"}

    document = templates.workload_document(job(annotations=notes))

    assert document["metadata"]["annotations"] == {
        **SAVED, CHECKPOINT_GRACE: "10m", "team": "vision", templates.JOB_UID: "u1"}
