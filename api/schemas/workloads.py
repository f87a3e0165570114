"""Response models of the workload read endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from api.schemas.base import Schema


class Reason(Schema):
    """One wait reason (docs/wait-reasons.md): a code, a sentence with numbers, details."""

    code: str
    message: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


class PodSetOut(Schema):
    name: str
    count: int
    min_count: int | None = None
    requests: dict[str, str] = Field(description="per pod, Kubernetes quantity strings")


class PodSetAdmissionOut(Schema):
    name: str
    count: int
    flavors: dict[str, str] = Field(description="resource → flavor")
    usage: dict[str, str] = Field(description="resource → quantity held")


class AdmissionOut(Schema):
    cluster_queue: str
    pod_set_assignments: list[PodSetAdmissionOut]


class AheadOut(Schema):
    """A workload ahead in the same ClusterQueue's pending order."""

    namespace: str
    name: str = Field(description="the name, or null when the caller may not see it")
    priority: int
    position: int
    requests: dict[str, str] = Field(description="all pods, quantity strings")
    reason: str | None = None


class EstimatedStart(Schema):
    at: datetime
    basis: str = Field(description="how the estimate was made, in words")


class WorkloadSummary(Schema):
    """A workload as lists show it."""

    namespace: str
    name: str
    kind: str
    queue_name: str
    cluster_queue: str | None
    priority: int
    priority_class_name: str | None
    state: str
    active: bool
    created_at: datetime
    admitted_at: datetime | None
    finished_at: datetime | None
    eviction_count: int
    requests: dict[str, str] = Field(description="all pods, quantity strings")
    reason: str | None = Field(description="primary wait reason code (pending only)")
    message: str | None = Field(description="the primary reason's sentence")
    position: int | None = Field(description="1-based place in its ClusterQueue's order")
    flavors: list[str] = Field(description="the flavors its admission holds, in name order")
    nodes: dict[str, int] = Field(
        description="node → pods placed there by its admission; empty when admitted on "
        "quota alone (no node inventory) or not admitted"
    )


class WorkloadDetail(WorkloadSummary):
    pod_sets: list[PodSetOut]
    admission: AdmissionOut | None
    reasons: list[Reason]
    hints: list[str]
    ahead: list[AheadOut] = Field(description="the head of its ClusterQueue, first few")
    ahead_count: int | None = Field(description="how many workloads are ahead of it")
    estimated_start: EstimatedStart | None = Field(
        description="null when there is no history to estimate from, or waiting cannot help"
    )
    evaluated_at: datetime | None


class WorkloadPage(Schema):
    items: list[WorkloadSummary]
    next_cursor: str | None = Field(description="pass as `cursor` for the next page")


class TimelineOut(Schema):
    code: str
    message: str
    details: dict[str, Any]
    since: datetime
    until: datetime | None = Field(description="null while it is the current reason")
    seconds: float = Field(description="how long it lasted (so far, if current)")


class PreemptorOut(Schema):
    """Who evicted a workload: the preemptor and its ClusterQueue."""

    workload: str = Field(description="namespace/name, hidden as the other references are")
    cluster_queue: str | None = Field(description="null when the ledger no longer has it")


class EventOut(Schema):
    at: datetime
    type: str = Field(description="Admitted | Evicted | Requeued | Checkpointed | PodsReady | "
                      "PodsNotReady | Finished")
    reason: str | None
    details: dict[str, Any]
    preemptor: PreemptorOut | None = Field(
        default=None, description="an eviction by preemption: who took the room"
    )


class ReasonTotal(Schema):
    code: str
    seconds: float = Field(description="every stretch of this reason, summed")


class HistoryRow(Schema):
    """One line of the ordered timeline: a stretch of one reason or an event."""

    at: datetime
    kind: str = Field(description="Waiting, or the event's type (Admitted, Evicted, ...)")
    code: str | None = Field(description="the reason waited for, or the event's reason")
    until: datetime | None = Field(description="a stretch's end; null while current or for events")
    seconds: float | None = Field(description="a stretch's length (so far); null for events")
    merged: int = Field(description="how many consecutive reason rows the stretch stands for")
    text: str = Field(description="the line in words, as `berth why` prints it")
    preemptor: PreemptorOut | None = None


class WorkloadHistory(Schema):
    namespace: str
    name: str
    state: str
    summary: str = Field(
        description='e.g. "waited 2h 10m: 1h 40m WaitingForQuota, 30m InsufficientCapacity; '
        'evicted 3 times (3 Preempted)"'
    )
    waited_seconds: float
    totals: list[ReasonTotal] = Field(description="time waited per reason, longest first")
    rows: list[HistoryRow] = Field(
        description="reasons and events in time order, consecutive rows of a reason merged"
    )
    timeline: list[TimelineOut] = Field(description="every reason row as the ledger keeps it")
    events: list[EventOut]
    admissions: int
    eviction_count: int
    evictions: list[EventOut]
