"""What the dashboard's running, node-map, preemption and pending-age panels read
(read-only, caller's session): one grouped query each, so the page never fetches every
workload to draw a total.

The two SQL fragments here are shared with ``metrics`` (Prometheus reads the same facts):
``PREEMPTOR_QUEUE`` resolves an eviction's preemptor to its ClusterQueue and
``PENDING_SINCE`` says since when each pending workload has waited.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.model import Node, ResourceFlavor
from quota.core.node_health import takes_work
from quota.core.workload import HOLDS_QUOTA_SQL, Admission
from quota.ledger import codec
from quota.ledger.errors import translated
from quota.ledger.repository import Ledger

# LATERAL join giving ``p.q``: the ClusterQueue of the preemptor an Evicted event ``e``
# names (``namespace/name``): that of the workload of that name created last before the
# eviction (its admission's, or its LocalQueue's while it still waited).
PREEMPTOR_QUEUE = """
    LEFT JOIN LATERAL (
        SELECT COALESCE(pw.cluster_queue, lq.cluster_queue) AS q
        FROM workloads AS pw LEFT JOIN local_queues AS lq
            ON lq.namespace = pw.namespace AND lq.name = pw.queue_name
        WHERE pw.namespace = split_part(e.details->>'preemptor', '/', 1)
          AND pw.name = split_part(e.details->>'preemptor', '/', 2)
          AND pw.created_at <= e.at
        ORDER BY pw.created_at DESC, pw.id DESC LIMIT 1
    ) AS p ON true
"""

# Pending workloads as rows (q: ClusterQueue, code: primary reason, since): waiting since
# their latest requeue, else their creation, where Kueue's waits start too. A workload
# whose LocalQueue is unknown has no ClusterQueue (q IS NULL).
PENDING_SINCE = """
    SELECT COALESCE(w.cluster_queue, lq.cluster_queue) AS q,
           COALESCE(w.reason_code, 'PendingEvaluation') AS code,
           COALESCE((SELECT max(x.at) FROM workload_events AS x
                     WHERE x.workload_id = w.id AND x.type = 'Requeued'),
                    w.created_at) AS since
    FROM workloads AS w LEFT JOIN local_queues AS lq
        ON lq.namespace = w.namespace AND lq.name = w.queue_name
    WHERE w.state = 'Pending'
