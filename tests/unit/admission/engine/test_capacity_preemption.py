"""Preemption that places: victims only where their removal lets the preemptor's pods onto
the nodes, evictions for full nodes, and pods no node can ever hold (ExceedsNodeCapacity)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from builders.capacity import node, with_nodes
from builders.engine import CPU, GPU, T0, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.types import CycleResult
from quota.core.model import (
    Node,
    Preemption,
    QueueingStrategy,
    ReclaimWithinCohort,
    StopPolicy,
    WithinClusterQueue,
)
from quota.core.workload import PodSetPlacement, Workload

LOWER = Preemption(within_cluster_queue=WithinClusterQueue.LOWER_PRIORITY)
RECLAIM = Preemption(reclaim_within_cohort=ReclaimWithinCohort.ANY)


def running(name: str, gpus: int, nodes: dict[str, int], *, priority: int = 0,
            ns: str = "a") -> Workload:
    """An admitted workload of queue ``ns`` with one pod of ``gpus`` per pod on ``nodes``."""
    held = admitted(wl(name, {GPU: gpus}, count=sum(nodes.values()), ns=ns,
                       priority=priority), ns)
    assert held.admission is not None
    placement = (PodSetPlacement("main", nodes),)
    return replace(held, admission=replace(held.admission, placement=placement))


def gpus(name: str, count: int, **labels: str) -> Node:
    return node(name, count, labels=labels)


@dataclass
class Case:
    objects: tuple[object, ...]
    nodes: tuple[Node, ...]
    evicted: list[tuple[str, str]] = field(default_factory=list)  # (key, cause)
    placed: dict[str, dict[str, int]] = field(default_factory=dict)  # admitted key -> nodes
    waits: dict[str, str] = field(default_factory=dict)  # pending key -> primary code
    labels: dict[str, dict[str, str]] = field(default_factory=dict)  # flavor -> nodeLabels


def decide(case: Case) -> CycleResult:
    return run_cycle(with_nodes(snapshot(*case.objects), *case.nodes, labels=case.labels), T0)


CASES = [
    pytest.param(Case(
        (cq("a", {"default": {GPU: 16}}, preemption=LOWER),
         running("low-1", 8, {"n1": 1}), running("low-2", 8, {"n2": 1}),
         wl("big", {GPU: 16}, priority=10)),
        (gpus("n1", 8), gpus("n2", 8)),
        waits={"a/big": "ExceedsNodeCapacity"}),
        id="a 16-GPU pod on 8-GPU nodes evicts nobody: freeing quota would be for nothing"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 24}}, preemption=LOWER),
         running("split", 4, {"n1": 1, "n2": 1}),  # 8 GPUs of quota, 4 on each node
         running("keep-1", 4, {"n1": 1}, priority=20), running("keep-2", 4, {"n2": 1}, priority=20),
         running("whole", 8, {"n3": 1}, priority=1),
         wl("high", {GPU: 8}, priority=10)),
        (gpus("n1", 8), gpus("n2", 8), gpus("n3", 8)),
        evicted=[("a/whole", "InClusterQueue")], placed={"a/high": {"n3": 1}}),
        id="quota alone would take the lowest priority; placement takes the one whose node "
           "then holds the pod"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 24}}, preemption=LOWER),
         running("split", 4, {"n1": 1, "n2": 1}),
         running("keep-1", 4, {"n1": 1}, priority=20), running("keep-2", 4, {"n2": 1}, priority=20),
         running("whole", 8, {"n3": 1}, priority=20),
         wl("high", {GPU: 8}, priority=10)),
        (gpus("n1", 8), gpus("n2", 8), gpus("n3", 8)),
        waits={"a/high": "WaitingForQuota"}),
        id="victims that free quota but no whole node are not taken"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 16}}, preemption=LOWER),
         running("low", 8, {"n1": 1}), wl("high", {GPU: 8}, priority=10)),
        (gpus("n1", 8),),
        evicted=[("a/low", "InClusterQueue")], placed={"a/high": {"n1": 1}}),
        id="quota admits it and the node is full of lower-priority work: that work goes"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 16}}), running("low", 8, {"n1": 1}),
         wl("high", {GPU: 8}, priority=10)),
        (gpus("n1", 8),),
        waits={"a/high": "InsufficientCapacity"}),
        id="without a preemption policy full nodes are waited for"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 16}}, preemption=LOWER),
         running("higher", 8, {"n1": 1}, priority=20), wl("high", {GPU: 8}, priority=10)),
        (gpus("n1", 8),),
        waits={"a/high": "InsufficientCapacity"}),
        id="the policy never evicts higher-priority work for nodes"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 32}}, preemption=LOWER),
         running("zone-a", 8, {"n1": 1}), running("zone-b", 8, {"n2": 1}, priority=1),
         wl("pinned", {GPU: 8}, priority=10, selector={"zone": "b"})),
        (gpus("n1", 8, zone="a"), gpus("n2", 8, zone="b")),
        evicted=[("a/zone-b", "InClusterQueue")], placed={"a/pinned": {"n2": 1}}),
        id="the lowest priority on a node the pod cannot use is spared"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 8}}, cohort="all", preemption=RECLAIM),
         cq("b", {"default": {GPU: 8}}, cohort="all"),
         running("own", 8, {"n1": 1}, ns="b"), wl("want", {GPU: 8}, priority=10)),
        (gpus("n1", 8),),
        waits={"a/want": "InsufficientCapacity"}),
        id="another queue's work within its nominal quota keeps its node"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 16}}, cohort="all", preemption=RECLAIM),
         cq("b", {"default": {GPU: 0}}, cohort="all"),
         running("borrowed", 8, {"n1": 1}, ns="b"), wl("want", {GPU: 8})),
        (gpus("n1", 8),),
        evicted=[("b/borrowed", "InCohortReclamation")], placed={"a/want": {"n1": 1}}),
        id="a borrower on the node is reclaimed for capacity as for quota"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 32}, "cloud": {GPU: 32}}), wl("big", {GPU: 16})),
        (gpus("n1", 8),),
        placed={"a/big": {}}, labels={"cloud": {"gpu": "none"}}),
        id="a flavor without nodes is limited by quota alone: the pod is not too big"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 16}}), wl("sick", {GPU: 8})),
        (node("n1", 4, capacity=8),),
        waits={"a/sick": "UnhealthyCapacity"}),
        id="a node is as large as its devices, healthy or not"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 16}}, strategy=QueueingStrategy.STRICT_FIFO),
         wl("head", {GPU: 12}), wl("next", {GPU: 4}, created=1)),
        (gpus("n1", 8),),
        placed={"a/next": {"n1": 1}}, waits={"a/head": "ExceedsNodeCapacity"}),
        id="a StrictFIFO head no node can hold blocks nobody"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 8}}, cohort="all"), cq("b", {"default": {GPU: 8}}, cohort="all"),
         cq("c", {"default": {GPU: 8}}, cohort="all"), running("r", 8, {"n2": 1}, ns="b"),
         wl("h", {GPU: 16}, priority=10), wl("n", {GPU: 8}, created=1),
         wl("b", {GPU: 8}, ns="b", priority=20)),
        (gpus("n1", 8), gpus("n2", 8)),
        placed={"a/n": {"n1": 1}}, waits={"a/h": "ExceedsNodeCapacity",
                                          "b/b": "InsufficientCapacity"}),
        id="a head no node can hold does not keep its queue's non-borrowing work behind "
           "a cohort borrower"),
    pytest.param(Case(
        (cq("a", {"default": {GPU: 16}}, strategy=QueueingStrategy.STRICT_FIFO),
         running("old", 4, {"n1": 1}), wl("head", {GPU: 8}), wl("next", {GPU: 4}, created=1)),
        (gpus("n1", 8),),
        waits={"a/head": "InsufficientCapacity", "a/next": "BlockedByQueueHead"}),
        id="a StrictFIFO head that fits a node once it frees still blocks"),
]


@pytest.mark.parametrize("case", CASES)
def test_preemption_and_the_nodes(case: Case) -> None:
    result = decide(case)
    assert [(e.key, str(e.cause)) for e in result.evicted] == case.evicted
    placed = {d.key: {n: c for p in d.admission.placement or () for n, c in p.nodes.items()}
              for d in result.admitted}
    assert placed == case.placed
    assert {k: str(result.pending[k].reason.code) for k in case.waits} == case.waits


def test_exceeds_node_capacity_names_the_resource_and_the_largest_node() -> None:
    case = Case((cq("a", {"default": {GPU: 64}}), wl("big", {GPU: 24})),
                (gpus("n1", 8), node("n2", 6, capacity=12)))
    details: dict[str, Any] = dict(decide(case).pending["a/big"].reason.details)
    assert details == {"podSet": "main", "resource": GPU, "requested": "24",
                       "largestNode": "12", "flavors": ["default"]}


def test_nodes_each_short_of_another_resource_still_hold_no_pod() -> None:
    # n1 has the GPUs but not the cpu, n2 the cpu but not the GPUs: no node holds the pod.
    case = Case((cq("a", {"default": {GPU: 64, CPU: 64}}), wl("job", {GPU: 8, CPU: 16})),
                (node("n1", {GPU: 8, CPU: 8}), node("n2", {GPU: 4, CPU: 32})))
    reason = decide(case).pending["a/job"].reason
    assert (str(reason.code), reason.details["resource"], reason.details["largestNode"]) == (
        "ExceedsNodeCapacity", GPU, "4")


def test_a_held_workload_also_says_no_node_can_hold_it() -> None:
    # Its queue is stopped (Suspended comes first), but un-stopping it would not help.
    case = Case((cq("a", {"default": {GPU: 64}}, stop=StopPolicy.HOLD), wl("big", {GPU: 16})),
                (gpus("n1", 8),))
    codes = [str(r.code) for r in decide(case).pending["a/big"].reasons]
    assert codes == ["Suspended", "ExceedsNodeCapacity"]
