"""Admission checks as frozen values (PURE): Kueue's two-phase admission.

A ClusterQueue may list admission checks, all of them or per flavor
(``admissionChecksStrategy``). A workload admitted by such a queue first only *reserves*
its quota (``QuotaReserved``: it holds quota and counts for preemption like an admission);
it is admitted once every check that applies to its flavors is ``Ready``. ``Retry``
releases the quota and requeues it, after the check's backoff; ``Rejected`` deactivates it.

A check's state is set by its controller: Berth's own for
``kueue.x-k8s.io/provisioning-request`` in Kubernetes mode, an operator's through the REST
API for any other ``controllerName``. The engine reads the states as input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"


class CheckState(StrEnum):
    PENDING = "Pending"
    READY = "Ready"
    RETRY = "Retry"
    REJECTED = "Rejected"


@dataclass(frozen=True, slots=True)
class ParametersRef:
    """``spec.parameters`` of an AdmissionCheck: the object configuring its controller."""

    api_group: str
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class AdmissionCheck:
    name: str
    controller_name: str
    parameters: ParametersRef | None = None

    @property
    def external(self) -> bool:
        """Whether an operator's controller (through the REST API) sets its state."""
        return self.controller_name != PROVISIONING_CONTROLLER


@dataclass(frozen=True, slots=True)
class RetryStrategy:
    """Kueue's defaults: three retries, 60s doubling up to 1800s."""

    backoff_limit_count: int = 3
    backoff_base_seconds: int = 60
    backoff_max_seconds: int = 1800

    def backoff(self, retries: int) -> timedelta:
        """The wait before the ``retries``-th retry (1-based): base * 2^(n-1), capped."""
        seconds = self.backoff_base_seconds * 2 ** max(retries - 1, 0)
        return timedelta(seconds=min(seconds, self.backoff_max_seconds))


@dataclass(frozen=True, slots=True)
class ProvisioningRequestConfig:
    name: str
    provisioning_class_name: str
    parameters: Mapping[str, str] = field(default_factory=dict)
    managed_resources: tuple[str, ...] = ()
    retry_strategy: RetryStrategy = field(default_factory=RetryStrategy)
    # IdenticalPodTemplates | IdenticalWorkloadSchedulingRequirements
    pod_set_merge_policy: str | None = None


@dataclass(frozen=True, slots=True)
class CheckRule:
    """One admission check of a ClusterQueue; ``on_flavors`` empty: every flavor."""

    name: str
    on_flavors: tuple[str, ...] = ()

    def applies(self, flavors: Iterable[str]) -> bool:
        return not self.on_flavors or any(f in self.on_flavors for f in flavors)


def required_checks(rules: Iterable[CheckRule], flavors: Iterable[str]) -> tuple[str, ...]:
    """The checks a workload assigned ``flavors`` must pass, in the queue's order."""
    used = tuple(flavors)
    return tuple(rule.name for rule in rules if rule.applies(used))


@dataclass(frozen=True, slots=True)
class CheckStatus:
    """One check's state on one workload, as its controller last set it."""

    name: str
    state: CheckState = CheckState.PENDING
    message: str = ""
    # Set by a controller with Retry: how long the workload waits before it is requeued.
    requeue_after: timedelta | None = None
    changed_at: datetime | None = None
    retries: int = 0  # how many times it answered Retry (its backoff and limit count these)


def pending_checks(
    names: Iterable[str], now: datetime, before: Iterable[CheckStatus] = ()
) -> tuple[CheckStatus, ...]:
    """Fresh states for a new quota reservation: every check Pending, each keeping the
    retries it counted in earlier reservations (``before``)."""
    retries = {s.name: s.retries for s in before}
    return tuple(CheckStatus(name, CheckState.PENDING, "", None, now, retries.get(name, 0))
                 for name in names)


def with_state(
    statuses: tuple[CheckStatus, ...], status: CheckStatus
) -> tuple[CheckStatus, ...] | None:
    """``statuses`` with ``status`` replacing the one of its name; None if it has none."""
    if not any(s.name == status.name for s in statuses):
        return None
    return tuple(status if s.name == status.name else s for s in statuses)
