"""Pod readiness for waitForPodsReady: how many pods of a workload's current run are Ready.

The Pod watcher hands every pod event of a workload's pods to ``ReadinessTracker``; when
the number of Ready pods of a workload changes, the tracker compares it with the pods the
workload was admitted with and records, in the ledger, that its pods are all Ready or no longer are
(``quota.ledger.readiness``). Timing out is the admission loop's. ``ready_pod_count`` is
the one question asked of the pods; which pods are a workload's, each kind's adapter says
(``kinds.registry.pod_claim``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta

from admission.kube.client import Obj
from admission.kube.jobs import SessionScope
from admission.kube.kinds.registry import by_kind
from quota.core.workload import Workload, WorkloadState
from quota.ledger.readiness import record_readiness
from quota.ledger.repository import Ledger

# (namespace, owner name): the workload a pod belongs to
Owner = tuple[str, str]


def pod_ready(pod: Obj) -> bool:
    """Whether ``pod`` counts as Ready: its Ready condition True, or it has succeeded (as
    Kueue counts a Job's ``ready + succeeded`` pods); not when failed or being deleted."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    if status.get("phase") == "Succeeded":
        return True
    if meta.get("deletionTimestamp") or status.get("phase") == "Failed":
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in status.get("conditions") or [])  # fmt: skip


def run_start(workload: Workload) -> datetime:
    """From when a pod belongs to the workload's current run: creation timestamps have
    whole seconds, so a second of slack. A gated kind's pods (a pod group) exist before
    admission, and eviction deletes them: every pod there is of the current run."""
    adapter = by_kind(workload.kind)
    if workload.admitted_at is None or (adapter is not None and adapter.gate is not None):
        return datetime.min.replace(tzinfo=UTC)
    return workload.admitted_at.replace(microsecond=0) - timedelta(seconds=1)


def ready_pod_count(ready: Mapping[str, datetime | None], workload: Workload) -> int:
    """How many of the Ready pods (uid -> creation time) belong to the workload's current
    run (``run_start``)."""
    if workload.admitted_at is None:
        return 0
    since = run_start(workload)
    return sum(1 for created in ready.values() if created is None or created >= since)


def pods_admitted(workload: Workload) -> int:
    """How many pods the workload was admitted with (all pod sets)."""
    admission = workload.admission
    return 0 if admission is None else sum(p.count for p in admission.pod_sets)


class ReadinessTracker:
    """The Ready pods of each owner; records all-Ready (or not any more) in the ledger."""

    def __init__(self, sessions: SessionScope, clock: Callable[[], datetime]) -> None:
        self.sessions = sessions
        self.clock = clock
        self.ready: dict[Owner, dict[str, datetime | None]] = {}

    async def observe(self, kind: str, owner: Owner, kinds: frozenset[str], uid: str,
                      pod: Obj, created: datetime | None) -> bool:  # fmt: skip
        """Take one pod event; whether the ledger changed."""
        pods = self.ready.setdefault(owner, {})
        before = len(pods)
        if kind != "DELETED" and pod_ready(pod):
            pods[uid] = created
        else:
            pods.pop(uid, None)
        if len(pods) == before:
            return False
        snapshot = dict(pods)
        if not pods:
            del self.ready[owner]
        return await asyncio.to_thread(self._record, owner, kinds, snapshot)

    def _record(self, owner: Owner, kinds: frozenset[str],
                ready: Mapping[str, datetime | None]) -> bool:  # fmt: skip
        namespace, name = owner
        with self.sessions() as session:
            workload = Ledger(session).get_workload(namespace, name)
            if workload is None or workload.state is not WorkloadState.ADMITTED:
                return False
            if workload.kind not in kinds:
                return False  # another kind's pods under the same name
            wanted = pods_admitted(workload)
            all_ready = wanted > 0 and ready_pod_count(ready, workload) >= wanted
            return record_readiness(session, namespace, name, ready=all_ready, now=self.clock())
