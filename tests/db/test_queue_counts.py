"""Pending and admitted counts per ClusterQueue: one query (``queues.queue_counts``) behind
the REST status, its cached form, metrics, the dashboard and the Kubernetes status."""

from __future__ import annotations

from builders.ledger import cluster_queue, workload
from sqlalchemy.orm import Session

from quota.core.cycle_writes import Verdict
from quota.core.model import LocalQueue, ResourceFlavor
from quota.core.workload import Admission, PodSetAssignment, WorkloadState
from quota.ledger import lifecycle
from quota.ledger.reads.queue_cache import QuotaObjectCache, cached_queue_statuses
from quota.ledger.reads.queues import queue_statuses
from quota.ledger.reads.status import cluster_queue_counts, local_queue_counts
from quota.ledger.repository import Ledger

WAITING = {"code": "WaitingForQuota", "message": "no room", "details": {}}


def _held(cq: str) -> Admission:
    return Admission(cq, (PodSetAssignment("main", 1, {"cpu": "default"}, {"cpu": 1000}),))


def test_every_read_counts_pending_and_admitted_work_alike(ledger: Ledger, session: Session) -> None:
    ledger.upsert(ResourceFlavor("default"), actor="test")
    for name in ("team-a", "team-b"):
        ledger.upsert(cluster_queue(name), actor="test")
        ledger.upsert(LocalQueue(name, "main", name), actor="test")
    # Pending: one not evaluated yet (no code), two with a verdict; holders: admitted, evicting.
    ledger.add_workload(workload("fresh", "team-a"), actor="test")
    for name in ("waits-1", "waits-2"):
        new = ledger.add_workload(workload(name, "team-a"), actor="test")
        verdict = Verdict("WaitingForQuota", (WAITING,))
        lifecycle.set_first_verdict(session, new, verdict, WAITING, workload().created_at)
    ledger.add_workload(workload("checks", "team-a", state=WorkloadState.QUOTA_RESERVED,
                                 admission=_held("team-a")), actor="test")
    ledger.add_workload(workload("runs", "team-a", state=WorkloadState.ADMITTED,
                                 admission=_held("team-a")), actor="test")
    ledger.add_workload(workload("saves", "team-b", state=WorkloadState.EVICTING,
                                 admission=_held("team-b")), actor="test")
    ledger.add_workload(workload("done", "team-b", state=WorkloadState.FINISHED), actor="test")

    rest = {s.name: (s.pending, s.reserving, s.admitted, dict(s.pending_by_reason))
            for s in queue_statuses(session)}
    cached = {s.name: (s.pending, s.reserving, s.admitted, dict(s.pending_by_reason))
              for s in cached_queue_statuses(session, ["team-a", "team-b"], QuotaObjectCache())}
    kube = {name: (c.pending, c.reserving, c.admitted, dict(c.pending_reasons))
            for name, c in cluster_queue_counts(session).items()}

    expected = {
        # A quota reservation waiting for its checks reserves but is not admitted.
        "team-a": (3, 2, 1, {"PendingEvaluation": 1, "WaitingForQuota": 2}),
        "team-b": (0, 1, 1, {}),
    }
    assert rest == cached == kube == expected
    local = {key: (c.pending, c.reserving, c.admitted)
             for key, c in local_queue_counts(session).items()}
    assert local == {("team-a", "main"): (3, 2, 1), ("team-b", "main"): (0, 1, 1)}
