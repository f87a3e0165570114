"""Aggregates the dashboard's pool and trend panels read (read-only, caller's session).

Both answer at the scale of a whole pool with a few grouped queries, so the page never has
to fetch every queue or every workload to draw a total.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.model import ClusterQueue, Cohort, Node, NodeHealth, ResourceFlavor
from quota.core.node_health import takes_work
from quota.ledger.errors import translated
from quota.ledger.reads.status import cluster_queue_counts
from quota.ledger.repository import Ledger


@dataclass(frozen=True, slots=True)
class PoolResource:
    """One resource of one flavor, in milli-units."""

    resource: str
    capacity: int
    unhealthy: int  # part of capacity that cannot take work now (node or device not healthy)
    admitted: int  # held by admitted workloads

    @property
    def free(self) -> int:
        return max(0, self.capacity - self.unhealthy - self.admitted)


@dataclass(frozen=True, slots=True)
class PoolFlavor:
    flavor: str
    # "nodes": summed from the Nodes whose labels match the flavor; "quota": no Node matches,
    # so the nominal quota of every queue and cohort stands in for the hardware.
    capacity_source: str
    nodes: int
    unhealthy_nodes: int
    resources: tuple[PoolResource, ...] = field(default_factory=tuple)


def _matches(node: Node, flavor: ResourceFlavor) -> bool:
    # A flavor without node labels describes no particular hardware: no node is "its" node.
    labels = flavor.node_labels
    return bool(labels) and all(node.labels.get(k) == v for k, v in labels.items())


def _node_is_healthy(node: Node) -> bool:
    return node.health is NodeHealth.HEALTHY and not node.unschedulable and node.ready


def _unhealthy_part(node: Node, resource: str, amount: int) -> int:
    # A degraded node still runs work on its good devices (allocatable < capacity shows the
    # bad ones); a cordoned, repairing, validating or not-ready node takes nothing.
    if not takes_work(node):
        return amount
    return max(0, amount - node.allocatable.get(resource, 0))


def pool_of(
    flavors: Iterable[ResourceFlavor],
    nodes: Iterable[Node],
    quota_owners: Iterable[ClusterQueue | Cohort],
    admitted: Mapping[str, Mapping[str, int]],
) -> list[PoolFlavor]:
    """Capacity, unhealthy, admitted and free per flavor and resource (PURE)."""
    node_list = list(nodes)
    nominal: dict[str, dict[str, int]] = {}
    for owner in quota_owners:
        for group in owner.resource_groups:
            for fq in group.flavors:
                for rq in fq.resources:
                    per = nominal.setdefault(fq.flavor, {})
                    per[rq.resource] = per.get(rq.resource, 0) + rq.nominal
    out: list[PoolFlavor] = []
    for flavor in sorted(flavors, key=lambda f: f.name):
        held = admitted.get(flavor.name, {})
        mine = [n for n in node_list if _matches(n, flavor)]
        capacity: dict[str, int] = {}
        unhealthy: dict[str, int] = {}
        if mine:
            for node in mine:
                for resource, amount in node.capacity.items():
                    capacity[resource] = capacity.get(resource, 0) + amount
                    lost = _unhealthy_part(node, resource, amount)
                    unhealthy[resource] = unhealthy.get(resource, 0) + lost
        else:
            capacity = dict(nominal.get(flavor.name, {}))
        names = sorted(set(capacity) | set(held))
        out.append(
            PoolFlavor(
                flavor=flavor.name,
                capacity_source="nodes" if mine else "quota",
                nodes=len(mine),
                unhealthy_nodes=sum(1 for n in mine if not _node_is_healthy(n)),
                resources=tuple(
                    PoolResource(r, capacity.get(r, 0), unhealthy.get(r, 0), held.get(r, 0))
                    for r in names
                ),
            )
        )
    return out


@translated
def pool(session: Session) -> list[PoolFlavor]:
    """The pool overview from the ledger: flavors, nodes, quotas and what admitted work holds."""
    ledger = Ledger(session)
    admitted: dict[str, dict[str, int]] = {}
    for counts in cluster_queue_counts(session).values():
        for flavor, resources in counts.usage.items():
            per = admitted.setdefault(flavor, {})
            for resource, amount in resources.items():
                per[resource] = per.get(resource, 0) + amount
    owners = [
        o for o in ledger.list("ClusterQueue") + ledger.list("Cohort")
        if isinstance(o, ClusterQueue | Cohort)
    ]
    return pool_of(
        [f for f in ledger.list("ResourceFlavor") if isinstance(f, ResourceFlavor)],
        [n for n in ledger.list("Node") if isinstance(n, Node)],
        owners,
        admitted,
    )


@dataclass(frozen=True, slots=True)
class TrendBucket:
    """One hour (or other step) of history."""

    start: datetime
    admissions: int
    preemptions: int
    evictions: int  # every eviction, preemptions included
    wait_p50: float | None  # seconds from creation to admission, of work admitted in the bucket
    wait_p90: float | None
    finished: int


_TRENDS = text(
    """
    WITH buckets AS (
        SELECT generate_series(
            to_timestamp(floor(extract(epoch FROM CAST(:start AS timestamptz)) / :step) * :step),
            CAST(:end AS timestamptz), make_interval(secs => :step)) AS start
    ), events AS (
        SELECT to_timestamp(floor(extract(epoch FROM e.at) / :step) * :step) AS start,
               e.type, e.reason, extract(epoch FROM e.at - w.created_at) AS wait
        FROM workload_events e JOIN workloads w ON w.id = e.workload_id
        WHERE e.at >= :start AND e.at < :end
          AND (CAST(:cluster_queue AS text) IS NULL OR w.cluster_queue = :cluster_queue)
    )
    SELECT b.start,
           count(*) FILTER (WHERE ev.type = 'Admitted') AS admissions,
           count(*) FILTER (WHERE ev.type = 'Evicted' AND ev.reason = 'Preempted') AS preemptions,
           count(*) FILTER (WHERE ev.type = 'Evicted') AS evictions,
           count(*) FILTER (WHERE ev.type = 'Finished') AS finished,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY ev.wait)
               FILTER (WHERE ev.type = 'Admitted') AS p50,
           percentile_cont(0.9) WITHIN GROUP (ORDER BY ev.wait)
               FILTER (WHERE ev.type = 'Admitted') AS p90
    FROM buckets b LEFT JOIN events ev ON ev.start = b.start
    GROUP BY b.start ORDER BY b.start
    """
)


@translated
def trends(
    session: Session, *, start: datetime, end: datetime, step_seconds: int,
    cluster_queue: str | None = None,
) -> list[TrendBucket]:
    """Admissions, preemptions, evictions, finishes and admission wait percentiles per step."""
    rows = session.execute(
        _TRENDS,
        {"start": start, "end": end, "step": step_seconds, "cluster_queue": cluster_queue},
    ).mappings()
    return [
        TrendBucket(
            start=r["start"],
            admissions=r["admissions"],
            preemptions=r["preemptions"],
            evictions=r["evictions"],
            wait_p50=None if r["p50"] is None else float(r["p50"]),
            wait_p90=None if r["p90"] is None else float(r["p90"]),
            finished=r["finished"],
        )
        for r in rows
    ]
