"""Checkpoint-aware preemption on real Jobs (fake apiserver, real client, real PostgreSQL): the
victim is asked to checkpoint and keeps running, is suspended once its Job reports a
checkpoint, and resumes later with its checkpoint annotations intact."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import JOBS, NS, berth, job, running, setup_queues, workload_state

from admission.kube.jobs import SessionScope
from quota.core.checkpoints import (
    CHECKPOINT_DEADLINE,
    CHECKPOINT_GRACE,
    CHECKPOINT_LOCATION,
    CHECKPOINT_REQUESTED,
    CHECKPOINTED_AT,
    format_time,
    parse_time,
)
from quota.core.workload import WorkloadState
from quota.ledger.repository import Ledger

pytestmark = pytest.mark.asyncio


def notes_of(obj: dict[str, object]) -> dict[str, str]:
    meta = obj.get("metadata") or {}
    assert isinstance(meta, dict)
    found: dict[str, str] = meta.get("annotations") or {}
    return found


async def test_a_victim_checkpoints_is_suspended_and_resumes_from_its_checkpoint(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds, preemption="LowerPriority")
    async with berth(fake_api, with_crds, sessions) as cluster:
        low = job("low", 8)
        low["metadata"]["annotations"] = {CHECKPOINT_GRACE: "10m"}
        with_crds.create(JOBS, low)
        await cluster.until(lambda: running(cluster.job("low")))
        with sessions() as session:
            stored = Ledger(session).get_workload(NS, "low")
        assert stored is not None and stored.annotations.get(CHECKPOINT_GRACE) == "10m"

        with_crds.create(JOBS, job("high", 8, priority="high"))
        await cluster.until(lambda: CHECKPOINT_REQUESTED in notes_of(cluster.job("low")))
        asked = notes_of(cluster.job("low"))
        deadline = parse_time(asked[CHECKPOINT_DEADLINE]) - parse_time(asked[CHECKPOINT_REQUESTED])
        assert deadline.total_seconds() == 600
        assert running(cluster.job("low"))  # still running: it has a checkpoint to write
        assert not running(cluster.job("high"))
        assert workload_state(sessions, "low") == WorkloadState.EVICTING
        events = with_crds.get(f"/api/v1/namespaces/{NS}/events")["items"]
        requested = [e for e in events
                     if e["involvedObject"]["name"] == "low" and e["reason"] == "CheckpointRequested"]
        assert len(requested) == 1 and CHECKPOINTED_AT in requested[0]["message"]

        saved = format_time(datetime.now(UTC))
        with_crds.patch(f"{JOBS}/low", {"metadata": {"annotations": {
            CHECKPOINTED_AT: saved, CHECKPOINT_LOCATION: "pvc://ckpt/low/7"}}})
        await cluster.until(lambda: running(cluster.job("high")))
        assert not running(cluster.job("low"))
        assert workload_state(sessions, "low") == WorkloadState.PENDING

        with_crds.patch(f"{JOBS}/high/status",
                        {"status": {"conditions": [{"type": "Complete", "status": "True"}]}})
        await cluster.until(lambda: running(cluster.job("low")))
        resumed = notes_of(cluster.job("low"))
        assert (resumed[CHECKPOINTED_AT], resumed[CHECKPOINT_LOCATION]) == (
            saved, "pvc://ckpt/low/7")
        assert CHECKPOINT_REQUESTED not in resumed and CHECKPOINT_DEADLINE not in resumed
        with sessions() as session:
            again = Ledger(session).get_workload(NS, "low")
        assert again is not None and again.annotations.get(CHECKPOINTED_AT) == saved
