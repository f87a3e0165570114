"""Which admitted workloads waitForPodsReady evicts at ``now`` (PURE).

Like ``node_faults``, this runs before each cycle (in the loop's plan and in the
simulator): a workload admitted longer than ``timeout`` ago whose pods are not all Ready,
or Ready once and short of Ready pods for longer than ``recoveryTimeout``, is evicted with
``PodsReadyTimeout`` and requeued after its backoff; one that was requeued
``backoffLimitCount`` times already is deactivated instead
(``WorkloadRequeuingLimitExceeded``), as Kueue's workload controller does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from admission.engine.node_faults import nodes_of
from admission.engine.types import EvictionDecision
from quota.core.model import Node, NodeHealth
from quota.core.pods_ready import (
    REQUEUING_LIMIT_EXCEEDED,
    PodsReadyPolicy,
    Readiness,
    over_limit,
    ready_deadline,
)
from quota.core.reasons import EvictionReason
from quota.core.workload import Workload, WorkloadState

NODE_FAULT = "nodeFault"  # eviction detail: the unhealthy nodes its pods were on


def deadline_of(workload: Workload, policy: PodsReadyPolicy) -> datetime | None:
    """When ``workload`` times out if its pods stay as they are; None if it cannot."""
    if workload.state is not WorkloadState.ADMITTED or workload.admission is None:
        return None
    found = ready_deadline(policy, workload.readiness, workload.admitted_at,
                           workload.readiness_since)  # fmt: skip
    return None if found is None else found[0]


def pods_ready_evictions(
    workloads: Mapping[str, Workload],
    nodes: Mapping[str, Node],
    policy: PodsReadyPolicy,
    now: datetime,
) -> tuple[EvictionDecision, ...]:
    """The evictions (or deactivations) due at ``now``, by workload key. One whose pods
    run on a node Berth marked unhealthy names it (``nodeFault``): the hardware, not the
    tenant, lost that time, and metering does not charge it."""
    if not policy.enable:
        return ()
    found = sorted(_timed_out(workloads, nodes, policy, now), key=lambda e: e.key)
    return tuple(found)


def _timed_out(
    workloads: Mapping[str, Workload],
    nodes: Mapping[str, Node],
    policy: PodsReadyPolicy,
    now: datetime,
) -> Iterable[EvictionDecision]:
    # Every cycle, over every workload: the state test first, no sorting of them all.
    for key, workload in workloads.items():
        if workload.state is not WorkloadState.ADMITTED or workload.admission is None:
            continue
        found = ready_deadline(policy, workload.readiness, workload.admitted_at,
                               workload.readiness_since)  # fmt: skip
        if found is None or found[0] > now:
            continue
        cq = workload.admission.cluster_queue
        waited = "timeout" if found[1] == "WaitForStart" else "recoveryTimeout"
        limit = policy.timeout if waited == "timeout" else policy.recovery
        details: dict[str, object] = {"underlyingCause": found[1], waited: str(limit)}
        faulty = [name for name in nodes_of(workload)
                  if name in nodes and nodes[name].health is not NodeHealth.HEALTHY]
        if faulty:
            details[NODE_FAULT] = faulty
        if over_limit(policy, workload.requeue_count):
            details.update(reason=REQUEUING_LIMIT_EXCEEDED,
                           requeueCount=workload.requeue_count)  # fmt: skip
            yield EvictionDecision(key, "", None, cq, EvictionReason.DEACTIVATED, details,
                                   deactivation=REQUEUING_LIMIT_EXCEEDED)  # fmt: skip
            continue
        count = workload.requeue_count + 1
        until = now + policy.backoff(count)
        details.update(requeueCount=count, requeueAt=until.isoformat())
        yield EvictionDecision(key, "", None, cq, EvictionReason.PODS_READY_TIMEOUT, details,
                               requeue_at=until)  # fmt: skip


def unready_holder(workloads: Mapping[str, Workload]) -> str | None:
    """The first admitted workload (by key) whose pods are not all Ready, for
    ``blockAdmission``; None when every admitted workload is Ready."""
    admitted = WorkloadState.ADMITTED
    return min((key for key, w in workloads.items()
                if w.state is admitted and w.readiness is not Readiness.READY), default=None)
