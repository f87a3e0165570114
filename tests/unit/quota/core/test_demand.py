"""Demand for an autoscaler: which waiting work more nodes would start, and which not."""

from __future__ import annotations

import pytest

from quota.core.demand import Waiter, demand

GPU = "nvidia.com/gpu"


def _asks(code: str, **details: object) -> Waiter:
    return Waiter(code, {"flavor": "h100", "resource": GPU, **details})


@pytest.mark.parametrize(("waiter", "capacity", "blocked"), [
    pytest.param(_asks("InsufficientCapacity", requested="8"), [("h100", None, 8000)], [],
                 id="sold-out nodes are capacity demand"),
    pytest.param(_asks("TopologyPlacementFailed", requested="16", level="rack"),
                 [("h100", "rack", 16000)], [],
                 id="fragmentation is capacity demand within its topology level"),
    pytest.param(_asks("UnhealthyCapacity", shortfall="2"), [("h100", None, 2000)], [],
                 id="broken devices count by their shortfall"),
    pytest.param(Waiter("WaitingForAdmissionCheck", {}, {("h100", GPU): 4000}),
                 [("h100", None, 4000)], [],
                 id="a reservation waiting for provisioning is capacity demand"),
    pytest.param(_asks("WaitingForQuota", requested="8"), [], [("h100", None, 8000)],
                 id="used-up quota is not a reason to add nodes"),
    pytest.param(_asks("ExceedsMaxQuota", requested="64"), [], [("h100", None, 64000)],
                 id="work larger than its quota is not a reason to add nodes"),
    pytest.param(_asks("Misconfigured"), [], [], id="a broken setup is no demand at all"),
])
def test_each_reason_counts_as_one_kind_of_demand(
    waiter: Waiter, capacity: list[tuple[str, str | None, int]],
    blocked: list[tuple[str, str | None, int]],
) -> None:
    found = demand([waiter])
    assert [(x.flavor, x.level, x.amount) for x in found.capacity] == capacity
    assert [(x.flavor, x.level, x.amount) for x in found.quota_blocked] == blocked


def test_waiters_of_one_flavor_and_level_are_summed() -> None:
    found = demand([_asks("InsufficientCapacity", requested="8"),
                    _asks("UnhealthyCapacity", shortfall="2")])
    (line,) = found.capacity
    assert (line.amount, line.workloads, line.reasons) == (
        10000, 2, {"InsufficientCapacity": 1, "UnhealthyCapacity": 1})
