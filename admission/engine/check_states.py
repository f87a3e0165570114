"""Admission checks in the cycle (PURE): what a quota reservation's check states mean now.

A workload of a ClusterQueue with admission checks for its flavors reserves quota first
(``QuotaReserved``, held and preemptible like an admission). Each cycle then reads the
states its checks' controllers set (input, like everything else):

- every check ``Ready``: it is admitted (its pods may start);
- a check ``Retry``: its quota is released and it is requeued, waiting out the backoff the
  controller asked for (``requeue_after``) or the check's ProvisioningRequestConfig
  ``retryStrategy``; past ``backoffLimitCount`` retries it is rejected instead;
- a check ``Rejected``: it is deactivated with the check's message;
- otherwise it waits with ``WaitingForAdmissionCheck`` naming the first check not Ready.

Its backoff after a Retry is held in ``Workload.requeue_at``: until then it waits with the
same reason (state ``Retry``, ``until``) and is not offered to the queues.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from admission.engine.types import Reason, Snapshot
from quota.core.checks import (
    AdmissionCheck,
    CheckRule,
    CheckState,
    CheckStatus,
    ProvisioningRequestConfig,
    RetryStrategy,
    pending_checks,
    required_checks,
)
from quota.core.reasons import EvictionReason, WaitReason
from quota.core.workload import Admission, Workload, WorkloadState


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """What one reservation's checks decide: ``admit``, or an eviction (``reason`` an
    EvictionReason, with the check that answered), or ``waiting`` with its reason."""

    key: str
    admit: bool = False
    reason: str | None = None
    check: CheckStatus | None = None
    requeue_at: datetime | None = None
    waiting: Reason | None = None


def checks_for(rules: tuple[CheckRule, ...], admission: Admission) -> tuple[str, ...]:
    """The checks an admission by a queue with ``rules`` must pass, by its flavors."""
    if not rules:
        return ()
    flavors = sorted({f for p in admission.pod_sets for f in p.flavors.values()})
    return required_checks(rules, flavors)


def reserved(workload: Workload, admission: Admission, checks: tuple[str, ...],
             now: datetime) -> Workload:
    """Holding quota by ``admission`` since ``now``, its ``checks`` all Pending."""
    return replace(workload, state=WorkloadState.QUOTA_RESERVED, admission=admission,
                   admitted_at=now, evicted_at=None, eviction_reason=None, requeue_at=None,
                   checks=pending_checks(checks, now, workload.checks))  # fmt: skip


def judge(snapshot: Snapshot, workload: Workload, now: datetime) -> CheckOutcome:
    """What ``workload``'s check states (it reserves quota) decide at ``now``."""
    key = workload.key
    waiting: CheckStatus | None = None
    for status in workload.checks:
        if status.state is CheckState.REJECTED:
            return CheckOutcome(key, reason=str(EvictionReason.DEACTIVATED), check=status)
        if status.state is CheckState.RETRY:
            strategy = retry_strategy(snapshot, status.name)
            if strategy is not None and status.retries >= strategy.backoff_limit_count:
                why = (f"{status.message}; retried {status.retries} times, the limit of "
                       f"backoffLimitCount {strategy.backoff_limit_count}")
                gave_up = replace(status, state=CheckState.REJECTED, message=why.lstrip("; "))
                return CheckOutcome(key, reason=str(EvictionReason.DEACTIVATED), check=gave_up)
            backoff = status.requeue_after
            if backoff is None:
                backoff = strategy.backoff(status.retries + 1) if strategy else timedelta(0)
            return CheckOutcome(key, reason=str(EvictionReason.ADMISSION_CHECK), check=status,
                                requeue_at=now + backoff)
        if status.state is not CheckState.READY and waiting is None:
            waiting = status
    if waiting is None:
        return CheckOutcome(key, admit=True)
    return CheckOutcome(key, waiting=waiting_for_check(waiting))


def retry_strategy(snapshot: Snapshot, name: str) -> RetryStrategy | None:
    """The retry strategy of the check's ProvisioningRequestConfig, if it names one."""
    check: AdmissionCheck | None = snapshot.admission_checks.get(name)
    ref = None if check is None else check.parameters
    if ref is None or ref.kind != "ProvisioningRequestConfig":
        return None
    config: ProvisioningRequestConfig | None = snapshot.provisioning_configs.get(ref.name)
    return None if config is None else config.retry_strategy


def waiting_for_check(status: CheckStatus, until: datetime | None = None) -> Reason:
    said = f": {status.message}" if status.message else ""
    if until is not None:
        message = (f"admission check {status.name} answered Retry{said}; requeued after "
                   f"its backoff, at {until.isoformat()}")
    else:
        message = f"quota is reserved; admission check {status.name} is {status.state}{said}"
    details: dict[str, object] = {"check": status.name, "state": str(status.state),
                                  "message": status.message}
    if until is not None:
        details["until"] = until.isoformat()
    return Reason(WaitReason.WAITING_FOR_ADMISSION_CHECK, message, details)


def backing_off(workload: Workload, now: datetime) -> Reason | None:
    """The reason a requeued workload still waits out a check's Retry backoff, or None
    (no backoff, or the backoff of a PodsReadyTimeout: ``cycle`` says that one)."""
    until = workload.requeue_at
    if until is None or until <= now:
        return None
    retried = next((s for s in workload.checks if s.state is CheckState.RETRY), None)
    if retried is None:  # a PodsReadyTimeout's backoff, not a check's
        return None
    return waiting_for_check(retried, until)


def after_eviction(workload: Workload, check: CheckStatus | None,
                   requeue_at: datetime | None) -> Workload:
    """An evicted reservation's checks: the one that answered counted (and a Rejected one
    kept with its message, for the Deactivated reason), the backoff stamped."""
    if check is None:
        return workload
    counted = replace(check, retries=check.retries + (check.state is CheckState.RETRY))
    checks = tuple(counted if s.name == check.name else s for s in workload.checks)
    return replace(workload, checks=checks, requeue_at=requeue_at)


def rejection(workload: Workload) -> CheckStatus | None:
    """The check that rejected a deactivated workload, if one did."""
    return next((s for s in workload.checks if s.state is CheckState.REJECTED), None)


def missing_checks(snapshot: Snapshot, rules: tuple[CheckRule, ...]) -> str | None:
    """What is wrong with a queue's checks: one that does not exist."""
    for rule in rules:
        if rule.name not in snapshot.admission_checks:
            return f"it names admission check {rule.name}, which does not exist"
    return None

