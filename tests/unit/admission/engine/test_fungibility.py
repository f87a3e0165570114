"""Flavor fungibility with preemption: victims decide which flavor a workload takes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from builders.engine import GPU, T0, admitted, cq, snapshot, wl

from admission.engine import cycle_victims, fungible
from admission.engine.cycle import run_cycle
from admission.engine.types import CycleResult
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    FlavorFungibility,
    Preemption,
    ReclaimWithinCohort,
    WhenCanPreempt,
    WithinClusterQueue,
)

LOWER = WithinClusterQueue.LOWER_PRIORITY
STOP = FlavorFungibility(when_can_preempt=WhenCanPreempt.MAY_STOP_SEARCH)
NEXT = FlavorFungibility(when_can_preempt=WhenCanPreempt.TRY_NEXT_FLAVOR)
RECLAIMING = Preemption(within_cluster_queue=LOWER,
                        reclaim_within_cohort=ReclaimWithinCohort.LOWER_PRIORITY,
                        borrow_within_cohort=BorrowWithinCohort(BorrowWithinCohortPolicy.LOWER_PRIORITY))


def decided(result: CycleResult) -> tuple[dict[str, str], list[str]]:
    """Each admitted workload's GPU flavor, and the evicted keys."""
    flavors = {d.key: d.admission.pod_sets[0].flavors[GPU] for d in result.admitted}
    return flavors, sorted(e.key for e in result.evicted)


CASES = [
    pytest.param(
        [cq("a", {"one": {GPU: 8}, "two": {GPU: 8}}, fungibility=STOP,
            preemption=Preemption(within_cluster_queue=LOWER)),
         admitted(wl("same", {GPU: 8}, priority=5), "a", "one"), wl("new", {GPU: 8}, priority=5)],
        {"a/new": "two"}, [],
        id="MayStopSearch: a flavor needing preemption without victims is passed over"),
    pytest.param(
        [cq("a", {"one": {GPU: 8}, "two": {GPU: 8}}, fungibility=STOP,
            preemption=Preemption(within_cluster_queue=LOWER)),
         admitted(wl("low", {GPU: 8}), "a", "one"), wl("high", {GPU: 8}, priority=5)],
        {"a/high": "one"}, ["a/low"],
        id="MayStopSearch: a flavor with victims is taken, the free one after it is not tried"),
    pytest.param(
        [cq("a", {"one": {GPU: 8}, "two": {GPU: 8}}, fungibility=NEXT, cohort="c",
            preemption=RECLAIMING),
         cq("b", {"one": {GPU: 0}, "two": {GPU: 0}}, cohort="c"),
         cq("d", {"one": {GPU: 0}, "two": {GPU: 8}}, cohort="c"),
         admitted(wl("mine", {GPU: 8}), "a", "one"),
         admitted(wl("kept", {GPU: 4}, priority=9), "a", "two"),
         admitted(wl("lent", {GPU: 8}, ns="b"), "b", "two"),
         wl("high", {GPU: 8}, priority=5)],
        {"a/high": "two"}, ["b/lent"],
        id="TryNextFlavor: reclaiming from a borrower ranks above preempting in the own "
           "queue, even while borrowing"),
    pytest.param(
        [cq("a", {"one": {GPU: 10}, "two": {GPU: 10}}, fungibility=NEXT, cohort="c",
            preemption=Preemption(within_cluster_queue=LOWER)),
         cq("b", {"one": {GPU: 0}, "two": {GPU: 0}}, cohort="c"),
         admitted(wl("big", {GPU: 6}), "a", "one"),
         admitted(wl("small", {GPU: 5}), "a", "two"),
         admitted(wl("lent", {GPU: 5}, ns="b", priority=9), "b", "two"),
         wl("high", {GPU: 5}, priority=5)],
        {"a/high": "one"}, ["a/big"],
        id="TryNextFlavor: the victims' freed quota is credited, so the first flavor no longer "
           "borrows and wins the tie"),
    pytest.param(
        [cq("a", {"one": {GPU: 8}, "two": {GPU: 8}}, fungibility=NEXT,
            preemption=Preemption(within_cluster_queue=LOWER)),
         admitted(wl("same", {GPU: 8}, priority=5), "a", "one"),
         admitted(wl("low", {GPU: 8}), "a", "two"),
         wl("high", {GPU: 8}, priority=5)],
        {"a/high": "two"}, ["a/low"],
        id="TryNextFlavor: a flavor without victims ranks below one with victims"),
    pytest.param(
        [cq("a", {"one": {GPU: 8}, "two": {GPU: 8}}, fungibility=STOP),
         admitted(wl("low", {GPU: 8}), "a", "one"), wl("high", {GPU: 8}, priority=5)],
        {"a/high": "two"}, [],
        id="a queue that may not preempt passes over a flavor needing preemption"),
]


@pytest.mark.parametrize(("objects", "flavors", "evicted"), CASES)
def test_victims_decide_the_flavor(objects: list[object], flavors: dict[str, str],
                                   evicted: list[str]) -> None:
    assert decided(run_cycle(snapshot(*objects), T0)) == (flavors, evicted)


def test_the_victims_found_while_choosing_are_evicted_without_a_second_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real: Callable[..., Any] = cycle_victims.find_victims

    def counted(*args: Any) -> Any:
        calls.append(args[3].usage)
        return real(*args)

    monkeypatch.setattr(cycle_victims, "find_victims", counted)
    monkeypatch.setattr(fungible, "find_victims", counted)
    objects = [cq("a", {"one": {GPU: 8}, "two": {GPU: 8}}, fungibility=STOP,
                  preemption=Preemption(within_cluster_queue=LOWER)),
               admitted(wl("low", {GPU: 8}), "a", "one"), wl("high", {GPU: 8}, priority=5)]
    result = run_cycle(snapshot(*objects), T0)
    assert decided(result) == ({"a/high": "one"}, ["a/low"])
    assert calls == [{("one", GPU): 8000}]
