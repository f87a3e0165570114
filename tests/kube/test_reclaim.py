"""Reclamation: quota held for Jobs that are gone is released, and every end of a Job's
usage says why (Finished, Failed, Deleted, Reclaimed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import JOBS, NS, berth, job, running, setup_queues, workload_state

from admission.kube import templates
from admission.kube.jobs import SessionScope
from admission.kube.reclaim import orphaned
from quota.core.workload import PodSet, Workload, WorkloadState

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def wl(name: str, uid: str | None = "u1", *, kind: str = "Job", created: int = 0,
       state: WorkloadState = WorkloadState.ADMITTED) -> Workload:
    notes = {} if uid is None else {templates.JOB_UID: uid}
    return Workload(NS, name, "main", (PodSet("main", 1, {"cpu": 1000}),),
                    T0 + timedelta(seconds=created), state=state, annotations=notes, kind=kind)


@pytest.mark.parametrize(
    ("workload", "live", "expected"),
    [
        pytest.param(wl("gone"), {}, ["team-a/gone"], id="its Job is not listed: reclaimed"),
        pytest.param(wl("here"), {"team-a/here": "u1"}, [], id="its Job is listed: kept"),
        pytest.param(wl("reused"), {"team-a/reused": "u2"}, ["team-a/reused"],
                     id="the name now belongs to another Job: reclaimed"),
        pytest.param(wl("new", created=60), {}, [],
                     id="recorded after the list was taken: its Job may be newer, kept"),
        pytest.param(wl("rest", uid=None), {}, [], id="submitted over REST, no Job: kept"),
        pytest.param(wl("wl", kind="Workload"), {}, [], id="a Workload object: kept"),
        pytest.param(wl("pending", state=WorkloadState.PENDING), {}, ["team-a/pending"],
                     id="a pending workload of a vanished Job is cleared too"),
        pytest.param(wl("done", state=WorkloadState.FINISHED), {}, [], id="finished: nothing"),
    ],
)
def test_which_workloads_have_lost_their_job(
    workload: Workload, live: dict[str, str | None], expected: list[str]
) -> None:
    assert orphaned([workload], live, T0 + timedelta(seconds=30)) == expected


def _ends(sessions: SessionScope, name: str) -> list[Any]:
    with sessions() as session:
        rows = session.execute(sa.text(
            "SELECT u.end_reason FROM usage_intervals u JOIN workloads w ON w.id = u.workload_id "
            "WHERE w.name = :name ORDER BY u.id"), {"name": name})
        return [r[0] for r in rows]


@pytest.mark.asyncio
async def test_a_job_deleted_while_berth_was_down_gives_its_quota_back(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("lost", 8))
        await cluster.until(lambda: running(cluster.job("lost")))
    with_crds.delete(f"{JOBS}/lost")  # nobody watching
    with_crds.create(JOBS, job("next", 8))

    async with berth(fake_api, with_crds, sessions) as cluster:
        await cluster.until(lambda: running(cluster.job("next")))
        assert workload_state(sessions, "lost") == WorkloadState.FINISHED
        assert _ends(sessions, "lost") == ["Reclaimed"]


@pytest.mark.asyncio
async def test_failed_and_deleted_jobs_close_their_usage_saying_so(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("broken", 4))
        with_crds.create(JOBS, job("removed", 4))
        await cluster.until(lambda: running(cluster.job("broken")) and running(cluster.job("removed")))
        with_crds.patch(f"{JOBS}/broken/status",
                        {"status": {"conditions": [{"type": "Failed", "status": "True"}]}})
        with_crds.delete(f"{JOBS}/removed")
        await cluster.until(lambda: workload_state(sessions, "broken") == WorkloadState.FINISHED
                            and workload_state(sessions, "removed") == WorkloadState.FINISHED)
        assert (_ends(sessions, "broken"), _ends(sessions, "removed")) == (["Failed"], ["Deleted"])
