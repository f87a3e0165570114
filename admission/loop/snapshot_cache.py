"""The loop's in-memory view of the ledger, refreshed by what changed since the last look.

Objects (flavors, queues, quotas, nodes, …) change rarely and are reloaded whole when any
object table was written (``objects_version`` differs from the one read with them).
Workloads change often: only rows written since the last mark are read, except rows the
loop wrote itself (it already holds what it committed).

Fair sharing with memory and admission fair sharing read decayed usage from the usage
intervals; that aggregate is read again after a cycle that admitted or evicted (so the
entry penalty counts from the next cycle, as in ``berth simulate``) and otherwise once it is
older than the sampling interval (``admissionFairSharing.usageSamplingInterval``, Kueue's
pace; a minute for memory alone): between changes it moves by a fraction of a percent per
minute at any useful half-life.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from admission.engine.queues import EntryMemo
from admission.engine.shapes import ShapeMemo
from admission.engine.types import Snapshot
from quota.core.checks import AdmissionCheck, ProvisioningRequestConfig
from quota.core.cycle_writes import WorkloadRecord
from quota.core.fairness import Fairness
from quota.core.model import (
    ClusterQueue,
    Cohort,
    LocalQueue,
    Namespace,
    Node,
    PriorityClass,
    ResourceFlavor,
    Topology,
)
from quota.core.pods_ready import DISABLED, PodsReadyPolicy
from quota.core.workload import Workload, WorkloadState
from quota.ledger import changes
from quota.ledger.reads import fair_usage
from quota.ledger.repository import Ledger

_MEMORY_SAMPLING = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Refreshed:
    full: bool
    objects: bool  # objects were reloaded
    workloads: int  # workload rows read


class SnapshotCache:
    """Objects and unfinished workloads as last read or written by the loop."""

    def __init__(self, *, fair_sharing: bool = False, fairness: Fairness | None = None,
                 pods_ready: PodsReadyPolicy = DISABLED) -> None:
        self.fairness = fairness if fairness is not None else Fairness(enable=fair_sharing)
        self.fair_sharing = self.fairness.enable
        self.pods_ready = pods_ready
        # Decayed usage per ClusterQueue / LocalQueue, and when it was read (None: never).
        self._decayed: dict[str, dict[tuple[str, str], int]] | None = None
        self._queue_usage: dict[str, float] | None = None
        self._usage_read: datetime | None = None
        self.records: dict[str, WorkloadRecord] = {}
        self._workloads: dict[str, Workload] = {}
        self._objects = Snapshot()
        self._shapes = ShapeMemo()  # shape ids across cycles: unchanged workloads reuse theirs
        self._entries = EntryMemo()  # queue entries likewise
        self.mark: int | None = None  # None: nothing loaded yet, next refresh reads all
        self.objects_version: changes.ObjectsVersion | None = None  # as of the objects held
        self._own_xids: set[int] = set()
        self._reload_ids: set[int] = set()
        self._objects_stale = True

    def reset(self) -> None:
        """Forget everything: the next refresh reads the whole ledger."""
        self.mark = None
        self.objects_version = None
        self._objects_stale = True

    def refresh(self, session: Session) -> Refreshed:
        """Bring the view up to date with committed changes."""
        mark = changes.mark(session)  # before reading: see the module docstring
        version = changes.objects_version(session)  # likewise, for the objects
        full = self.mark is None
        reload_objects = full or self._objects_stale or version != self.objects_version
        if reload_objects:
            self._objects = _load_objects(Ledger(session))
            self._objects_stale = False
            self.objects_version = version
        if full:
            rows = changes.unfinished_workloads(session)
            self.records, self._workloads = {}, {}
        else:
            assert self.mark is not None
            rows = changes.changed_workloads(
                session, self.mark, skip_xids=self._own_xids, ids=self._reload_ids
            )
        for record in rows:
            self._put(record)
        self.mark = mark
        self._own_xids = {xid for xid in self._own_xids if xid >= mark}
        self._reload_ids.clear()
        return Refreshed(full, reload_objects, len(rows))

    def usage_changed(self) -> None:
        """The loop admitted or evicted: read the decayed usage again at the next refresh."""
        self._usage_read = None

    def read_usage(self, session: Session, now: datetime) -> None:
        """Read the decayed usage fair sharing needs, if any and not read lately."""
        fairness = self.fairness
        memory = fairness.memory_half_life if fairness.enable else None
        afs = fairness.admission
        if memory is None and afs is None:
            return
        every = afs.sampling if afs is not None else _MEMORY_SAMPLING
        if self._usage_read is not None and now - self._usage_read < every:
            return
        self._usage_read = now
        if memory is not None:
            self._decayed = fair_usage.decayed_queue_usage(session, now, memory)
        if afs is not None:
            weights = {k: q.fair_sharing_weight for k, q in self._objects.local_queues.items()}
            self._queue_usage = fair_usage.local_queue_usage(session, now, afs, weights)

    def snapshot(self) -> Snapshot:
        """The engine's view (shares the cache's maps: read it before the next change)."""
        o = self._objects
        return Snapshot(
            flavors=o.flavors,
            cluster_queues=o.cluster_queues,
            cohorts=o.cohorts,
            local_queues=o.local_queues,
            priority_classes=o.priority_classes,
            namespaces=o.namespaces,
            topologies=o.topologies,
            nodes=o.nodes,
            workloads=self._workloads,
            admission_checks=o.admission_checks,
            provisioning_configs=o.provisioning_configs,
            fair_sharing=self.fair_sharing,
            fair_strategies=self.fairness.strategies,
            decayed_usage=self._decayed,
            queue_usage=self._queue_usage,
            pods_ready=self.pods_ready,
            shapes=self._shapes,
            entries=self._entries,
        )

    def committed(self, records: Mapping[str, WorkloadRecord], xid: int | None) -> None:
        """Rows the loop wrote in transaction ``xid`` and just committed."""
        for record in records.values():
            self._put(record)
        if xid is not None:
            self._own_xids.add(xid)

    def invalidate(self, ids: Iterable[int]) -> None:
        """Read these rows again at the next refresh (they were stale)."""
        self._reload_ids.update(ids)

    def invalidate_objects(self) -> None:
        self._objects_stale = True

    def _put(self, record: WorkloadRecord) -> None:
        key = record.workload.key
        if record.workload.state is WorkloadState.FINISHED:
            # A newer row may already carry the name; drop only the row that finished.
            held = self.records.get(key)
            if held is not None and held.id == record.id:
                del self.records[key]
                del self._workloads[key]
            return
        held = self.records.get(key)
        if held is not None and held.id > record.id:
            return  # an older row read late: the name now means the newer one
        self.records[key] = record
        self._workloads[key] = record.workload


def _load_objects(ledger: Ledger) -> Snapshot:
    def of(kind: str) -> list[object]:
        return list(ledger.list(kind))

    flavors = [o for o in of("ResourceFlavor") if isinstance(o, ResourceFlavor)]
    queues = [o for o in of("ClusterQueue") if isinstance(o, ClusterQueue)]
    cohorts = [o for o in of("Cohort") if isinstance(o, Cohort)]
    local_queues = [o for o in of("LocalQueue") if isinstance(o, LocalQueue)]
    classes = [o for o in of("WorkloadPriorityClass") if isinstance(o, PriorityClass)]
    namespaces = [o for o in of("Namespace") if isinstance(o, Namespace)]
    topologies = [o for o in of("Topology") if isinstance(o, Topology)]
    nodes = [o for o in of("Node") if isinstance(o, Node)]
    checks = [o for o in of("AdmissionCheck") if isinstance(o, AdmissionCheck)]
    configs = [o for o in of("ProvisioningRequestConfig")
               if isinstance(o, ProvisioningRequestConfig)]
    return Snapshot(
        flavors={o.name: o for o in flavors},
        cluster_queues={o.name: o for o in queues},
        cohorts={o.name: o for o in cohorts},
        local_queues={o.key: o for o in local_queues},
        priority_classes={o.name: o for o in classes},
        namespaces={o.name: o for o in namespaces},
        topologies={o.name: o for o in topologies},
        nodes={o.name: o for o in nodes},
        admission_checks={o.name: o for o in checks},
        provisioning_configs={o.name: o for o in configs},
    )
