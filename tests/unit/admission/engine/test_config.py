"""Stopped queues, broken configuration and deactivated workloads."""

from __future__ import annotations

import pytest
from builders.engine import CPU, GPU, T0, admitted, cohort, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.types import CycleResult
from quota.core.model import (
    LabelSelector,
    LocalQueue,
    Namespace,
    PriorityClass,
    ResourceFlavor,
    StopPolicy,
)
from quota.core.workload import WorkloadState

QUEUE = {"default": {GPU: 8}}
TEAM = Namespace("a", {"team": "a"})


def run(*objects: object, **options: bool) -> CycleResult:
    return run_cycle(snapshot(*objects, **options), T0)


@pytest.mark.parametrize(
    ("objects", "options", "code", "details"),
    [
        pytest.param([cq("a", QUEUE), wl("x", {GPU: 1}, active=False)], {}, "Deactivated", {},
                     id="an inactive workload is Deactivated"),
        pytest.param([cq("a", QUEUE), wl("x", {GPU: 1}, state=WorkloadState.DEACTIVATED)], {},
                     "Deactivated", {}, id="a workload in state Deactivated is Deactivated"),
        pytest.param([cq("a", QUEUE), wl("x", {GPU: 1}, queue="nope")], {}, "Misconfigured",
                     {"object": "LocalQueue a/nope", "problem": "it does not exist"},
                     id="a missing LocalQueue is Misconfigured"),
        pytest.param([LocalQueue("a", "lq", "gone"), wl("x", {GPU: 1})], {}, "Misconfigured",
                     {"object": "ClusterQueue gone",
                      "problem": "it does not exist (named by LocalQueue a/lq)"},
                     id="a missing ClusterQueue is Misconfigured"),
        pytest.param([cq("a", QUEUE, selector=None), wl("x", {GPU: 1})], {}, "Misconfigured",
                     {"object": "ClusterQueue a",
                      "problem": "its namespaceSelector does not select namespace a"},
                     id="a null namespaceSelector selects no namespace"),
        pytest.param([cq("a", QUEUE, selector=LabelSelector({"team": "b"})), TEAM,
                      wl("x", {GPU: 1})], {}, "Misconfigured",
                     {"object": "ClusterQueue a",
                      "problem": "its namespaceSelector does not select namespace a"},
                     id="a namespace the selector does not match is Misconfigured"),
        pytest.param([cq("a", QUEUE, selector=LabelSelector({"team": "a"})),
                      wl("x", {GPU: 1})], {}, "Misconfigured",
                     {"object": "ClusterQueue a",
                      "problem": "its namespaceSelector does not select namespace a"},
                     id="a namespace missing from the snapshot has no labels"),
        pytest.param([cq("a", QUEUE), wl("x", {GPU: 1}, priority_class="urgent")], {},
                     "Misconfigured", {"object": "WorkloadPriorityClass urgent",
                                       "problem": "it does not exist"},
                     id="an unknown priority class is Misconfigured"),
        pytest.param([cq("a", QUEUE), wl("x", {GPU: 1}, count=0)], {}, "Misconfigured",
                     {"object": "Workload a/x",
                      "problem": "pod set main has count 0, at least 1 is needed"},
                     id="an invalid request is Misconfigured"),
        pytest.param([cq("a", QUEUE), wl("x", {GPU: 1})], {"auto_flavors": False},
                     "Misconfigured", {"object": "ClusterQueue a",
                                       "problem": "it names flavor default, which does not exist"},
                     id="a missing flavor makes the queue Misconfigured"),
        pytest.param([cq("a", QUEUE, cohort="x"), cohort("x", "y"), cohort("y", "x"),
                      wl("x", {GPU: 1})], {}, "Misconfigured",
                     {"object": "ClusterQueue a",
                      "problem": "its cohort x is on a cycle of parent cohorts"},
                     id="cohort cycle makes the queue Misconfigured"),
        pytest.param([cq("a", QUEUE, stop=StopPolicy.HOLD), wl("x", {GPU: 1})], {},
                     "Suspended", {"object": "ClusterQueue a"},
                     id="a held ClusterQueue suspends its workloads"),
        pytest.param([cq("a", QUEUE), LocalQueue("a", "lq", "a", StopPolicy.HOLD),
                      wl("x", {GPU: 1})], {}, "Suspended", {"object": "LocalQueue a/lq"},
                     id="a held LocalQueue suspends its workloads"),
    ],
)
def test_held_back(objects: list[object], options: dict[str, bool], code: str,
                   details: dict[str, object]) -> None:
    result = run(*objects, **options)
    assert result.admitted == ()
    reason = result.pending["a/x"].reason
    assert (reason.code, reason.details) == (code, details)


