"""What one admission cycle writes to the ledger, as plain values (PURE).

The loop builds these from the engine's result; ``quota.ledger_decisions`` writes them and
``quota.ledger_changes`` reads workload rows back into ``WorkloadRecord``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from quota.core.checks import CheckStatus
from quota.core.workload import Admission, Workload, WorkloadState


@dataclass(frozen=True, slots=True)
class Verdict:
    """The engine's stored verdict on a pending workload, as in the workload's columns."""

    code: str | None
    reasons: Sequence[Mapping[str, Any]] = ()
    hints: Sequence[str] = ()
    position: int | None = None


NO_VERDICT = Verdict(None)


@dataclass(frozen=True, slots=True)
class WorkloadRecord:
    """One workload row as the loop keeps it: the value plus what its writes need."""

    id: int
    version: int
    workload: Workload
    verdict: Verdict = NO_VERDICT


@dataclass(frozen=True, slots=True)
class Event:
    type: str  # Admitted | QuotaReserved | CheckChanged | Evicted | Finished | Requeued
    reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Transition:
    """A workload changing state: admitted, evicted, back in the queue."""

    id: int
    version: int
    namespace: str
    name: str
    before: WorkloadState
    state: WorkloadState
    admission: Admission | None  # held afterwards; None releases it
    events: tuple[Event, ...] = ()
    admits: bool = False  # opens usage intervals, stamps admitted_at
    evicts: bool = False  # counts an eviction, stamps evicted_at
    releases: bool = False  # closes its usage intervals
    # Why its usage ends (a quota.metering.IntervalEnd), stored as the eviction reason when
    # it evicts; ``lost_from``: its last checkpoint, where an eviction's lost work begins.
    end_reason: str | None = None
    lost_from: datetime | None = None
    # waitForPodsReady: the new (requeue count, backoff end) when it changes (also an
    # admission check's Retry backoff); why Berth deactivates it (the row's ``active``
    # turns false).
    requeue: tuple[int, datetime | None] | None = None
    deactivation: str | None = None
    node_fault: bool = False  # its lost work is a hardware fault's: not charged
    # Its admission checks' states afterwards (quota.core.checks).
    checks: tuple[CheckStatus, ...] = ()


@dataclass(frozen=True, slots=True)
class ReasonChange:
    """A pending workload's new verdict; ``primary`` is set when the primary code changed
    (the timeline row is then closed and a new one opened)."""

    id: int
    version: int
    verdict: Verdict
    primary: Mapping[str, Any] | None = None  # {code, message, details}
