"""A cycle rewrites every code change but only a budget of detail-only verdicts, in rotation."""

from __future__ import annotations

from datetime import UTC, datetime

from admission.cycle_plan import CyclePlan
from admission.reason_budget import spread_reasons
from quota.cycle_writes import ReasonChange, Verdict, WorkloadRecord
from quota.workload import PodSet, Workload


def _plan(ids: list[int], code_changes: list[int]) -> CyclePlan:
    plan = CyclePlan()
    for i in ids:
        primary = {"code": "WaitingForQuota"} if i in code_changes else None
        plan.reasons.append(ReasonChange(i, 1, Verdict("WaitingForQuota"), primary))
        workload = Workload("ns", f"w{i}", "lq", (PodSet("main", 1, {"cpu": 1000}),),
                            created_at=datetime(2026, 1, 1, tzinfo=UTC))  # fmt: skip
        plan.records[workload.key] = WorkloadRecord(i, 2, workload)
    return plan


def test_code_changes_always_go_and_detail_changes_rotate_through_the_budget() -> None:
    first = _plan([1, 2, 3, 4, 5, 6], code_changes=[6])

    after = spread_reasons(first, 2, 0)

    assert [c.id for c in first.reasons] == [1, 2, 6] and after == 2
    assert sorted(r.id for r in first.records.values()) == [1, 2, 6]
    second = _plan([1, 2, 3, 4, 5], code_changes=[])  # the dropped ones are found again
    after = spread_reasons(second, 2, after)
    assert [c.id for c in second.reasons] == [3, 4] and after == 4
    third = _plan([1, 2, 3, 4, 5], code_changes=[])
    assert spread_reasons(third, 2, after) == 1  # wraps around after the last id
    assert [c.id for c in third.reasons] == [1, 5]


def test_within_budget_nothing_is_dropped() -> None:
    plan = _plan([1, 2, 3], code_changes=[])

    assert spread_reasons(plan, 3, 7) == 7
    assert len(plan.reasons) == len(plan.records) == 3
