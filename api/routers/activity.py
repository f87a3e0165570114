"""``GET /api/v1/node-map`` (per node: devices allocated, free and unhealthy, health, what
runs there), ``/api/v1/preemptions`` (who preempted whom, per time bucket) and
``/api/v1/pending-ages`` (per ClusterQueue: the oldest and the 90th-percentile wait of its
pending work). The dashboard's node map, preemption and pending-age panels read them; so
may any client."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from api import tenancy
from api.auth import Caller, reader
from api.deps import LedgerDep
from api.guards import no_nul
from api.schemas.errors import error_responses
from quota.core.quantity import format_quantity, format_resources
from quota.ledger.reads import activity

router = APIRouter(prefix="/api/v1", tags=["pool"],
                   dependencies=[Depends(no_nul), Depends(reader)],
                   responses=error_responses(401, 422, 503))


class NodeResourceOut(BaseModel):
    resource: str
    capacity: str = Field(description='quantity string, e.g. "8" GPUs')
    allocated: str = Field(description="held by the workloads placed on the node")
    unhealthy: str = Field(
        description="cannot take work: bad devices, or all of them while the node is "
        "cordoned, under repair, validating or not Ready"
    )
    free: str = Field(description="capacity − unhealthy − allocated, never below zero")


class NodeWorkloadOut(BaseModel):
    workload: str = Field(description=f'namespace/name, or "{tenancy.HIDDEN}" for a namespace '
                                      "the caller may not see")
    clusterQueue: str
    pods: int = Field(description="of its pods, how many were placed on this node")
    held: dict[str, str] = Field(description="resource → quantity its pods hold on this node")


class NodeSlotOut(BaseModel):
    node: str
    health: str = Field(description="Healthy, Degraded, Cordoned, Repairing or Validating")
    takesWork: bool = Field(description="schedulable, Ready and in the pool")
    flavors: list[str] = Field(description="the ResourceFlavors whose node labels it matches")
    resources: list[NodeResourceOut]
    workloads: list[NodeWorkloadOut]


class NodeMapOut(BaseModel):
    items: list[NodeSlotOut]


class PreemptionPairOut(BaseModel):
    preemptorClusterQueue: str = Field(description='"" when the preemptor is no longer known')
    victimClusterQueue: str
    count: int


class PreemptionTotalOut(PreemptionPairOut):
    lostResourceHours: dict[str, float] = Field(
        description="resource → work its victims lost (resource-hours since each one's last "
        "checkpoint, or its start)"
    )


class PreemptionBucketOut(BaseModel):
    start: datetime
    items: list[PreemptionPairOut]


class PreemptionsOut(BaseModel):
    start: datetime
    end: datetime
    stepSeconds: int
    totals: list[PreemptionTotalOut] = Field(description="over the whole window, most first")
    buckets: list[PreemptionBucketOut] = Field(description="only buckets with preemptions")


class PendingAgeOut(BaseModel):
    clusterQueue: str
    pending: int
    oldestSeconds: float = Field(description="the longest wait so far (since its creation or "
                                             "latest requeue)")
    p90Seconds: float = Field(
        description="nine in ten of its pending workloads have waited at most this"
    )


class PendingAgesOut(BaseModel):
    items: list[PendingAgeOut] = Field(description="every ClusterQueue with pending work, by name")


@router.get("/node-map", response_model=NodeMapOut)
def node_map(ledger: LedgerDep, caller: Caller) -> NodeMapOut:
    """Per node: devices allocated, free and unhealthy, health, and the workloads placed there."""
    slots = activity.node_map(ledger.session)
    return NodeMapOut(
        items=[
            NodeSlotOut(
                node=s.name,
                health=s.health,
                takesWork=s.takes_work,
                flavors=list(s.flavors),
                resources=[
                    NodeResourceOut(
                        resource=r.resource,
                        capacity=format_quantity(r.capacity, r.resource),
                        allocated=format_quantity(r.allocated, r.resource),
                        unhealthy=format_quantity(r.unhealthy, r.resource),
                        free=format_quantity(r.free, r.resource),
                    )
                    for r in s.resources
                ],
                workloads=[_resident(w, caller) for w in s.workloads],
            )
            for s in slots
        ]
    )


def _resident(w: activity.Resident, caller: Caller) -> NodeWorkloadOut:
    # A tenant may know that a node is busy and with how much, not with whose work.
    return NodeWorkloadOut(
        workload=tenancy.reference(caller, f"{w.namespace}/{w.name}"),
        clusterQueue=w.cluster_queue,
        pods=w.pods,
        held=format_resources(dict(w.held)),
    )


@router.get("/preemptions", response_model=PreemptionsOut)
def preemptions(
    ledger: LedgerDep,
    hours: Annotated[int, Query(ge=1, le=24 * 31, description="how far back")] = 24,
    step: Annotated[int, Query(ge=60, le=86400, description="bucket width, seconds")] = 3600,
) -> PreemptionsOut:
    """Preemptions per time bucket, by the preemptor's and the victim's ClusterQueue."""
    end = datetime.now(UTC)
    start = end - timedelta(hours=hours)
    rows = activity.preemptions(ledger.session, start=start, end=end, step_seconds=step)
    buckets: dict[datetime, list[PreemptionPairOut]] = {}
    totals: dict[tuple[str, str], int] = {}
    for r in rows:
        pair = (r.preemptor_cluster_queue, r.victim_cluster_queue)
        totals[pair] = totals.get(pair, 0) + r.count
        buckets.setdefault(r.start, []).append(
            PreemptionPairOut(preemptorClusterQueue=pair[0], victimClusterQueue=pair[1],
                              count=r.count)
        )
    lost: dict[tuple[str, str], dict[str, float]] = {}
    for loss in activity.preemption_losses(ledger.session, start=start, end=end):
        pair = (loss.preemptor_cluster_queue, loss.victim_cluster_queue)
        lost.setdefault(pair, {})[loss.resource] = round(loss.milli_seconds / 3_600_000, 6)
    ordered = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
    return PreemptionsOut(
        start=start,
        end=end,
        stepSeconds=step,
        totals=[PreemptionTotalOut(preemptorClusterQueue=p, victimClusterQueue=v, count=n,
                                   lostResourceHours=lost.get((p, v), {}))
                for (p, v), n in ordered],
        buckets=[PreemptionBucketOut(start=at, items=items) for at, items in buckets.items()],
    )


@router.get("/pending-ages", response_model=PendingAgesOut)
def pending_ages(ledger: LedgerDep) -> PendingAgesOut:
    """Per ClusterQueue with pending work: how many wait, the oldest wait and the p90."""
    return PendingAgesOut(
        items=[
            PendingAgeOut(clusterQueue=a.cluster_queue, pending=a.pending,
                          oldestSeconds=round(a.oldest_seconds, 3),
                          p90Seconds=round(a.p90_seconds, 3))
            for a in activity.pending_ages(ledger.session)
        ]
    )
