"""A cycle writes every code change but only a budget of detail-only verdicts, in rotation,
and builds verdicts only for those."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from admission.engine.types import CycleResult, PendingStatus, Reason
from admission.loop.plan import plan_cycle
from admission.loop.reason_budget import (
    EXAMINING,
    REASON_BUDGET,
    REASON_FLOOR,
    REFRESH_SECONDS,
    cycle_share,
    rotation,
)
from quota.core.cycle_writes import Verdict, WorkloadRecord
from quota.core.reasons import WaitReason
from quota.core.workload import PodSet, Workload

T0 = datetime(2026, 1, 1, tzinfo=UTC)
QUOTA = WaitReason.WAITING_FOR_QUOTA


@pytest.mark.parametrize(
    ("ids", "count", "after", "expected"),
    [
        pytest.param([5, 1, 3, 2, 4], 2, 0, [1, 2], id="from the start"),
        pytest.param([5, 1, 3, 2, 4], 2, 2, [3, 4], id="past the last one looked at"),
        pytest.param([5, 1, 3, 2, 4], 3, 4, [5, 1, 2], id="wraps around"),
        pytest.param([5, 1, 3], 9, 3, [5, 1, 3], id="all, in rotation order"),
        pytest.param([], 2, 0, [], id="none"),
    ],
)
def test_rotation(ids: list[int], count: int, after: int, expected: list[int]) -> None:
    assert rotation(ids, count, after) == expected


@pytest.mark.parametrize(
    ("elapsed", "waiting", "written"),
    [
        pytest.param(0.0, 100_000, REASON_FLOOR, id="back to back: the floor"),
        pytest.param(0.1, 1_000, REASON_FLOOR + int(0.1 * 1_000 / REFRESH_SECONDS),
                     id="a busy loop earns a share of a full refresh"),
        pytest.param(1.0, 1_000_000, REASON_BUDGET, id="never more than the budget"),
        pytest.param(-1.0, 1_000, REASON_FLOOR, id="a clock going back earns nothing"),
    ],
)
def test_cycle_share(elapsed: float, waiting: int, written: int) -> None:
    assert cycle_share(elapsed, waiting) == (EXAMINING * written, written)


def test_a_cycle_share_refreshes_everyone_within_the_refresh_time() -> None:
    waiting, elapsed = 20_000, 0.05  # a cycle every 50 ms
    cycles = int(REFRESH_SECONDS / elapsed)

    assert cycles * cycle_share(elapsed, waiting)[1] >= waiting


class _Counting(dict[str, PendingStatus]):
    """Statuses that count how many were read (built, in the engine's mapping)."""

    reads = 0

    def __getitem__(self, key: str) -> PendingStatus:
        self.reads += 1
        return super().__getitem__(key)


def _setup(
    ids: list[int], moved: list[int]
) -> tuple[dict[str, WorkloadRecord], CycleResult, _Counting]:
    records, pending = {}, _Counting()
    for i in ids:
        workload = Workload("ns", f"w{i:02d}", "lq", (PodSet("main", 1, {"cpu": 1000}),), T0)
        stored = "PendingEvaluation" if i in moved else str(QUOTA)
        records[workload.key] = WorkloadRecord(i, 2, workload, Verdict(stored, position=i))
        reason = Reason(QUOTA, "short", {})
        pending[workload.key] = PendingStatus(workload.key, "cq", (reason,), (), i + 100)
    return records, CycleResult(T0, pending=pending), pending


def test_code_changes_always_go_and_detail_changes_rotate_through_the_budget() -> None:
    records, result, _ = _setup(list(range(1, 11)), moved=[9])

    plan = plan_cycle(records, result, {}, budget=(4, 2), after=0)

    assert [c.id for c in plan.reasons] == [9, 1, 2] and plan.after == 2
    assert [c.primary is not None for c in plan.reasons] == [True, False, False]
    assert sorted(r.id for r in plan.records.values()) == [1, 2, 9]
    again = plan_cycle(records, result, {}, budget=(4, 2), after=plan.after)
    assert [c.id for c in again.reasons] == [9, 3, 4] and again.after == 4


def test_only_the_examined_verdicts_are_built() -> None:
    records, result, pending = _setup(list(range(1, 31)), moved=[7])
    pending.reads = 0

    plan_cycle(records, result, {}, budget=(3, 3), after=10)

    # One code read per workload, then the full status of the moved one and three more.
    assert pending.reads == 30 + 1 + 3


def test_unchanged_verdicts_are_looked_at_but_not_written() -> None:
    records, result, _ = _setup([1, 2, 3, 4], moved=[])
    same = {k: WorkloadRecord(r.id, r.version, r.workload,
                              Verdict(str(QUOTA), ({"code": str(QUOTA), "message": "short",
                                                    "details": {}},), (), r.id + 100))
            for k, r in records.items()}  # fmt: skip
    same["ns/w03"] = records["ns/w03"]  # its position moved

    plan = plan_cycle(same, result, {}, budget=(4, 1), after=0)

    assert [c.id for c in plan.reasons] == [3] and plan.after == 3


def test_without_a_budget_every_change_is_written() -> None:
    records, result, _ = _setup(list(range(1, 8)), moved=[2])

    plan = plan_cycle(records, result, {})

    assert sorted(c.id for c in plan.reasons) == list(range(1, 8))
