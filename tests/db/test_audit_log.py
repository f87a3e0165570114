"""The audit log is append-only: the database itself refuses to rewrite or erase it. Every
writer appends through ``quota.ledger.audit``: one row per change, the same shape."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from builders.ledger import T0, cluster_queue, workload
from sqlalchemy.orm import Session

from admission.intake.workloads import submit_workloads
from quota.core.cycle_writes import Event, Transition
from quota.core.model import Node, NodeHealth
from quota.core.workload import Admission, PodSetAssignment, WorkloadState
from quota.ledger import checkpoints, decisions, lifecycle, nodes
from quota.ledger.repository import Ledger

TAMPERING = [
    pytest.param("UPDATE audit_log SET actor = 'mallory'", id="rewriting who did it"),
    pytest.param("DELETE FROM audit_log", id="erasing entries"),
    pytest.param("TRUNCATE audit_log", id="truncating the table"),
]


@pytest.mark.parametrize("statement", TAMPERING)
def test_audit_log_refuses_tampering(ledger: Ledger, session: Session, statement: str) -> None:
    ledger.upsert(cluster_queue(), actor="alice")
    session.commit()

    with pytest.raises(sa.exc.DBAPIError, match="append-only"):
        session.execute(sa.text(statement))

    session.rollback()
    assert [e["actor"] for e in ledger.audit_entries()] == ["alice"]


def test_every_writer_appends_one_row_per_change(ledger: Ledger, session: Session) -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    admission = Admission("team-a", (PodSetAssignment("main", 1, {"cpu": "default"}, {"cpu": 1000}),))
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "two", "namespace": "team-a",
                        "labels": {"kueue.x-k8s.io/queue-name": "main"}},
           "spec": {"template": {"spec": {"containers": [
               {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}}

    ledger.upsert(cluster_queue(), actor="alice")
    ledger.upsert(Node("n1", capacity={"cpu": 1000}), actor="bob")
    nodes.set_health(session, "n1", NodeHealth.HEALTHY, NodeHealth.CORDONED, why="xid", actor="op")
    one = ledger.add_workload(workload("one"), actor="api")
    submit_workloads(ledger, [(job, T0)], actor="kube")
    admit = Transition(one, 1, "team-a", "one", WorkloadState.PENDING, WorkloadState.ADMITTED,
                       admission, (Event("Admitted"),), admits=True)
    decisions.write_transitions(session, [admit], now=now, actor="loop")
    checkpoints.record_checkpoint(session, "team-a", "one", at=now, location=None, now=now,
                                  actor="job")
    lifecycle.finish(session, "team-a", "two", now=now + timedelta(seconds=1), actor="api")
    ledger.delete("ClusterQueue", "team-a", actor="carol")

    rows = session.execute(sa.text(
        "SELECT actor, action, kind, namespace, name, before IS NULL, after IS NULL, "
        "at = now() FROM audit_log ORDER BY id"
    )).all()
    assert [tuple(r) for r in rows] == [
        ("alice", "create", "ClusterQueue", None, "team-a", True, False, True),
        ("bob", "create", "Node", None, "n1", True, False, True),
        ("op", "update", "Node", None, "n1", False, False, True),
        ("api", "create", "Workload", "team-a", "one", True, False, True),
        ("kube", "create", "Workload", "team-a", "two", True, False, True),
        ("loop", "update", "Workload", "team-a", "one", False, False, True),
        ("job", "update", "Workload", "team-a", "one", False, False, True),
        ("api", "update", "Workload", "team-a", "two", False, False, True),
        ("carol", "delete", "ClusterQueue", None, "team-a", False, True, True),
    ]
    node, loop = (ledger.audit_entries("Node")[-1], ledger.audit_entries("Workload", "one")[1])
    assert (node["before"], node["after"]) == ({"health": "Healthy"},
                                               {"health": "Cordoned", "why": "xid"})
    assert (loop["before"]["state"], loop["after"]["state"]) == ("Pending", "Admitted")
