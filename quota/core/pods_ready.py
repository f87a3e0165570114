"""All-or-nothing start (PURE): Kueue's ``waitForPodsReady`` policy and its arithmetic.

An admitted workload must have all its pods Ready within ``timeout`` of its admission, and,
once Ready, must not stay short of Ready pods longer than ``recovery_timeout``. Otherwise
it is evicted (``PodsReadyTimeout``) and waits out a backoff before it may be admitted
again: ``base * 2^(n-1)`` seconds for its n-th requeue, capped at ``max``. Kueue adds a
random jitter of at most 0.01% to each backoff; Berth leaves it out so that a scenario and
the ledger say the same instant. Past ``backoff_limit_count`` requeues it is deactivated.

The defaults are Kueue's v1beta1 ones: disabled, timeout 5m, recovery timeout = timeout,
backoff base 60s, max 3600s, no limit. ``timestamp`` (``Eviction``, the default, or
``Creation``) says when a workload requeued after PodsReadyTimeout queues from
(``queued_by_eviction``; the order itself is ``quota.core.workload.pending_order``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from quota.core.reasons import EvictionReason

# Why Berth deactivated a workload itself (Kueue's condition reason for the same).
REQUEUING_LIMIT_EXCEEDED = "WorkloadRequeuingLimitExceeded"


class Readiness(StrEnum):
    """Where an admitted workload's pods stand (Kueue's PodsReady condition reasons)."""

    WAIT_FOR_START = "WaitForStart"  # admitted, not all pods Ready yet
    READY = "PodsReady"  # every pod Ready
    WAIT_FOR_RECOVERY = "WaitForRecovery"  # was Ready, then lost a pod's readiness


class RequeuingTimestamp(StrEnum):
    EVICTION = "Eviction"
    CREATION = "Creation"


# The eviction reasons after which a pending workload queues from its last eviction rather
# than its creation, as Kueue's ``Ordering.GetQueueOrderTimestamp`` has it: PodsReadyTimeout
# when ``timestamp`` is Eviction; an admission check's Retry whatever it is. Any other
# eviction (preemption, node failure, a stopped queue, deactivation) keeps the creation
# time: Kueue's one other case, a preemption for InCohortReclaimWhileBorrowing, applies
# only with its PrioritySortingWithinCohort feature off (on by default; Berth has no off).
_BY_EVICTION: dict[RequeuingTimestamp, frozenset[str]] = {
    RequeuingTimestamp.EVICTION: frozenset(
        {str(EvictionReason.PODS_READY_TIMEOUT), str(EvictionReason.ADMISSION_CHECK)}
    ),
    RequeuingTimestamp.CREATION: frozenset({str(EvictionReason.ADMISSION_CHECK)}),
}


def queued_by_eviction(timestamp: RequeuingTimestamp) -> frozenset[str]:
    """The eviction reasons whose eviction time a requeued workload queues from."""
    return _BY_EVICTION[timestamp]


@dataclass(frozen=True, slots=True)
class PodsReadyPolicy:
    """``waitForPodsReady`` as Kueue configures it; ``enable`` False turns it all off."""

    enable: bool = False
    timeout: timedelta = timedelta(minutes=5)
    block_admission: bool = False
    recovery_timeout: timedelta | None = None  # None: the timeout; zero: never checked
    timestamp: RequeuingTimestamp = RequeuingTimestamp.EVICTION
    backoff_limit_count: int | None = None  # None: requeued for ever
    backoff_base_seconds: int = 60
    backoff_max_seconds: int = 3600

    @property
    def recovery(self) -> timedelta:
        return self.timeout if self.recovery_timeout is None else self.recovery_timeout

    def backoff(self, requeues: int) -> timedelta:
        """The wait before the ``requeues``-th requeue (1-based): base·2^(n-1), capped."""
        exponent = max(requeues, 1) - 1
        # Cap the exponent first: 2**n for a large n is a big number for nothing.
        seconds = self.backoff_base_seconds * 2 ** min(exponent, 62)
        return timedelta(seconds=min(seconds, self.backoff_max_seconds))


DISABLED = PodsReadyPolicy()


def ready_deadline(
    policy: PodsReadyPolicy,
    readiness: Readiness,
    admitted_at: datetime | None,
    readiness_since: datetime | None,
) -> tuple[datetime, str] | None:
    """When an admitted workload times out, and which wait it is in (``WaitForStart`` or
    ``WaitForRecovery``); None when it cannot (Ready, disabled, recovery not checked)."""
    if not policy.enable or readiness is Readiness.READY:
        return None
    if readiness is Readiness.WAIT_FOR_RECOVERY:
        if readiness_since is None or policy.recovery <= timedelta(0):
            return None
        return readiness_since + policy.recovery, str(readiness)
    if admitted_at is None:
        return None
    return admitted_at + policy.timeout, str(Readiness.WAIT_FOR_START)


def next_readiness(current: Readiness, ready: bool) -> Readiness | None:
    """An admitted workload's readiness once its pods are all Ready (``ready``) or not;
    None when that is no change. Losing readiness after having been Ready starts the
    recovery wait; before, it is still the wait to start."""
    if ready:
        return None if current is Readiness.READY else Readiness.READY
    return Readiness.WAIT_FOR_RECOVERY if current is Readiness.READY else None


def over_limit(policy: PodsReadyPolicy, requeues: int) -> bool:
    """Whether one more requeue after ``requeues`` passes ``backoffLimitCount``."""
    limit = policy.backoff_limit_count
    return limit is not None and requeues + 1 > limit


_DURATION = re.compile(r"(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?")


def parse_duration(text: object) -> timedelta:
    """A Kubernetes duration as Kueue's configuration writes it (``5m``, ``90s``,
    ``1h30m``, ``0s``); ``ValueError`` saying what is expected otherwise."""
    match = _DURATION.fullmatch(text) if isinstance(text, str) and text else None
    if match is not None:
        hours, minutes, seconds = (int(match[part] or 0) for part in "hms")
        total = hours * 3600 + minutes * 60 + seconds
        if total <= 10 * 365 * 86400:
            return timedelta(seconds=total)
    raise ValueError(f"{text!r} is not a duration (expected e.g. 5m, 90s, 1h30m)")
