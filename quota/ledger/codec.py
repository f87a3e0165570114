"""JSON shapes of the ledger's nested values, in their Kubernetes spelling (camelCase).

What goes into a JSONB column and comes back out; every ``*_json`` has an inverse
``from_*``. Quantities stay integers (milli-units) all the way through.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from quota.core.checks import CheckRule, CheckState, CheckStatus
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    FlavorFungibility,
    LabelSelector,
    NodeCondition,
    Preemption,
    ReclaimWithinCohort,
    SelectorRequirement,
    Taint,
    Toleration,
    WhenCanBorrow,
    WhenCanPreempt,
    WithinClusterQueue,
)
from quota.core.workload import Admission, PodSet, PodSetAssignment, PodSetPlacement

Json = dict[str, Any]


def taint_json(taint: Taint) -> Json:
    return {"key": taint.key, "value": taint.value, "effect": taint.effect}


def from_taint(data: Json) -> Taint:
    return Taint(key=data["key"], value=data["value"], effect=data["effect"])


def toleration_json(toleration: Toleration) -> Json:
    return {
        "key": toleration.key,
        "operator": toleration.operator,
        "value": toleration.value,
        "effect": toleration.effect,
    }


def from_toleration(data: Json) -> Toleration:
    return Toleration(
        key=data["key"], operator=data["operator"], value=data["value"], effect=data["effect"]
    )


def requirement_json(requirement: SelectorRequirement) -> Json:
    return {
        "key": requirement.key,
        "operator": requirement.operator,
        "values": list(requirement.values),
    }


def from_requirement(data: Json) -> SelectorRequirement:
    return SelectorRequirement(
        key=data["key"], operator=data["operator"], values=tuple(data["values"])
    )


def selector_json(selector: LabelSelector | None) -> Json | None:
    if selector is None:
        return None
    return {
        "matchLabels": dict(selector.match_labels),
        "matchExpressions": [requirement_json(r) for r in selector.match_expressions],
    }


def from_selector(data: Json | None) -> LabelSelector | None:
    if data is None:
        return None
    return LabelSelector(
        match_labels=dict(data["matchLabels"]),
        match_expressions=tuple(from_requirement(r) for r in data["matchExpressions"]),
    )


def preemption_json(preemption: Preemption) -> Json:
    borrow = preemption.borrow_within_cohort
    return {
        "withinClusterQueue": str(preemption.within_cluster_queue),
        "reclaimWithinCohort": str(preemption.reclaim_within_cohort),
        "borrowWithinCohort": {
            "policy": str(borrow.policy),
            "maxPriorityThreshold": borrow.max_priority_threshold,
        },
    }


def from_preemption(data: Json) -> Preemption:
    borrow = data["borrowWithinCohort"]
    return Preemption(
        within_cluster_queue=WithinClusterQueue(data["withinClusterQueue"]),
        reclaim_within_cohort=ReclaimWithinCohort(data["reclaimWithinCohort"]),
        borrow_within_cohort=BorrowWithinCohort(
            policy=BorrowWithinCohortPolicy(borrow["policy"]),
            max_priority_threshold=borrow["maxPriorityThreshold"],
        ),
    )


def fungibility_json(fungibility: FlavorFungibility) -> Json:
    return {
        "whenCanBorrow": str(fungibility.when_can_borrow),
        "whenCanPreempt": str(fungibility.when_can_preempt),
    }


def from_fungibility(data: Json) -> FlavorFungibility:
    return FlavorFungibility(
        when_can_borrow=WhenCanBorrow(data["whenCanBorrow"]),
        when_can_preempt=WhenCanPreempt(data["whenCanPreempt"]),
    )


def condition_json(condition: NodeCondition) -> Json:
    return {
        "type": condition.type,
        "status": condition.status,
        "reason": condition.reason,
        "message": condition.message,
    }


def from_condition(data: Json) -> NodeCondition:
    return NodeCondition(
        type=data["type"], status=data["status"], reason=data["reason"], message=data["message"]
    )


def pod_set_json(pod_set: PodSet) -> Json:
    return {
        "name": pod_set.name,
        "count": pod_set.count,
        "minCount": pod_set.min_count,
        "requests": dict(pod_set.requests),
        "nodeSelector": dict(pod_set.node_selector),
        "affinityTerms": [[requirement_json(r) for r in term] for term in pod_set.affinity_terms],
        "tolerations": [toleration_json(t) for t in pod_set.tolerations],
        "annotations": dict(pod_set.annotations),
    }


def from_pod_set(data: Json) -> PodSet:
    return PodSet(
        name=data["name"],
        count=data["count"],
        min_count=data["minCount"],
        requests=dict(data["requests"]),
        node_selector=dict(data["nodeSelector"]),
        affinity_terms=tuple(
            tuple(from_requirement(r) for r in term) for term in data["affinityTerms"]
        ),
        tolerations=tuple(from_toleration(t) for t in data["tolerations"]),
        annotations=dict(data["annotations"]),
    )


def admission_json(admission: Admission | None) -> Json | None:
    if admission is None:
        return None
    out: Json = {
        "clusterQueue": admission.cluster_queue,
        "podSetAssignments": [
            {
                "name": a.name,
                "count": a.count,
                "flavors": dict(a.flavors),
                "usage": dict(a.usage),
            }
            for a in admission.pod_sets
        ],
    }
    if admission.placement is not None:
        out["placement"] = [placement_json(p) for p in admission.placement]
    return out


def placement_json(placement: PodSetPlacement) -> Json:
    out: Json = {"name": placement.name, "nodes": dict(placement.nodes)}
    if placement.level is not None:
        out["level"] = placement.level
        out["domain"] = placement.domain
    return out


def from_placement(data: Json) -> PodSetPlacement:
    return PodSetPlacement(
        name=data["name"],
        nodes=dict(data["nodes"]),
        level=data.get("level"),
        domain=data.get("domain"),
    )


def from_admission(data: Json | None) -> Admission | None:
    if data is None:
        return None
    return Admission(
        cluster_queue=data["clusterQueue"],
        pod_sets=tuple(
            PodSetAssignment(
                name=a["name"], count=a["count"], flavors=dict(a["flavors"]), usage=dict(a["usage"])
            )
            for a in data["podSetAssignments"]
        ),
        # Absent in admissions written before placements were recorded.
        placement=None if data.get("placement") is None
        else tuple(from_placement(p) for p in data["placement"]),
    )


def int_map(values: Mapping[str, int]) -> dict[str, int]:
    """Quantities as plain ints (an IntEnum or bool would serialise differently)."""
    return {key: int(amount) for key, amount in values.items()}


def check_rules_json(rules: tuple[CheckRule, ...]) -> list[Any]:
    """A ClusterQueue's checks: a name, or {name, onFlavors} when limited to flavors."""
    return [rule.name if not rule.on_flavors else
            {"name": rule.name, "onFlavors": list(rule.on_flavors)} for rule in rules]


def from_check_rules(data: list[Any]) -> tuple[CheckRule, ...]:
    return tuple(CheckRule(item) if isinstance(item, str) else
                 CheckRule(item["name"], tuple(item.get("onFlavors", ()))) for item in data)


def check_statuses_json(statuses: tuple[CheckStatus, ...]) -> list[Json]:
    return [
        {
            "name": s.name,
            "state": str(s.state),
            "message": s.message,
            "requeueAfterSeconds": None if s.requeue_after is None
            else int(s.requeue_after.total_seconds()),
            "retries": s.retries,
            "changedAt": None if s.changed_at is None else s.changed_at.isoformat(),
        }
        for s in statuses
    ]


def from_check_statuses(data: list[Any] | None) -> tuple[CheckStatus, ...]:
    out: list[CheckStatus] = []
    for item in data or ():
        after = item.get("requeueAfterSeconds")
        changed = item.get("changedAt")
        out.append(CheckStatus(
            item["name"], CheckState(item["state"]), item.get("message", ""),
            None if after is None else timedelta(seconds=after),
            None if changed is None else datetime.fromisoformat(changed),
            item.get("retries", 0),
        ))
    return tuple(out)
