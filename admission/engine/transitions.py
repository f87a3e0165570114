"""What a decision does to a workload (PURE): admitted, evicted, back in the queue.

The durable loop (``admission.loop.plan``) and the simulator (``admission.simulate.run``)
move workloads through these functions alone (``reserved`` for a queue with admission
checks, ``admission.engine.check_states``), so ``berth serve`` and ``berth simulate``
agree on a workload's state, eviction count, timestamps and checkpoint annotations after
every admission, preemption, node fault (``node_faults``), pods-ready timeout
(``pods_ready``), change of pod readiness, checkpoint and grace expiry.
What each adds is its own: the loop writes the ledger rows, events and actuations; the
simulator keeps its timers on the virtual clock.

An eviction is counted and stamped when it is decided. A victim with a
``berth.dev/checkpoint-grace`` evicted for a graceful reason keeps running, and holding its
quota, as ``Evicting`` until it reports a checkpoint made since it was asked or the grace
runs out (``requeue_due``); then it goes back to the queue. Any other eviction releases
the quota at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from admission.engine.check_states import after_eviction
from admission.engine.check_states import reserved as reserved
from quota.core.checkpoints import (
    checkpoint_grace,
    checkpointed_at,
    reports_after,
    with_checkpoint,
)
from quota.core.checks import CheckStatus
from quota.core.pods_ready import Readiness, next_readiness
from quota.core.reasons import EvictionReason
from quota.core.workload import Admission, Workload, WorkloadState

# Evictions that let a ``berth.dev/checkpoint-grace`` run before the job is stopped.
GRACEFUL = frozenset({EvictionReason.PREEMPTED, EvictionReason.NODE_UNHEALTHY})

CHECKPOINTED = "Checkpointed"
GRACE_EXPIRED = "CheckpointGraceExpired"


def admitted(workload: Workload, admission: Admission, now: datetime) -> Workload:
    """Holding quota by ``admission`` since ``now``; a past eviction's stamp cleared, its
    pods waiting to start (waitForPodsReady)."""
    return replace(workload, state=WorkloadState.ADMITTED, admission=admission,
                   admitted_at=now, evicted_at=None, eviction_reason=None,
                   readiness=Readiness.WAIT_FOR_START, readiness_since=now)  # fmt: skip


def pods_ready(workload: Workload, ready: bool, now: datetime) -> Workload | None:
    """``workload`` with its pods all Ready (``ready``) or not since ``now``; None when
    that changes nothing (not admitted, or no change: ``next_readiness``)."""
    if workload.state is not WorkloadState.ADMITTED:
        return None
    readiness = next_readiness(workload.readiness, ready)
    return None if readiness is None else replace(workload, readiness=readiness,
                                                  readiness_since=now)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Eviction:
    """A holder after an eviction; ``grace`` is set while it runs on to its checkpoint."""

    workload: Workload
    grace: timedelta | None = None  # None: its quota is released now


def evicted(
    workload: Workload,
    reason: str,
    now: datetime,
    *,
    check: CheckStatus | None = None,
    requeue_at: datetime | None = None,
    deactivation: str | None = None,
) -> Eviction:
    """``workload`` evicted for ``reason`` at ``now``: with a grace for a graceful reason it
    is ``Evicting`` and keeps its admission; else it releases its quota, deactivated for
    reason Deactivated, back in the queue for any other. ``check``: the admission check
    whose Retry or Rejected evicts it (``requeue_at``: the end of a Retry's backoff);
    without one, ``requeue_at`` is a PodsReadyTimeout requeue, counted, that waits until
    then; ``deactivation``: why Berth deactivates it."""
    if check is not None:
        workload = after_eviction(workload, check, requeue_at)
        requeue_at = None  # a check's retries are counted on the check
    count = workload.eviction_count + 1
    if requeue_at is not None:
        workload = replace(workload, requeue_count=workload.requeue_count + 1,
                           requeue_at=requeue_at)  # fmt: skip
    if deactivation is not None:
        workload = replace(workload, active=False, deactivation=deactivation)
    grace = checkpoint_grace(workload) if reason in GRACEFUL else None
    if grace is not None:
        return Eviction(
            replace(workload, state=WorkloadState.EVICTING, eviction_count=count, evicted_at=now,
                    eviction_reason=str(reason)),
            grace,
        )
    state = (
        WorkloadState.DEACTIVATED if reason == EvictionReason.DEACTIVATED else WorkloadState.PENDING
    )
    return Eviction(replace(workload, state=state, admission=None, admitted_at=None,
                            eviction_count=count, evicted_at=now,
                            eviction_reason=str(reason)))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Requeue:
    """An ``Evicting`` victim back in the queue: why (``CHECKPOINTED`` or
    ``GRACE_EXPIRED``), the grace it had, and the checkpoint that answered, if any."""

    workload: Workload
    why: str
    grace: timedelta
    saved: datetime | None


def requeue_due(workload: Workload, now: datetime) -> Requeue | None:
    """The ``Evicting`` victim released at ``now``: it checkpointed since it was asked, or
    its grace is over; None while it may still run (or when it is not evicting)."""
    if workload.state is not WorkloadState.EVICTING:
        return None
    grace = checkpoint_grace(workload) or timedelta(0)
    saved = checkpointed_at(workload)
    asked = workload.evicted_at
    if reports_after(saved, asked):
        why = CHECKPOINTED
    elif asked is None or asked + grace <= now:
        why = GRACE_EXPIRED
    else:
        return None
    # Its eviction was counted and stamped when it was decided.
    back = replace(workload, state=WorkloadState.PENDING, admission=None, admitted_at=None)
    return Requeue(back, why, grace, saved)


def checkpointed(workload: Workload, at: datetime, location: str | None = None) -> Workload | None:
    """``workload`` having reported a checkpoint made at ``at`` (and where it is); None
    when it already reported one at least as new (a stale or repeated report)."""
    annotations = with_checkpoint(workload.annotations, at, location)
    return None if annotations is None else replace(workload, annotations=annotations)
