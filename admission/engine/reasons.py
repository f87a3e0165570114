"""Wait reasons as data (PURE): one builder per code, with its message and details.

Detail keys are exactly those docs/wait-reasons.md lists; quantities are quantity strings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime

from admission.engine.flavors import FlavorTry, Mode, Plan
from admission.engine.types import Reason
from admission.engine.verdict import Finding
from quota.core.pods_ready import REQUEUING_LIMIT_EXCEEDED
from quota.core.quantity import format_quantity
from quota.core.reasons import WaitReason
from quota.core.tree import FlavorResource, QuotaTree

# (ClusterQueue, (flavor, resource)) -> keys of the workloads holding that quota, top few
HolderLookup = Callable[[str, FlavorResource], Sequence[str]]


def sort_reasons(reasons: Iterable[Reason]) -> tuple[Reason, ...]:
    """All reasons, primary (highest precedence) first; equal codes keep their order."""
    return tuple(sorted(reasons, key=lambda r: r.code.precedence))


def deactivated(why: str | None = None) -> Reason:
    """An admin's deactivation, or Berth's own for ``why`` (e.g. the requeuing limit)."""
    if why == REQUEUING_LIMIT_EXCEEDED:
        return Reason(
            WaitReason.DEACTIVATED,
            "the workload is deactivated: it exceeded the maximum number of re-queuing "
            "retries after PodsReadyTimeout (waitForPodsReady.requeuingStrategy."
            "backoffLimitCount)",
            {"reason": why},
        )
    return Reason(WaitReason.DEACTIVATED, "the workload is deactivated (active: false)", {})


def pods_ready_backoff(until: datetime, requeues: int) -> Reason:
    """Waiting out its requeue backoff after a PodsReadyTimeout eviction."""
    return Reason(
        WaitReason.WAITING_FOR_PODS_READY,
        f"its pods were not all Ready in time (PodsReadyTimeout, requeue {requeues}); it "
        f"backs off until {until.isoformat()}",
        {"until": until.isoformat(), "requeueCount": requeues},
    )


def pods_ready_blocked(workload: str) -> Reason:
    """blockAdmission: nothing is admitted while ``workload``'s pods are not all Ready."""
    return Reason(
        WaitReason.WAITING_FOR_PODS_READY,
        f"waiting for all admitted workloads to have their pods Ready: {workload} is not "
        "ready yet (waitForPodsReady.blockAdmission)",
        {"workload": workload},
    )


def rejected_by_check(check: str, message: str) -> Reason:
    said = f": {message}" if message else ""
    return Reason(WaitReason.DEACTIVATED,
                  f"the workload is deactivated: admission check {check} rejected it{said}",
                  {"check": check, "message": message})


def misconfigured(obj: str, problem: str) -> Reason:
    return Reason(WaitReason.MISCONFIGURED, f"{obj}: {problem}", {"object": obj,
                                                                   "problem": problem})


def suspended(obj: str, policy: str) -> Reason:
    return Reason(
        WaitReason.SUSPENDED, f"{obj} is stopped (stopPolicy: {policy})", {"object": obj}
    )


def no_matching_flavor(cq: str, pod_set: str, flavors: Mapping[str, str]) -> Reason:
    why = "; ".join(f"{name}: {text}" for name, text in flavors.items()) or "it has no flavors"
    return Reason(
        WaitReason.NO_MATCHING_FLAVOR,
        f"no flavor of ClusterQueue {cq} can serve pod set {pod_set}: {why}",
        {"podSet": pod_set, "flavors": dict(flavors)},
    )


def exceeds_max_quota(
    cq: str, pod_set: str, flavor: str, resource: str, requested: int, maximum: int
) -> Reason:
    req, most = format_quantity(requested, resource), format_quantity(maximum, resource)
    return Reason(
        WaitReason.EXCEEDS_MAX_QUOTA,
        f"pod set {pod_set} requests {req} {resource}, more than ClusterQueue {cq} could "
        f"ever use in flavor {flavor}: at most {most}",
        {"podSet": pod_set, "flavor": flavor, "resource": resource, "requested": req,
         "maximum": most},
    )


