"""Static checks (PURE): what blocks a workload before any quota is measured.

A ClusterQueue is inactive when its configuration is broken; a workload is held back when
it is deactivated, its queues are missing or stopped, its namespace is not selected, its
priority class is unknown or its request is invalid.
"""

from __future__ import annotations

from collections.abc import Mapping

from admission.engine import reasons
from admission.engine.check_states import missing_checks, rejection
from admission.engine.types import Reason, Snapshot
from admission.engine.workload import is_deactivated, request_problem
from quota.core.model import ClusterQueue, StopPolicy
from quota.core.tree import QuotaTree
from quota.core.workload import Workload


def inactive_queues(snapshot: Snapshot, tree: QuotaTree) -> dict[str, str]:
    """ClusterQueue name -> what is wrong with its configuration, for inactive queues."""
    out: dict[str, str] = {}
    for name in sorted(snapshot.cluster_queues):
        problem = _queue_problem(snapshot, tree, snapshot.cluster_queues[name])
        if problem is not None:
            out[name] = problem
    return out


def _queue_problem(snapshot: Snapshot, tree: QuotaTree, cq: ClusterQueue) -> str | None:
    if cq.cohort is not None and cq.cohort in tree.broken_cohorts:
        return f"its cohort {cq.cohort} is on a cycle of parent cohorts"
    missing = missing_checks(snapshot, cq.admission_checks)
    if missing is not None:
        return missing
    seen: set[str] = set()
    for group in cq.resource_groups:
        for quotas in group.flavors:
            flavor = snapshot.flavors.get(quotas.flavor)
            if flavor is None:
                return f"it names flavor {quotas.flavor}, which does not exist"
            if flavor.topology_name is not None and flavor.topology_name not in (
                snapshot.topologies
            ):
                return (
                    f"its flavor {flavor.name} names topology {flavor.topology_name}, "
                    "which does not exist"
                )
        for resource in group.covered_resources:
            if resource in seen:
                return f"resource {resource} is covered by more than one resource group"
            seen.add(resource)
    return None


def static_reasons(
    snapshot: Snapshot, workload: Workload, inactive: Mapping[str, str]
) -> tuple[str | None, list[Reason]]:
    """The workload's ClusterQueue name (if its LocalQueue names one) and what holds it back."""
    cq_name, held = queue_reasons(snapshot, workload.namespace, workload.queue_name, inactive)
    return cq_name, [*workload_reasons(snapshot, workload), *held]


def workload_reasons(snapshot: Snapshot, workload: Workload) -> list[Reason]:
    """What holds the workload back on its own: deactivated, unknown priority class, an
    invalid request."""
    out: list[Reason] = []
    if is_deactivated(workload):
        rejected = rejection(workload)
        out.append(reasons.deactivated(workload.deactivation) if rejected is None
                   else reasons.rejected_by_check(rejected.name, rejected.message))
    if workload.priority_class is not None and workload.priority_class not in (
        snapshot.priority_classes
    ):
        out.append(reasons.misconfigured(
            f"WorkloadPriorityClass {workload.priority_class}", "it does not exist"))
    problem = request_problem(workload)
    if problem is not None:
        out.append(reasons.misconfigured(f"Workload {workload.key}", problem))
    return out


def queue_reasons(
    snapshot: Snapshot, namespace: str, queue_name: str, inactive: Mapping[str, str]
) -> tuple[str | None, list[Reason]]:
    """The ClusterQueue a LocalQueue leads to (if it names one) and what holds back every
    workload sent through it: the same for all of them, so the cycle asks once per queue."""
    out: list[Reason] = []
    lq_key = f"{namespace}/{queue_name}"
    lq = snapshot.local_queues.get(lq_key)
    if lq is None:
        out.append(reasons.misconfigured(f"LocalQueue {lq_key}", "it does not exist"))
        return None, out
    if lq.stop_policy is not StopPolicy.NONE:
        out.append(reasons.suspended(f"LocalQueue {lq_key}", str(lq.stop_policy)))
    cq = snapshot.cluster_queues.get(lq.cluster_queue)
    obj = f"ClusterQueue {lq.cluster_queue}"
    if cq is None:
        out.append(reasons.misconfigured(obj, f"it does not exist (named by LocalQueue {lq_key})"))
        return lq.cluster_queue, out
    if lq.cluster_queue in inactive:
        out.append(reasons.misconfigured(obj, inactive[lq.cluster_queue]))
    ns = snapshot.namespaces.get(namespace)
    labels = ns.labels if ns is not None else {}
    if cq.namespace_selector is None or not cq.namespace_selector.matches(labels):
        out.append(reasons.misconfigured(
            obj, f"its namespaceSelector does not select namespace {namespace}"))
    if cq.stop_policy is not StopPolicy.NONE:
        out.append(reasons.suspended(obj, str(cq.stop_policy)))
    return cq.name, out


def drain_reason(snapshot: Snapshot, workload: Workload, cq: str) -> str | None:
    """Why an admitted workload must be evicted regardless of quota, or None."""
    if is_deactivated(workload):
        return "Deactivated"
    queue = snapshot.cluster_queues.get(cq)
    if queue is not None and queue.stop_policy is StopPolicy.HOLD_AND_DRAIN:
        return "ClusterQueueStopped"
    lq = snapshot.local_queues.get(f"{workload.namespace}/{workload.queue_name}")
    if lq is not None and lq.stop_policy is StopPolicy.HOLD_AND_DRAIN:
        return "ClusterQueueStopped"
    return None