"""


@dataclass(frozen=True, slots=True)
class PreemptionBucket:
    """Preemptions in one time bucket from one ClusterQueue's work onto another's."""

    start: datetime
    preemptor_cluster_queue: str  # "" when the preemptor is no longer known
    victim_cluster_queue: str
    count: int


_PREEMPTIONS = text(
    f"""
    SELECT to_timestamp(floor(extract(epoch FROM e.at) / :step) * :step) AS start,
           COALESCE(p.q, ''), COALESCE(e.details->>'clusterQueue', w.cluster_queue, ''),
           count(*)
    FROM workload_events AS e JOIN workloads AS w ON w.id = e.workload_id
    {PREEMPTOR_QUEUE}
    WHERE e.type = 'Evicted' AND e.reason = 'Preempted' AND e.at >= :start AND e.at < :end
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    """
)


@translated
def preemptions(
    session: Session, *, start: datetime, end: datetime, step_seconds: int
) -> list[PreemptionBucket]:
    """Preemptions in [start, end) per bucket of ``step_seconds``, preemptor's and victim's
    ClusterQueue; buckets without any are left out."""
    rows = session.execute(_PREEMPTIONS, {"start": start, "end": end, "step": step_seconds})
    return [PreemptionBucket(at, p, v, int(n)) for at, p, v, n in rows]


@dataclass(frozen=True, slots=True)
class PreemptionLoss:
    """Work preemptions from one ClusterQueue's work onto another's threw away."""

    preemptor_cluster_queue: str
    victim_cluster_queue: str
    resource: str
    milli_seconds: int  # milli-units × seconds since each victim's last checkpoint (or start)


_LOSSES = text(
    f"""
    SELECT COALESCE(p.q, ''), COALESCE(e.details->>'clusterQueue', w.cluster_queue, ''),
           u.resource, sum(u.amount * EXTRACT(EPOCH FROM u.ended_at - u.lost_from))
    FROM workload_events AS e JOIN workloads AS w ON w.id = e.workload_id
    {PREEMPTOR_QUEUE}
    JOIN usage_intervals AS u ON u.workload_id = e.workload_id AND u.ended_at = e.at
         AND u.end_reason = 'Preempted' AND u.lost_from IS NOT NULL
    WHERE e.type = 'Evicted' AND e.reason = 'Preempted' AND e.at >= :start AND e.at < :end
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    """
)


@translated
def preemption_losses(session: Session, *, start: datetime, end: datetime) -> list[PreemptionLoss]:
    """Per preemptor's and victim's ClusterQueue and resource: the work lost by the
    preemptions in [start, end), from the usage intervals each eviction ended (an eviction
    and the end of its victim's intervals are written at the same instant)."""
    rows = session.execute(_LOSSES, {"start": start, "end": end})
    return [PreemptionLoss(p, v, r, round(n)) for p, v, r, n in rows]


@dataclass(frozen=True, slots=True)
class PendingAge:
    cluster_queue: str
    pending: int
    oldest_seconds: float  # the longest wait so far, as of the database's clock
    p90_seconds: float  # nine in ten of its pending workloads have waited at most this


@translated
def pending_ages(session: Session) -> list[PendingAge]:
    """Per ClusterQueue with pending work: how many, the oldest wait and the 90th
    percentile of the waits so far."""
    rows = session.execute(
        text(
            f"""
            SELECT q, count(*), EXTRACT(EPOCH FROM now() - min(since)),
                   percentile_cont(0.9) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM now() - since))
            FROM ({PENDING_SINCE}) AS p WHERE q IS NOT NULL GROUP BY 1 ORDER BY 1
            """
        )
    ).all()
    return [PendingAge(q, int(n), float(oldest), float(p90)) for q, n, oldest, p90 in rows]


@dataclass(frozen=True, slots=True)
class Resident:
    """A workload holding quota, as far as it sits on one node."""

    namespace: str
    name: str
    cluster_queue: str
    pods: int
    held: Mapping[str, int]  # resource -> milli-units its pods hold on this node


@dataclass(frozen=True, slots=True)
class NodeDevices:
    """One resource of one node, in milli-units."""

    resource: str
    capacity: int
    unhealthy: int  # cannot take work: bad devices, or all of them off a node out of the pool
    allocated: int  # held by the workloads placed on the node

    @property
    def free(self) -> int:
        return max(0, self.capacity - self.unhealthy - self.allocated)


@dataclass(frozen=True, slots=True)
class NodeSlot:
    name: str
    health: str
    takes_work: bool
    flavors: tuple[str, ...]  # the flavors whose node labels it matches
    resources: tuple[NodeDevices, ...]
    workloads: tuple[Resident, ...]


@dataclass(frozen=True, slots=True)
class Placed:
    namespace: str
    name: str
    admission: Admission


def node_map_of(
    nodes: Iterable[Node], flavors: Iterable[ResourceFlavor], placed: Iterable[Placed]
) -> list[NodeSlot]:
    """Per node (in name order): devices allocated, free and unhealthy, and what runs
    there, from the placements admissions recorded (PURE). An admission without a
    placement (quota only) sits on no node."""
    here: dict[str, list[Resident]] = {}
    for p in placed:
        assignments = {a.name: a for a in p.admission.pod_sets}
        per_node: dict[str, tuple[int, dict[str, int]]] = {}
        for placement in p.admission.placement or ():
            assignment = assignments.get(placement.name)
            if assignment is None or assignment.count <= 0:
                continue
            for where, pods in placement.nodes.items():
                total, held = per_node.get(where, (0, {}))
                for resource, amount in assignment.usage.items():
                    held[resource] = held.get(resource, 0) + amount * pods // assignment.count
                per_node[where] = (total + pods, held)
        for where, (pods, held) in per_node.items():
            here.setdefault(where, []).append(
                Resident(p.namespace, p.name, p.admission.cluster_queue, pods, held)
            )
    flavor_list = list(flavors)
    out = []
    for node in sorted(nodes, key=lambda n: n.name):
        residents = sorted(here.get(node.name, []), key=lambda r: (r.namespace, r.name))
        allocated: dict[str, int] = {}
        for resident in residents:
            for resource, amount in resident.held.items():
                allocated[resource] = allocated.get(resource, 0) + amount
        working = takes_work(node)
        names = sorted(set(node.capacity) | set(allocated))
        out.append(
            NodeSlot(
                name=node.name,
                health=str(node.health),
                takes_work=working,
                flavors=tuple(
                    f.name for f in flavor_list
                    if f.node_labels
                    and all(node.labels.get(k) == v for k, v in f.node_labels.items())
                ),
                resources=tuple(
                    NodeDevices(
                        resource=r,
                        capacity=node.capacity.get(r, 0),
                        unhealthy=node.capacity.get(r, 0) if not working else max(
                            0, node.capacity.get(r, 0) - node.allocatable.get(r, 0)),
                        allocated=allocated.get(r, 0),
                    )
                    for r in names
                ),
                workloads=tuple(residents),
            )
        )
    return out


@translated
def node_map(session: Session) -> list[NodeSlot]:
    """The node map from the ledger: Nodes, flavors, and where admitted work was placed."""
    ledger = Ledger(session)
    rows = session.execute(
        text(
            "SELECT namespace, name, admission FROM workloads "
            "WHERE state = ANY(CAST(:holding AS text[])) AND admission IS NOT NULL "
            "AND admission ? 'placement'"
        ),
        {"holding": list(HOLDS_QUOTA_SQL)},
    ).all()
    placed = []
    for namespace, name, data in rows:
        admission = codec.from_admission(data)
        if admission is not None:
            placed.append(Placed(namespace, name, admission))
    return node_map_of(
        [n for n in ledger.list("Node") if isinstance(n, Node)],
        [f for f in ledger.list("ResourceFlavor") if isinstance(f, ResourceFlavor)],
        placed,
    )