def exceeds_node_capacity(cq: str, pod_set: str, flavors: Sequence[str], resource: str,
                          requested: int, largest: int) -> Reason:
    """One pod is larger than every node of every flavor that could serve it."""
    req, most = format_quantity(requested, resource), format_quantity(largest, resource)
    which = f"flavor {flavors[0]}" if len(flavors) == 1 else f"flavors {', '.join(flavors)}"
    return Reason(
        WaitReason.EXCEEDS_NODE_CAPACITY,
        f"a single pod of pod set {pod_set} requests {req} {resource}, more than any node "
        f"of {which} of ClusterQueue {cq} has (the largest has {most}); it can never run",
        {"podSet": pod_set, "resource": resource, "requested": req, "largestNode": most,
         "flavors": list(flavors)},
    )


def blocked_by_queue_head(cq: str, head: str, position: int) -> Reason:
    return Reason(
        WaitReason.BLOCKED_BY_QUEUE_HEAD,
        f"StrictFIFO ClusterQueue {cq} admits nothing behind its waiting head {head}; "
        f"this workload is at position {position}",
        {"head": head, "position": position},
    )


def waiting_for_quota(
    tree: QuotaTree, cq: str, pod_set: str, flavor: str, resource: str, requested: int,
    holders: Sequence[str],
) -> Reason:
    fr = (flavor, resource)
    available = tree.available(cq, fr)
    used, nominal = tree.usage(cq, fr), tree.nominal(cq, fr)
    limit = tree.limits(cq, fr).borrowing_limit
    borrowable = max(0, available - max(0, nominal - used))

    def q(amount: int) -> str:
        return format_quantity(amount, resource)

    message = (
        f"insufficient unused quota for {resource} in flavor {flavor} of ClusterQueue {cq}: "
        f"{q(requested)} requested, {q(available)} available, "
        f"{q(requested - available)} more needed"
    )
    if tree.in_cohort(cq):
        message += f" (cohort lends at most {q(borrowable)} more)"
    return Reason(
        WaitReason.WAITING_FOR_QUOTA,
        message,
        {"podSet": pod_set, "flavor": flavor, "resource": resource,
         "requested": q(requested), "available": q(available),
         "shortfall": q(requested - available), "nominal": q(nominal), "used": q(used),
         "borrowingLimit": None if limit is None else q(limit), "borrowable": q(borrowable),
         "holders": list(holders)},
    )


def reserved_by_higher_priority(cq: str, holder: str, holder_cq: str, priority: int, *,
                                preempting: bool = False) -> Reason:
    """``preempting``: the holder waits for the victims it chose to release their quota;
    otherwise it needs preemption and found no victims yet."""
    why = ("waits for the workloads it preempted to release theirs" if preempting
           else "waits to preempt and found nothing to preempt yet")
    return Reason(
        WaitReason.RESERVED_BY_HIGHER_PRIORITY,
        f"the quota ClusterQueue {cq} needs is reserved for {holder} (priority {priority}, "
        f"ClusterQueue {holder_cq}), which {why}",
        {"reservedFor": holder, "priority": priority},
    )


def waiting_for_preempted(victims: Sequence[str], deadline: datetime | None) -> Reason:
    names = ", ".join(victims)
    message = f"waiting for {len(victims)} preempted workload(s) to release quota: {names}"
    if deadline is not None:
        message += f" (by {deadline.isoformat()} at the latest)"
    return Reason(
        WaitReason.WAITING_FOR_PREEMPTED_WORKLOADS,
        message,
        {"victims": list(victims), "deadline": None if deadline is None else deadline.isoformat()},
    )


def held_back(found: Sequence[Reason], hints: Sequence[str],
              victims: Mapping[str, datetime]) -> tuple[list[Reason], list[str]]:
    """Quota reasons of a workload that would preempt ``victims`` but for their minimum
    runtime (``berth.dev/min-runtime``): each WaitingForQuota says until when (``until``,
    the earliest end, and ``protectedVictims``), and a hint names them."""
    until = min(victims.values())
    names = sorted(victims)
    note = (f"; {len(names)} workload(s) it could preempt are within their minimum runtime "
            f"until {until.isoformat()}")
    out = [
        Reason(r.code, r.message + note,
               {**r.details, "until": until.isoformat(), "protectedVictims": names})
        if r.code is WaitReason.WAITING_FOR_QUOTA else r
        for r in found
    ]
    hint = (f"preempts {', '.join(names[:3])}{' …' if len(names) > 3 else ''} once "
            f"berth.dev/min-runtime ends at {until.isoformat()}")
    return out, [*hints, hint]


