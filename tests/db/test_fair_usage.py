"""The ledger's decayed usage is the pure formula's (``quota.core.fairness.decayed``), summed
per ClusterQueue and slot, and per LocalQueue weighted (real PostgreSQL)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from builders.manifests import job
from sqlalchemy.orm import Session

from admission.intake.workloads import submit_workload
from quota.core.fairness import AdmissionFairSharing, Held, decayed
from quota.ledger.reads.fair_usage import decayed_queue_usage, local_queue_usage
from quota.ledger.repository import Ledger

NOW = datetime(2026, 1, 8, tzinfo=UTC)
H = timedelta(hours=1)
# (workload namespace, cluster queue, amount, started hours ago, ended hours ago or None)
INTERVALS = [
    ("a", "team-a", 8000, 168, 144),  # a week ago, for a day
    ("b", "team-b", 8000, 24, 12),  # yesterday
    ("b", "team-b", 2000, 2, None),  # running now
    ("b", "team-b", 4000, 2000, 1990),  # beyond 40 half-lives: not read, weighs nothing
]


def _held(namespace: str | None = None, cq: str | None = None) -> list[Held]:
    return [Held(amount, NOW - start * H, None if end is None else NOW - end * H)
            for ns, q, amount, start, end in INTERVALS
            if (namespace is None or ns == namespace) and (cq is None or q == cq)]


def _record(ledger: Ledger, session: Session) -> None:
    for namespace in ("a", "b"):
        submit_workload(ledger, job("w", 1, namespace=namespace), now=NOW - 3000 * H,
                        actor="test")
    for ns, cq, amount, start, end in INTERVALS:
        session.execute(sa.text(
            "INSERT INTO usage_intervals (workload_id, cluster_queue, flavor, resource, amount, "
            "started_at, ended_at, end_reason) SELECT id, :cq, 'gpu', 'nvidia.com/gpu', :amount, "
            ":start, :end, CASE WHEN CAST(:end AS timestamptz) IS NULL THEN NULL "
            "ELSE 'Finished' END FROM workloads WHERE namespace = :ns"),
            {"cq": cq, "amount": amount, "start": NOW - start * H,
             "end": None if end is None else NOW - end * H, "ns": ns})


@pytest.mark.parametrize("half_life", [
    pytest.param(24 * H, id="a day's half-life"),
    pytest.param(72 * H, id="three days'"),
    pytest.param(timedelta(0), id="zero: only what is held now"),
])  # fmt: skip
def test_decayed_usage_per_cluster_queue_is_the_formulas(
    ledger: Ledger, session: Session, half_life: timedelta
) -> None:
    _record(ledger, session)
    found = decayed_queue_usage(session, NOW, half_life)
    slot = ("gpu", "nvidia.com/gpu")
    for cq in ("team-a", "team-b"):
        expected = decayed(_held(cq=cq), NOW, half_life)
        assert math.isclose(found.get(cq, {}).get(slot, 0), expected, abs_tol=1), cq


def test_local_queue_usage_is_the_formulas_weighted(ledger: Ledger, session: Session) -> None:
    _record(ledger, session)
    afs = AdmissionFairSharing(24 * H, timedelta(minutes=5), {"nvidia.com/gpu": 2000})
    found = local_queue_usage(session, NOW, afs, {"b/main": 4000})
    penalty = afs.entry_penalty()
    a = decayed(_held("a"), NOW, afs.half_life, penalty) / 1000 * 2
    b = decayed(_held("b"), NOW, afs.half_life, penalty) / 1000 * 2 / 4
    assert math.isclose(found["a/main"], a, rel_tol=1e-9)
    assert math.isclose(found["b/main"], b, rel_tol=1e-9)
    assert found["b/main"] > found["a/main"]  # not vacuous: yesterday weighs more than last week
