"""Many workloads submitted or finished at once write exactly what one at a time writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from builders.loop import Ledgered, RecordingActuator, pool
from builders.manifests import job

from admission.intake.workloads import finish_workload, submit_workload, submit_workloads
from admission.loop.loop import AdmissionLoop
from quota.core.errors import Conflict
from quota.ledger.lifecycle import finish_locked
from quota.ledger.repository import Ledger

pytestmark = pytest.mark.asyncio

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# Columns compared between the two paths (ids, xids and write times differ by nature).
COLUMNS = ("namespace, name, kind, queue_name, cluster_queue, priority, priority_class, "
           "pod_sets, state, active, admission, created_at, reason_code, reasons, hints, "
           "queue_position, evaluated_at, version, labels, annotations")


def _docs() -> list[tuple[dict[str, Any], datetime]]:
    return [
        (job("a", 1), T0),
        (job("b", 2, priority="high"), T0 + timedelta(milliseconds=5)),
        (job("c", 1, namespace="team-b"), T0 + timedelta(seconds=1)),
    ]


def _written(ledgered: Ledgered, audit_after: int = 0) -> dict[str, list[dict[str, Any]]]:
    return {
        "workloads": ledgered.rows(f"SELECT {COLUMNS} FROM workloads ORDER BY namespace, name"),
        "timeline": ledgered.rows(
            "SELECT w.name, r.code, r.message, r.details, r.since, r.until FROM wait_reasons r "
            "JOIN workloads w ON w.id = r.workload_id ORDER BY w.name"
        ),
        "audit": ledgered.rows(
            "SELECT actor, action, kind, namespace, name, before, before IS NULL AS none, after "
            "FROM audit_log "
            "WHERE kind = 'Workload' AND id > :after ORDER BY name, id",
            after=audit_after,
        ),
        "events": ledgered.rows(
            "SELECT w.name, e.type, e.reason, e.details FROM workload_events e "
            "JOIN workloads w ON w.id = e.workload_id ORDER BY w.name, e.id"
        ),
        "usage": ledgered.rows(
            "SELECT w.name, u.amount, u.ended_at IS NULL AS open, u.end_reason "
            "FROM usage_intervals u JOIN workloads w ON w.id = u.workload_id ORDER BY w.name"
        ),
    }


def _clear(ledgered: Ledgered) -> int:
    """Empty the workload tables; the last audit id (the audit log is append-only)."""
    with ledgered.sessions() as session:
        session.connection().exec_driver_sql(
            "TRUNCATE workloads, wait_reasons, workload_events, usage_intervals CASCADE"
        )
    return int(ledgered.rows("SELECT COALESCE(MAX(id), 0) AS id FROM audit_log")[0]["id"])


async def test_bulk_submission_writes_what_one_by_one_writes(ledgered: Ledgered) -> None:
    ledgered.apply(pool(("team-a", 4), ("team-b", 4)))
    with ledgered.sessions() as session:
        for doc, created in _docs():
            submit_workload(Ledger(session), doc, now=created, actor="test")
    one_by_one = _written(ledgered)
    mark = _clear(ledgered)

    with ledgered.sessions() as session:
        submitted = submit_workloads(Ledger(session), _docs(), actor="test")

    assert [w.key for w in submitted] == ["team-a/a", "team-a/b", "team-b/c"]
    written = _written(ledgered, mark)
    assert len(written["workloads"]) == len(written["timeline"]) == len(written["audit"]) == 3
    assert written == one_by_one


@pytest.mark.parametrize(
    "second",
    [
        pytest.param([(job("a", 1), T0)], id="an unfinished workload has the name"),
        pytest.param([(job("x", 1), T0), (job("x", 2), T0)], id="twice in one batch"),
    ],
)
async def test_a_taken_name_refuses_the_whole_batch(
    ledgered: Ledgered, second: list[tuple[dict[str, Any], datetime]]
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("a", 1))
    before = _written(ledgered)

    with pytest.raises(Conflict) as raised, ledgered.sessions() as session:
        submit_workloads(Ledger(session), [(job("ok", 1), T0), *second], actor="test")

    assert raised.value.field == "metadata.name"
    assert _written(ledgered) == before


async def test_finishing_locked_rows_writes_what_finishing_each_writes(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    for name in ("a", "b"):
        ledgered.submit(job(name, 1))
    await loop.begin()
    await loop.cycle()
    with ledgered.sessions() as session:
        for name in ("a", "b"):
            finish_workload(Ledger(session), "team-a", name, now=T0, actor="test")
    one_by_one = _written(ledgered)
    mark = _clear(ledgered)
    for name in ("a", "b"):
        ledgered.submit(job(name, 1))
    await loop.begin()
    await loop.cycle()

    with ledgered.sessions() as session:
        rows = session.connection().exec_driver_sql(
            "SELECT id, namespace, name, state, version FROM workloads ORDER BY id FOR UPDATE"
        ).mappings().all()
        finish_locked(session, rows, now=T0, actor="test")

    written = _written(ledgered, mark)
    assert {w["state"] for w in written["workloads"]} == {"Finished"}
    assert _comparable(written) == _comparable(one_by_one)


def _comparable(written: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    # Submission and admission times differ between the two runs: compare the rest.
    out: dict[str, Any] = dict(written)
    out["workloads"] = [{k: v for k, v in w.items() if k not in ("created_at", "evaluated_at")}
                        for w in written["workloads"]]
    out["timeline"] = [(t["name"], t["code"], t["until"] is None) for t in written["timeline"]]
    out["audit"] = [{k: v for k, v in a.items() if k != "after" or a["action"] != "create"}
                    for a in written["audit"]]
    return out