def pending_evaluation() -> Reason:
    return Reason(
        WaitReason.PENDING_EVALUATION,
        "quota was freed after this workload was evaluated; the next cycle evaluates it again",
        {},
    )


def plan_reasons(
    plan: Plan, tree: QuotaTree, holders: HolderLookup, memo: dict[object, Reason] | None = None
) -> list[Reason]:
    """The reasons a plan that is not FIT cannot be admitted now. ``memo`` shares equal
    reasons while the pool does not change: a queue's pending workloads request a few
    distinct amounts, and each WaitingForQuota costs a dozen formatted quantities."""
    memo = {} if memo is None else memo
    out: list[Reason] = []
    cq = plan.cluster_queue
    for pod_set in plan.pod_sets:
        if pod_set.mode is Mode.FIT:
            continue
        for resource in pod_set.uncovered:
            out.append(no_matching_flavor(cq, pod_set.name, {
                "*": f"no resource group of ClusterQueue {cq} covers {resource}"}))
        for group in pod_set.groups:
            matched = [t for t in group.tried if t.mismatch is None]
            if not matched:
                out.append(no_matching_flavor(
                    cq, pod_set.name, {t.flavor: t.mismatch or "" for t in group.tried}))
                continue
            chosen = group.chosen
            if chosen is None:
                out.append(_exceeds(cq, pod_set.name, matched))
                continue
            for check in chosen.checks:
                if check.mode is Mode.FIT:
                    continue
                key = (cq, pod_set.name, chosen.flavor, check.resource, check.requested,
                       tree.version(cq))
                found = memo.get(key)
                if found is None:
                    found = memo[key] = waiting_for_quota(
                        tree, cq, pod_set.name, chosen.flavor, check.resource,
                        check.requested, holders(cq, (chosen.flavor, check.resource)),
                    )
                out.append(found)
    return out


def explained_reasons(
    cq: str, findings: Sequence[Finding], tree: QuotaTree, holders: HolderLookup,
    memo: dict[object, Reason],
) -> list[Reason]:
    """``plan_reasons`` from a ``Verdict.explain`` instead of a ``Plan`` (same reasons,
    same order, same ``memo`` keys)."""
    out: list[Reason] = []
    version = tree.version(cq)
    for f in findings:
        if f.kind == "quota":
            key = (cq, f.pod_set, f.flavor, f.resource, f.requested, version)
            found = memo.get(key)
            if found is None:
                found = memo[key] = waiting_for_quota(
                    tree, cq, f.pod_set, f.flavor, f.resource, f.requested,
                    holders(cq, (f.flavor, f.resource)))
            out.append(found)
        elif f.kind == "uncovered":
            out.append(no_matching_flavor(cq, f.pod_set, {
                "*": f"no resource group of ClusterQueue {cq} covers {f.resource}"}))
        elif f.kind == "nomatch":
            out.append(no_matching_flavor(cq, f.pod_set, f.flavors or {}))
        else:
            out.append(exceeds_max_quota(cq, f.pod_set, f.flavor, f.resource, f.requested,
                                         f.maximum))
    return out


def _exceeds(cq: str, pod_set: str, matched: Sequence[FlavorTry]) -> Reason:
    # Report the flavor that comes closest, so the number tells how far off the request is.
    worst = [(c.requested - c.maximum, t.flavor, c) for t in matched for c in t.checks
             if c.mode is Mode.NO_FIT]
    _, flavor, check = min(worst, key=lambda item: (item[0], item[1], item[2].resource))
    return exceeds_max_quota(cq, pod_set, flavor, check.resource, check.requested,
                             check.maximum)


def plan_hints(
    plan: Plan, tree: QuotaTree, reclaimable: bool,
    memo: dict[object, list[str]] | None = None,
) -> list[str]:
    """Actionable facts for a plan that waits for quota (``memo``: borrower hints shared
    while the pool does not change)."""
    memo = {} if memo is None else memo
    hints: list[str] = []
    cq = plan.cluster_queue
    short: set[tuple[str, str]] = set()
    for pod_set in plan.pod_sets:
        for group in pod_set.groups:
            chosen = group.chosen
            for attempt in group.tried:
                if attempt.mode is Mode.FIT and chosen is not None and chosen.mode < Mode.FIT:
                    hints.append(f"fits now in flavor {attempt.flavor}")
            if chosen is not None:
                short.update((chosen.flavor, c.resource) for c in chosen.checks
                             if c.mode is not Mode.FIT)
    for fr in sorted(short):
        key = (cq, fr, reclaimable, tree.version(cq))
        found = memo.get(key)
        if found is None:
            found = memo[key] = borrower_hints(tree, cq, fr, reclaimable)
        hints.extend(found)
    return list(dict.fromkeys(hints))