def test_namespace_selector_that_matches_admits() -> None:
    result = run(cq("a", QUEUE, selector=LabelSelector({"team": "a"})), TEAM,
                 wl("x", {GPU: 1}))
    assert [d.key for d in result.admitted] == ["a/x"]


def test_every_static_reason_is_listed_primary_first() -> None:
    result = run(cq("a", QUEUE, stop=StopPolicy.HOLD),
                 wl("x", {GPU: 16}, active=False, priority_class="gone"),
                 PriorityClass("other", 1))
    assert [r.code for r in result.pending["a/x"].reasons] == [
        "Deactivated", "Misconfigured", "Suspended", "ExceedsMaxQuota"]


@pytest.mark.parametrize(
    ("queues", "stopped"),
    [
        pytest.param([cq("a", QUEUE, stop=StopPolicy.HOLD)], "ClusterQueue a",
                     id="a held ClusterQueue"),
        pytest.param([cq("a", QUEUE), LocalQueue("a", "lq", "a", StopPolicy.HOLD)],
                     "LocalQueue a/lq", id="a held LocalQueue"),
    ],
)
def test_suspended_comes_before_no_matching_flavor(queues: list[object], stopped: str) -> None:
    # spec/wait-reasons.md: Suspended (3) precedes NoMatchingFlavor (4). The queue covers
    # no cpu, so no flavor can ever serve x; it is held by a stopped queue as well.
    result = run(*queues, wl("x", {GPU: 1, CPU: 1}))
    status = result.pending["a/x"]
    assert [(r.code, r.details) for r in status.reasons] == [
        ("Suspended", {"object": stopped}),
        ("NoMatchingFlavor",
         {"podSet": "main", "flavors": {"*": "no resource group of ClusterQueue a covers cpu"}}),
    ]
    assert status.reason.code == result.pending.code("a/x") == "Suspended"


@pytest.mark.parametrize(
    ("objects", "evicted", "reason"),
    [
        pytest.param([cq("a", QUEUE, stop=StopPolicy.HOLD_AND_DRAIN),
                      admitted(wl("x", {GPU: 1}), "a")], ["a/x"], "ClusterQueueStopped",
                     id="HoldAndDrain on a ClusterQueue evicts its admitted workloads"),
        pytest.param([cq("a", QUEUE), LocalQueue("a", "lq", "a", StopPolicy.HOLD_AND_DRAIN),
                      admitted(wl("x", {GPU: 1}), "a")], ["a/x"], "ClusterQueueStopped",
                     id="HoldAndDrain on a LocalQueue evicts its admitted workloads"),
        pytest.param([cq("a", QUEUE, stop=StopPolicy.HOLD),
                      admitted(wl("x", {GPU: 1}), "a")], [], None,
                     id="Hold leaves admitted workloads running"),
        pytest.param([cq("a", QUEUE), admitted(wl("x", {GPU: 1}, active=False), "a")],
                     ["a/x"], "Deactivated", id="a deactivated admitted workload is evicted"),
    ],
)
def test_drain(objects: list[object], evicted: list[str], reason: str | None) -> None:
    result = run(*objects)
    assert [e.key for e in result.evicted] == evicted
    for eviction in result.evicted:
        assert (eviction.reason, eviction.cause, eviction.preemptor) == (reason, None, "")


def test_drained_quota_is_free_in_the_same_cycle() -> None:
    result = run(cq("a", QUEUE, cohort="c", stop=StopPolicy.HOLD_AND_DRAIN),
                 cq("b", {"default": {GPU: 0}}, cohort="c"),
                 admitted(wl("x", {GPU: 8}), "a"), wl("y", {GPU: 8}, ns="b"))
    assert [d.key for d in result.admitted] == ["b/y"]


def test_topology_a_flavor_names_must_exist() -> None:
    result = run(ResourceFlavor("default", topology_name="racks"), cq("a", QUEUE),
                 wl("x", {GPU: 1}))
    assert result.pending["a/x"].reason.details["problem"] == (
        "its flavor default names topology racks, which does not exist")


def test_deactivated_workloads_take_no_place_in_the_queue() -> None:
    result = run(cq("a", {"default": {GPU: 1}}), admitted(wl("held", {GPU: 1}), "a"),
                 wl("off", {GPU: 1}, active=False), wl("x", {GPU: 1}, created=1))
    assert (result.pending["a/off"].position, result.pending["a/x"].position) == (None, 1)
