"""Flavor matching, fungibility and partial admission."""

from __future__ import annotations

from dataclasses import replace

import pytest
from builders.engine import CPU, GPU, T0, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.flavors import flavor_mismatch
from admission.engine.types import CycleResult
from quota.core.model import (
    FlavorFungibility,
    Preemption,
    ResourceFlavor,
    SelectorRequirement,
    Taint,
    Toleration,
    WhenCanBorrow,
    WhenCanPreempt,
    WithinClusterQueue,
)
from quota.core.workload import PodSet

H100 = ResourceFlavor("h100", {"gpu.product": "h100"})
TAINTED = ResourceFlavor("spot", {}, (Taint("spot", "true"),))


def run(*objects: object) -> CycleResult:
    return run_cycle(snapshot(*objects), T0)


def pod(selector: dict[str, str] | None = None, *, terms: tuple[tuple[SelectorRequirement, ...],
        ...] = (), tolerations: tuple[Toleration, ...] = ()) -> PodSet:
    return PodSet("main", 1, {GPU: 1000}, node_selector=selector or {},
                  affinity_terms=terms, tolerations=tolerations)


@pytest.mark.parametrize(
    ("flavor", "pod_set", "matches"),
    [
        pytest.param(H100, pod({"gpu.product": "h100"}), True,
                     id="a nodeSelector equal to the flavor label matches"),
        pytest.param(H100, pod({"gpu.product": "a100"}), False,
                     id="a nodeSelector conflicting with the flavor label does not match"),
        pytest.param(H100, pod({"zone": "x"}), True,
                     id="a nodeSelector on a label the flavor does not set matches"),
        pytest.param(H100, pod(terms=((SelectorRequirement("gpu.product", "In", ("a100",)),),)),
                     False, id="required affinity excluding the flavor does not match"),
        pytest.param(H100, pod(terms=((SelectorRequirement("gpu.product", "In", ("a100",)),),
                                      (SelectorRequirement("gpu.product", "In", ("h100",)),))),
                     True, id="any matching affinity term is enough"),
        pytest.param(TAINTED, pod(), False, id="an untolerated flavor taint does not match"),
        pytest.param(TAINTED, pod(tolerations=(Toleration("spot", "Exists"),)), True,
                     id="a pod toleration tolerates the flavor taint"),
        pytest.param(replace(TAINTED, tolerations=(Toleration("spot", "Equal", "true"),)),
                     pod(), True, id="the flavor's own tolerations count"),
    ],
)
def test_flavor_matching(flavor: ResourceFlavor, pod_set: PodSet, matches: bool) -> None:
    assert (flavor_mismatch(flavor, pod_set) is None) == matches


def test_selector_picks_the_matching_flavor_in_order() -> None:
    a100 = ResourceFlavor("a100", {"gpu.product": "a100"})
    result = run(H100, a100, cq("a", {"a100": {GPU: 8}, "h100": {GPU: 8}}),
                 wl("x", {GPU: 4}, selector={"gpu.product": "h100"}), wl("y", {GPU: 4}))
    flavors = {d.key: dict(d.admission.pod_sets[0].flavors) for d in result.admitted}
    assert flavors == {"a/x": {GPU: "h100"}, "a/y": {GPU: "a100"}}


def test_no_matching_flavor_details() -> None:
    result = run(H100, TAINTED, cq("a", {"h100": {GPU: 8}, "spot": {GPU: 8}}),
                 wl("x", {GPU: 1}, selector={"gpu.product": "a100"}))
    reason = result.pending["a/x"].reason
    assert reason.code == "NoMatchingFlavor"
    assert reason.details == {"podSet": "main", "flavors": {
        "h100": "nodeSelector gpu.product=a100 conflicts with flavor label gpu.product=h100",
        "spot": "taint spot=true:NoSchedule is not tolerated"}}


def test_a_resource_no_group_covers_is_no_matching_flavor() -> None:
    result = run(cq("a", {"default": {CPU: 8}}), wl("x", {CPU: 1, GPU: 1}))
    reason = result.pending["a/x"].reason
    assert reason.code == "NoMatchingFlavor"
    assert reason.details["podSet"] == "main"
    assert "covers nvidia.com/gpu" in reason.message


def fungible(borrow: WhenCanBorrow = WhenCanBorrow.MAY_STOP_SEARCH,
             preempt: WhenCanPreempt = WhenCanPreempt.TRY_NEXT_FLAVOR) -> FlavorFungibility:
    return FlavorFungibility(borrow, preempt)


@pytest.mark.parametrize(
    ("fungibility", "flavor"),
    [
        pytest.param(fungible(), "first",
                     id="whenCanBorrow MayStopSearch borrows in the first flavor"),
        pytest.param(fungible(WhenCanBorrow.TRY_NEXT_FLAVOR), "second",
                     id="whenCanBorrow TryNextFlavor prefers a flavor that fits without borrowing"),
    ],
)
def test_when_can_borrow(fungibility: FlavorFungibility, flavor: str) -> None:
    result = run(cq("a", {"first": {GPU: 2}, "second": {GPU: 8}}, cohort="c",
                    fungibility=fungibility),
                 cq("b", {"first": {GPU: 8}}, cohort="c"), wl("x", {GPU: 4}))
    (decision,) = result.admitted
    assert decision.admission.pod_sets[0].flavors[GPU] == flavor
    assert decision.borrowing is (flavor == "first")


@pytest.mark.parametrize(
    ("fungibility", "admitted_in", "evicted"),
    [
        pytest.param(fungible(), "second", [],
                     id="whenCanPreempt TryNextFlavor takes a later flavor that fits"),
        pytest.param(fungible(preempt=WhenCanPreempt.MAY_STOP_SEARCH), "first", ["a/low"],
                     id="whenCanPreempt MayStopSearch preempts in the first flavor"),
    ],
)
def test_when_can_preempt(fungibility: FlavorFungibility, admitted_in: str,
                          evicted: list[str]) -> None:
    result = run(cq("a", {"first": {GPU: 4}, "second": {GPU: 4}}, fungibility=fungibility,
                    preemption=Preemption(WithinClusterQueue.LOWER_PRIORITY)),
                 admitted(wl("low", {GPU: 4}), "a", "first"), wl("x", {GPU: 4}, priority=1))
    assert [d.admission.pod_sets[0].flavors[GPU] for d in result.admitted] == [admitted_in]
    assert [e.key for e in result.evicted] == evicted


@pytest.mark.parametrize(
    ("min_count", "free", "count"),
    [
        pytest.param(2, 5, 5, id="partial admission takes the largest count that fits"),
        pytest.param(2, 8, 8, id="partial admission takes every pod when all fit"),
        pytest.param(6, 5, None, id="partial admission waits when minCount does not fit"),
        pytest.param(None, 5, None, id="without minCount nothing is admitted partially"),
    ],
)
def test_partial_admission(min_count: int | None, free: int, count: int | None) -> None:
    result = run(cq("a", {"default": {GPU: 8}}),
                 admitted(wl("held", {GPU: 8 - free}), "a") if free < 8 else wl(
                     "none", {GPU: 0}, count=1),
                 wl("x", {GPU: 1}, count=8, min_count=min_count, created=1))
    got = {d.key: d.admission.pod_sets[0].count for d in result.admitted}
    assert got.get("a/x") == count
    if count is not None:
        assert result.admitted[-1].admission.pod_sets[0].usage == {GPU: count * 1000}
