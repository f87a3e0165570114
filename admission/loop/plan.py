"""From the engine's result to the ledger writes and actuations of one cycle (PURE).

Only what changed is written: a pending workload whose verdict (reasons, hints, position)
is the one already stored gets no write at all. A reason actuation is sent only when the
primary code changes, which is also when the timeline gets a new row. Verdicts are built
only for workloads whose primary code changed and for the few whose details the budget
refreshes this cycle (``reason_budget``): the others cost one code comparison each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from admission.engine.pods_ready import NODE_FAULT
from admission.engine.statuses import PendingStatuses
from admission.engine.stored_form import StoredForms, verdict_of
from admission.engine.transitions import (
    CHECKPOINTED,
    admitted,
    evicted,
    requeue_due,
    reserved,
)
from admission.engine.types import CycleResult, EvictionDecision, PendingStatus, Reason
from admission.loop.actuation import ADMIT, CHECKPOINT, EVICT, REASON, Actuation
from admission.loop.reason_budget import rotation
from quota.core.checkpoints import checkpointed_at
from quota.core.cycle_writes import (
    NO_VERDICT,
    Event,
    ReasonChange,
    Transition,
    WorkloadRecord,
)
from quota.core.model import ResourceFlavor
from quota.core.reasons import EvictionReason, WaitReason
from quota.core.workload import Admission, Workload, WorkloadState


@dataclass(slots=True)
class CyclePlan:
    transitions: list[Transition] = field(default_factory=list)
    reasons: list[ReasonChange] = field(default_factory=list)
    actions: list[Actuation] = field(default_factory=list)
    # What each written row will be once committed, by key.
    records: dict[str, WorkloadRecord] = field(default_factory=dict)
    after: int = 0  # the last row id whose unchanged-code verdict was looked at

    @property
    def empty(self) -> bool:
        return not self.transitions and not self.reasons


def plan_cycle(
    records: Mapping[str, WorkloadRecord],
    result: CycleResult,
    flavors: Mapping[str, ResourceFlavor],
    *,
    budget: tuple[int, int] | None = None,
    after: int = 0,
) -> CyclePlan:
    """The writes and actuations for ``result`` over the workloads it was computed from.

    ``budget``: (examined, written) at most of the verdicts whose primary code did not
    change, in rotation by row id past ``after`` (``plan.after`` says where it stopped);
    without it every changed verdict is written."""
    plan = CyclePlan(after=after)
    now = result.now
    for eviction in result.evicted:
        record = records.get(eviction.key)
        if record is not None:
            _evict(plan, record, eviction, now)
    for decision in result.admitted:
        record = records.get(decision.key)
        if record is None or decision.key in plan.records:
            continue
        details = {
            "clusterQueue": decision.admission.cluster_queue,
            "borrowing": decision.borrowing,
            "flavors": {p.name: dict(p.flavors) for p in decision.admission.pod_sets},
        }
        if decision.checks:  # quota reserved: the Job stays suspended until they pass
            moved = reserved(record.workload, decision.admission, decision.checks, now)
            event = Event("QuotaReserved", None, details | {"checks": list(decision.checks)})
            _transition(plan, record, moved, now, (event,), admits=True)
            continue
        moved = admitted(record.workload, decision.admission, now)
        if decision.checked:  # its quota was reserved (and metered) already
            details |= {"checks": [c.name for c in record.workload.checks]}
            moved = replace(moved, admitted_at=record.workload.admitted_at)
        _transition(plan, record, moved, now, (Event("Admitted", None, details),),
                    admits=not decision.checked)
        plan.actions.append(
            Actuation(
                decision.key,
                record.workload.kind,
                ADMIT,
                decision.admission,
                _flavors_of(decision.admission, flavors),
            )
        )
    _pending(plan, records, result.pending, budget)
    return plan


def _pending(
    plan: CyclePlan,
    records: Mapping[str, WorkloadRecord],
    pending: Mapping[str, PendingStatus],
    budget: tuple[int, int] | None,
) -> None:
    statuses = pending if isinstance(pending, PendingStatuses) else _Statuses(pending)
    codes = statuses.codes()
    moved: list[WorkloadRecord] = []  # a new primary code: always written
    same: dict[int, WorkloadRecord] = {}
    planned = plan.records
    for key in sorted(pending):
        record = records.get(key)
        if record is None or key in planned:
            continue
        if codes[key] != record.verdict.code:
            moved.append(record)
        else:
            same[record.id] = record
    examined, most = (len(same), len(same)) if budget is None else budget
    looked = [same[i] for i in rotation(same, examined, plan.after)]
    built = statuses.build([r.workload.key for r in (*moved, *looked)])
    forms = StoredForms()
    for record in moved:
        _reason(plan, record, built[record.workload.key], forms)
    written = 0
    for record in looked:
        if written >= most:
            break
        plan.after = record.id
        written += _reason(plan, record, built[record.workload.key], forms)


class _Statuses:
    """``codes`` and ``build`` over statuses already built (as tests hand them in)."""

    def __init__(self, pending: Mapping[str, PendingStatus]) -> None:
        self.pending = pending

    def codes(self) -> dict[str, WaitReason]:
        return {key: self.pending[key].reason.code for key in self.pending}

    def build(self, keys: Sequence[str]) -> dict[str, PendingStatus]:
        return {key: self.pending[key] for key in keys}


def plan_requeues(records: Mapping[str, WorkloadRecord], now: datetime) -> CyclePlan:
    """Victims whose checkpoint grace has run out go back to the queue, releasing quota."""
    plan = CyclePlan()
    for key in sorted(records):
        record = records[key]
        workload = record.workload
        requeue = requeue_due(workload, now)
        if requeue is None:
            continue
        saved = requeue.saved
        if requeue.why == CHECKPOINTED and saved is not None:
            event = Event("Requeued", requeue.why, {"checkpointedAt": saved.isoformat()})
        else:
            event = Event("Requeued", requeue.why, {"grace": str(requeue.grace)})
        why = workload.eviction_reason or str(EvictionReason.PREEMPTED)
        _transition(plan, record, requeue.workload, now, (event,), releases=True,
                    end_reason=why, lost_from=saved)
        message = f"{key} evicted: {why}, {event.reason}; suspended until admitted again"
        reason = Reason(WaitReason.PENDING_EVALUATION, message,
                        {"eviction": why, "requeued": event.reason})
        plan.actions.append(Actuation(key, workload.kind, EVICT, reason=reason))
    return plan


def plan_evictions(
    plan: CyclePlan,
    records: Mapping[str, WorkloadRecord],
    evictions: Sequence[EvictionDecision],
    now: datetime,
) -> CyclePlan:
    """Add evictions decided outside the engine (node faults, pods-ready timeouts)."""
    for eviction in evictions:
        record = records.get(eviction.key)
        if record is not None and eviction.key not in plan.records:
            _evict(plan, record, eviction, now)
    return plan


def _reason(
    plan: CyclePlan, record: WorkloadRecord, status: PendingStatus, forms: StoredForms
) -> bool:
    """Plan writing ``status`` if it is not the stored verdict; whether it is written."""
    verdict = verdict_of(status, forms)
    if verdict == record.verdict:
        return False
    changed = verdict.code != record.verdict.code
    primary = verdict.reasons[0] if changed else None
    plan.reasons.append(ReasonChange(record.id, record.version, verdict, primary))
    plan.records[record.workload.key] = replace(record, version=record.version + 1, verdict=verdict)
    if changed:
        plan.actions.append(
            Actuation(record.workload.key, record.workload.kind, REASON, reason=status.reason)
        )
    return True


def _evict(
    plan: CyclePlan, record: WorkloadRecord, eviction: EvictionDecision, now: datetime
) -> None:
    workload = record.workload
    details: dict[str, Any] = {"clusterQueue": eviction.cluster_queue, **eviction.details}
    if eviction.preemptor:
        details["preemptor"] = eviction.preemptor
    if eviction.cause is not None:
        details["why"] = str(eviction.cause)
    moved = evicted(workload, eviction.reason, now, check=eviction.check,
                    requeue_at=eviction.requeue_at, deactivation=eviction.deactivation)
    event = Event("Evicted", eviction.reason, details)
    end = str(eviction.reason)
    if moved.grace is not None:
        details["grace"] = str(moved.grace)
        _transition(plan, record, moved.workload, now, (event,), evicts=True, end_reason=end)
        # It keeps running (and holding quota) until it checkpoints or the grace ends.
        plan.actions.append(Actuation(workload.key, workload.kind, CHECKPOINT,
                                      requested_at=now, deadline=now + moved.grace))
        return
    events: tuple[Event, ...] = (event,)
    if moved.workload.state is WorkloadState.PENDING:
        backoff: dict[str, Any] = {}
        if eviction.requeue_at is not None:  # PodsReadyTimeout: admitted again no sooner
            backoff = {"requeueCount": moved.workload.requeue_count,
                       "until": eviction.requeue_at.isoformat()}
        events += (Event("Requeued", eviction.reason, backoff),)
    _transition(plan, record, moved.workload, now, events, evicts=True, releases=True,
                end_reason=end, lost_from=checkpointed_at(workload),
                node_fault=NODE_FAULT in eviction.details)
    plan.actions.append(
        Actuation(workload.key, workload.kind, EVICT, reason=_eviction_reason(workload, eviction))
    )


def _eviction_reason(workload: Workload, eviction: EvictionDecision) -> Reason:
    """What the Job is told when evicted: it waits again, and the message says why."""
    why = f"evicted: {eviction.reason}"
    if eviction.preemptor:
        why += f" by {eviction.preemptor} ({eviction.cause})"
    nodes = eviction.details.get("nodes")
    if isinstance(nodes, list) and nodes:
        why += f" on node {', '.join(str(n) for n in nodes)}"
    details: dict[str, object] = {
        "eviction": eviction.reason,
        "preemptor": eviction.preemptor,
        "why": None if eviction.cause is None else str(eviction.cause),
    }
    code = (
        WaitReason.DEACTIVATED
        if eviction.reason == EvictionReason.DEACTIVATED
        else WaitReason.PENDING_EVALUATION
    )
    if eviction.requeue_at is not None:  # PodsReadyTimeout: it backs off until then
        code = WaitReason.WAITING_FOR_PODS_READY
        details["until"] = eviction.requeue_at.isoformat()
        why += f", backing off until {eviction.requeue_at.isoformat()}"
    return Reason(code, f"{workload.key} {why}", details)


def _transition(
    plan: CyclePlan,
    record: WorkloadRecord,
    moved: Workload,
    now: datetime,
    events: tuple[Event, ...],
    *,
    admits: bool = False,
    evicts: bool = False,
    releases: bool = False,
    end_reason: str | None = None,
    lost_from: datetime | None = None,
    node_fault: bool = False,
) -> None:
    """Plan writing ``moved`` (what ``transitions`` made of the record's workload): the
    flags tell the ledger which usage, counts and stamps the change opens or closes."""
    workload = record.workload
    plan.transitions.append(
        Transition(
            record.id,
            record.version,
            workload.namespace,
            workload.name,
            workload.state,
            moved.state,
            moved.admission,
            events,
            admits=admits,
            evicts=evicts,
            releases=releases,
            end_reason=end_reason,
            lost_from=lost_from,
            requeue=_requeue_state(workload, moved),
            deactivation=moved.deactivation if moved.deactivation != workload.deactivation
            else None,
            node_fault=node_fault,
            checks=moved.checks,
        )
    )
    # Built directly, not with replace(): this runs once per decision, thousands per cycle.
    plan.records[workload.key] = WorkloadRecord(record.id, record.version + 1, moved, NO_VERDICT)


def _requeue_state(before: Workload, after: Workload) -> tuple[int, datetime | None] | None:
    """The requeue count and backoff end to write when a transition changed them."""
    if (after.requeue_count, after.requeue_at) == (before.requeue_count, before.requeue_at):
        return None
    return after.requeue_count, after.requeue_at


def _flavors_of(
    admission: Admission, flavors: Mapping[str, ResourceFlavor]
) -> dict[str, ResourceFlavor]:
    named = {f for p in admission.pod_sets for f in p.flavors.values()}
    return {name: flavors[name] for name in sorted(named) if name in flavors}
