"""Workloads in the ledger: identity, listing in pending order, and conditional state changes."""

from __future__ import annotations

from datetime import timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa
from builders.ledger import T0, workload
from sqlalchemy.orm import Session

from quota.core.errors import Conflict, InvalidInput
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.workload import Admission, PodSetAssignment, WorkloadState, pending_order
from quota.ledger.repository import Ledger

EVICTION, CREATION = RequeuingTimestamp.EVICTION, RequeuingTimestamp.CREATION
ADMISSION = Admission("team-a", (PodSetAssignment("main", 2, {"cpu": "default"}, {"cpu": 1000}),))


def test_added_workload_reads_back_equal_and_is_audited(ledger: Ledger) -> None:
    submitted = workload(priority=5, labels={"app": "llm"}, annotations={"note": "ü"})

    new_id = ledger.add_workload(submitted, actor="api")

    assert new_id > 0
    assert ledger.get_workload("team-a", "train") == submitted
    assert ledger.version("Workload", "train", "team-a") == 1
    [entry] = ledger.audit_entries("Workload", "train")
    assert (entry["action"], entry["namespace"], entry["after"]["version"]) == (
        "create",
        "team-a",
        1,
    )


def test_second_unfinished_workload_with_the_same_name_is_a_conflict(ledger: Ledger) -> None:
    ledger.add_workload(workload(), actor="api")
    with pytest.raises(Conflict, match="already exists"):
        ledger.add_workload(workload(priority=9), actor="api")


def test_a_name_can_be_reused_once_its_workload_finished(ledger: Ledger, session: Session) -> None:
    ledger.add_workload(workload(), actor="api")
    assert ledger.set_workload_state("team-a", "train", 1, state=WorkloadState.FINISHED)

    ledger.add_workload(workload(priority=7), actor="api")

    current = ledger.get_workload("team-a", "train")
    assert current is not None and current.priority == 7
    assert current.state == WorkloadState.PENDING
    rows = session.execute(
        sa.text("SELECT state, finished_at IS NOT NULL FROM workloads ORDER BY id")
    ).all()
    assert [tuple(r) for r in rows] == [("Finished", True), ("Pending", False)]


def test_stale_version_changes_nothing(ledger: Ledger) -> None:
    ledger.add_workload(workload(), actor="api")
    assert ledger.set_workload_state(
        "team-a", "train", 1, state=WorkloadState.ADMITTED, admission=ADMISSION, admitted_at=T0
    )

    assert not ledger.set_workload_state("team-a", "train", 1, state=WorkloadState.PENDING)

    current = ledger.get_workload("team-a", "train")
    assert current is not None
    assert (current.state, current.admission, current.admitted_at) == ("Admitted", ADMISSION, T0)
    assert ledger.version("Workload", "train", "team-a") == 2


def test_update_of_a_workload_that_does_not_exist_returns_false(ledger: Ledger) -> None:
    assert not ledger.set_workload_state("team-a", "ghost", 1, state=WorkloadState.ADMITTED)


def test_admission_sets_and_requeue_clears_the_cluster_queue(
    ledger: Ledger, session: Session
) -> None:
    ledger.add_workload(workload(), actor="api")

    def cluster_queue() -> Any:
        return session.execute(sa.text("SELECT cluster_queue FROM workloads")).scalar()

    ledger.set_workload_state("team-a", "train", 1, state="Admitted", admission=ADMISSION)
    assert cluster_queue() == "team-a"
    ledger.set_workload_state(
        "team-a", "train", 2, state="Pending", admission=None, eviction_count=1
    )
    assert cluster_queue() is None
    current = ledger.get_workload("team-a", "train")
    assert current is not None and (current.eviction_count, current.admission) == (1, None)


BAD_CHANGES = [
    pytest.param({"colour": "red"}, TypeError, id="unknown field"),
    pytest.param({"state": "Sleeping"}, ValueError, id="state outside the vocabulary"),
    pytest.param({"admission": "team-a"}, TypeError, id="admission that is not an Admission"),
    pytest.param({"admitted_at": T0.replace(tzinfo=None)}, InvalidInput, id="naive admission time"),
]


@pytest.mark.parametrize(("changes", "error"), BAD_CHANGES)
def test_bad_changes_are_refused_before_touching_the_row(
    ledger: Ledger, changes: dict[str, Any], error: type[Exception]
) -> None:
    ledger.add_workload(workload(), actor="api")
    with pytest.raises(error):
        ledger.set_workload_state("team-a", "train", 1, **changes)
    assert ledger.version("Workload", "train", "team-a") == 1