def short_hints(cq: str, short: Sequence[FlavorResource], tree: QuotaTree, reclaimable: bool,
                memo: dict[object, list[str]]) -> list[str]:
    """``plan_hints`` for a workload short of quota in ``short`` (sorted slots)."""
    hints: list[str] = []
    version = tree.version(cq)
    for fr in short:
        key = (cq, fr, reclaimable, version)
        found = memo.get(key)
        if found is None:
            found = memo[key] = borrower_hints(tree, cq, fr, reclaimable)
        hints.extend(found)
    return list(dict.fromkeys(hints))


def borrower_hints(tree: QuotaTree, cq: str, fr: FlavorResource, reclaimable: bool,
                   limit: int = 3) -> list[str]:
    """The biggest borrowers of ``fr`` in the ClusterQueue's pool, as hints."""
    top = [item for item in tree.borrowed_ranking(cq, fr) if item[1] != cq]
    suffix = f" reclaimable by {cq}" if reclaimable else ""
    return [
        f"ClusterQueue {other} borrows {format_quantity(-amount, fr[1])} {fr[1]}{suffix}"
        for amount, other in top[:limit]
    ]


def unhealthy_capacity(flavor: str, resource: str, shortfall: int,
                       nodes: Sequence[tuple[str, int]]) -> Reason:
    """Quota allows it; the flavor's healthy nodes do not, repaired ones would."""
    sick = ", ".join(f"{node} ({format_quantity(devices, resource)} unhealthy)"
                     for node, devices in nodes)
    return Reason(
        WaitReason.UNHEALTHY_CAPACITY,
        f"quota allows it, but the healthy nodes of flavor {flavor} are "
        f"{format_quantity(shortfall, resource)} {resource} short of placing it; it would "
        f"fit once these nodes were repaired: {sick}",
        {"flavor": flavor, "resource": resource,
         "shortfall": format_quantity(shortfall, resource),
         "unhealthyNodes": [{"node": node, "devices": format_quantity(devices, resource)}
                            for node, devices in nodes]},
    )


def repair_hint(resource: str, nodes: Sequence[tuple[str, int]]) -> str:
    listed = [f"{node} ({format_quantity(devices, resource)} unhealthy {_devices(resource)})"
              for node, devices in nodes]
    which = f"node {listed[0]}" if len(listed) == 1 else f"nodes {', '.join(listed)}"
    return f"would fit if {which} were repaired"


def insufficient_capacity(flavor: str, resource: str, requested: int, free: int,
                          capacity: int) -> Reason:
    """Quota allows it; the flavor's healthy nodes are used up."""
    def q(amount: int) -> str:
        return format_quantity(amount, resource)

    return Reason(
        WaitReason.INSUFFICIENT_CAPACITY,
        f"quota allows it, but the nodes of flavor {flavor} have too little {resource} "
        f"free: {q(requested)} requested, {q(free)} free of {q(capacity)} healthy",
        {"flavor": flavor, "resource": resource, "requested": q(requested), "free": q(free),
         "capacity": q(capacity)},
    )


def topology_placement_failed(flavor: str, level: str, resource: str, requested: int,
                              largest: int) -> Reason:
    """Enough free in the flavor's nodes in total, not inside one domain of ``level``."""
    def q(amount: int) -> str:
        return format_quantity(amount, resource)

    return Reason(
        WaitReason.TOPOLOGY_PLACEMENT_FAILED,
        f"the nodes of flavor {flavor} have enough {resource} free in total, but not "
        f"inside one {level} domain: {q(requested)} requested, at most {q(largest)} free "
        "in one domain",
        {"flavor": flavor, "level": level, "resource": resource, "requested": q(requested),
         "largestDomainFree": q(largest)},
    )


def _devices(resource: str) -> str:
    # "GPUs" reads better than the resource name for the common whole-GPU case.
    return "GPUs" if resource == "nvidia.com/gpu" else resource
