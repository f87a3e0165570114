"""How one cycle queues its pending workloads (PURE): a mixin of the admission cycle.

Every pending workload goes to its ClusterQueue's list in queue order, or is held with what
keeps it out before any quota is measured: a LocalQueue or ClusterQueue that cannot take
it, an inactive workload, an unknown priority class, an invalid request, a backoff.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from admission.engine import check_states, reasons
from admission.engine.checks import queue_reasons, static_reasons
from admission.engine.cycle_memo import CycleMemo
from admission.engine.cycle_reasons import WaitReasons
from admission.engine.flavors import Assigner
from admission.engine.queues import Entry, entry
from admission.engine.statuses import Waiting
from admission.engine.types import Snapshot
from admission.engine.workload import is_pending, request_problem
from quota.core.model import ClusterQueue
from quota.core.reasons import WaitReason
from quota.core.workload import Workload, WorkloadState

# Reasons worth adding to a workload that is held back anyway: they will not go away alone.
_PERMANENT = frozenset({WaitReason.NO_MATCHING_FLAVOR, WaitReason.EXCEEDS_MAX_QUOTA})


class PendingQueues:
    """What ``_Cycle`` queues its pending workloads with; the cycle sets the attributes."""

    snapshot: Snapshot
    now: datetime
    queues: Mapping[str, ClusterQueue]
    inactive: dict[str, str]  # inactive ClusterQueue -> why
    waiting: dict[str, Waiting]
    assigner: Assigner
    memo: CycleMemo
    why: WaitReasons

    def _classify(self) -> dict[str, list[Entry]]:
        """Split pending workloads into per-queue lists; record what holds the rest back."""
        queued: dict[str, list[Entry]] = {}
        # What a LocalQueue says of every workload sent through it: (ClusterQueue, clear).
        routes: dict[tuple[str, str], tuple[str | None, bool]] = {}
        classes = self.snapshot.priority_classes
        pending = WorkloadState.PENDING
        timestamp = self.snapshot.pods_ready.timestamp
        kept = self.snapshot.entries  # entries kept across cycles, when the loop has them
        if kept is not None:
            kept.prune(self.snapshot.workloads)
        make = entry if kept is None else kept.entry
        for key, workload in self.snapshot.workloads.items():
            if workload.state is not pending:
                if is_pending(workload):
                    self._hold(key, workload)
                continue
            lq = (workload.namespace, workload.queue_name)
            route = routes.get(lq)
            if route is None:
                cq_name, held = queue_reasons(self.snapshot, *lq, self.inactive)
                route = routes[lq] = (cq_name, not held and cq_name is not None)
            target, clear = route
            pc = workload.priority_class
            if clear and workload.requeue_at is not None:  # an admission check's Retry
                backoff = check_states.backing_off(workload, self.now)
                if backoff is not None:
                    self.waiting[key] = Waiting(target, [backoff])
                    continue
            if not clear or not workload.active or (pc is not None and pc not in classes):
                self._hold(key, workload)
                continue
            found = make(key, workload, timestamp)
            if found is None:  # an invalid request
                self._hold(key, workload)
                continue
            assert target is not None  # clear: the LocalQueue names a ClusterQueue
            until = workload.requeue_at
            if until is not None and until > self.now:  # backing off after PodsReadyTimeout
                self.waiting[key] = Waiting(
                    target, [reasons.pods_ready_backoff(until, workload.requeue_count)])
                continue
            queued.setdefault(target, []).append(found)
        for entries in queued.values():
            entries.sort()
        used = self.snapshot.queue_usage
        if used is not None:  # admission fair sharing: the least used LocalQueue first
            for name, entries in queued.items():
                if self.queues[name].usage_based_admission:
                    entries.sort(key=lambda e: used.get(
                        f"{e.workload.namespace}/{e.workload.queue_name}", 0.0))  # stable
        return queued

    def _hold(self, key: str, workload: Workload) -> None:
        """Record what holds a pending workload back before any quota is measured."""
        cq_name, held = static_reasons(self.snapshot, workload, self.inactive)
        if (cq_name is not None and cq_name in self.queues
                and cq_name not in self.inactive and request_problem(workload) is None):
            cq = self.queues[cq_name]
            plan = self.assigner.assign(cq, workload)
            held += [r for r in self.why.plan_reasons(plan) if r.code in _PERMANENT]
            too_big = self.why.oversized(cq, workload, self.memo.shape(workload, key))
            held += [too_big] if too_big else []
        self.waiting[key] = Waiting(cq_name, held)