def test_list_filters_by_state_in_pending_order(ledger: Ledger) -> None:
    later = T0 + timedelta(minutes=1)
    ledger.add_workload(workload("old-low", created_at=T0), actor="api")
    ledger.add_workload(workload("new-high", created_at=later, priority=10), actor="api")
    ledger.add_workload(workload("new-low", created_at=later), actor="api")
    ledger.add_workload(
        workload("running", state=WorkloadState.ADMITTED, admission=ADMISSION), actor="api"
    )

    pending = ledger.list_workloads(states=[WorkloadState.PENDING])

    assert [w.name for w in pending] == ["new-high", "old-low", "new-low"]
    assert [w.name for w in ledger.list_workloads(cluster_queue="team-a")] == ["running"]
    assert len(ledger.list_workloads()) == 4
    assert ledger.list_workloads(namespace="elsewhere") == []


# Equal priority and creation time, added so that neither the row id nor (namespace, name)
# gives the key order: '-' and '.' sort before '/', so "team-a/y" goes before "team/z".
TIES = [("team-b", "x"), ("team", "z"), ("team-a", "y"), ("team", "a.b"), ("team", "ab"),
        ("team", "a-b"), ("team", "a")]


def test_sql_pending_order_is_the_core_order_tie_breaks_included(ledger: Ledger) -> None:
    later = T0 + timedelta(seconds=1)
    added = [workload(name, namespace, created_at=T0) for namespace, name in TIES]
    added += [workload("late", "team", created_at=later), workload("urgent", "zz", priority=3)]
    for each in added:
        ledger.add_workload(each, actor="api")

    listed = [w.key for w in ledger.list_workloads(states=[WorkloadState.PENDING])]

    assert listed == [w.key for w in sorted(added, key=lambda w: pending_order(w, EVICTION))]
    assert listed[1:8] != sorted(listed[1:8], key=lambda key: tuple(key.split("/")))
    assert listed[1:8] != [w.key for w in added[:7]]


# (name, created minute, last eviction (minute, reason) or None): stored as the loop
# stores them, in the evicted_at and eviction_reason columns.
EVICTED = [("fresh", 2, None), ("timed-out", 0, (5, "PodsReadyTimeout")),
           ("retried", 1, (4, "AdmissionCheck")), ("preempted", 0, (1, "Preempted")),
           ("late", 3, None)]


@pytest.mark.parametrize(
    ("timestamp", "expected"),
    [
        pytest.param(EVICTION, ["preempted", "fresh", "late", "retried", "timed-out"],
                     id="eviction: a timeout and a check's Retry queue from their eviction"),
        pytest.param(CREATION, ["preempted", "timed-out", "fresh", "late", "retried"],
                     id="creation: only a check's Retry queues from its eviction"),
    ],
)  # fmt: skip
def test_sql_pending_order_follows_the_requeuing_timestamp_as_the_core_does(
    ledger: Ledger, session: Session, timestamp: RequeuingTimestamp, expected: list[str]
) -> None:
    for name, created, eviction in EVICTED:
        ledger.add_workload(workload(name, created_at=T0 + timedelta(minutes=created)),
                            actor="api")  # fmt: skip
        if eviction is not None:
            session.execute(
                sa.text("UPDATE workloads SET evicted_at = :at, eviction_reason = :why, "
                        "eviction_count = 1 WHERE name = :name"),
                {"at": T0 + timedelta(minutes=eviction[0]), "why": eviction[1], "name": name},
            )  # fmt: skip

    listed = ledger.list_workloads(states=[WorkloadState.PENDING], timestamp=timestamp)

    assert [w.name for w in listed] == expected
    assert listed == sorted(listed, key=lambda w: pending_order(w, timestamp))


def test_times_in_any_zone_read_back_as_the_same_instant(ledger: Ledger) -> None:
    tokyo = T0.astimezone(timezone(timedelta(hours=9)))
    ledger.add_workload(workload(created_at=tokyo), actor="api")
    current = ledger.get_workload("team-a", "train")
    assert current is not None and current.created_at == T0


def test_naive_creation_time_is_refused(ledger: Ledger) -> None:
    with pytest.raises(InvalidInput, match="time zone"):
        ledger.add_workload(workload(created_at=T0.replace(tzinfo=None)), actor="api")
