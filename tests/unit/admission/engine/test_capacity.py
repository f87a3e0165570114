"""Node capacity in the admission cycle: placement, health, topology, the three reasons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest
from builders.capacity import MIG, in_one, node, with_nodes
from builders.engine import CPU, GPU, T0, M, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.types import CycleResult, Snapshot
from quota.core.model import (
    FlavorQuotas,
    NodeHealth,
    Preemption,
    ResourceGroup,
    ResourceQuota,
    Topology,
    WithinClusterQueue,
)
from quota.core.workload import PREFERRED_TOPOLOGY, Admission, PodSetPlacement, Workload

NOW = T0
RACKS = Topology("dc", ("rack", "kubernetes.io/hostname"))


def placed(result: CycleResult, key: str) -> dict[str, int] | None:
    """Pods per node of ``key``'s first pod set, or None if it was not admitted."""
    for decision in result.admitted:
        if decision.key == key:
            placement = decision.admission.placement
            return dict(placement[0].nodes) if placement else {}
    return None


def reason(result: CycleResult, key: str) -> tuple[str, Mapping[str, Any]]:
    status = result.pending[key]
    return str(status.reason.code), status.reason.details


def team(gpus: int = 64, **extra: Any) -> Snapshot:
    """One ClusterQueue with ``gpus`` of quota in flavor ``default``, and ``extra`` workloads."""
    return snapshot(cq("a", {"default": {GPU: gpus}}), *extra.values())


# --- admission against the nodes ---------------------------------------------------------

ADMITS = [
    pytest.param(team(pretrain=wl("pretrain", {GPU: 8}, count=2)), (), "a/pretrain", {},
                 id="without nodes only quota limits it and no placement is recorded"),
    pytest.param(team(pretrain=wl("pretrain", {GPU: 8}, count=2)),
                 (node("n1", 8), node("n2", 8)), "a/pretrain", {"n1": 1, "n2": 1},
                 id="one pod per node when each pod needs a whole node"),
    pytest.param(team(small=wl("small", {GPU: 2}, count=3)),
                 (node("n1", 8), node("n2", 4)), "a/small", {"n2": 2, "n1": 1},
                 id="best fit fills the fuller node first"),
    pytest.param(snapshot(cq("a", {"default": {GPU: 8, CPU: 64}}), wl("cpu", {GPU: 8, CPU: 64})),
                 (node("n1", 8),), "a/cpu", {"n1": 1},
                 id="a resource the node does not list (cpu) limits nothing"),
    pytest.param(team(pinned=wl("pinned", {GPU: 4}, selector={"zone": "b"})),
                 (node("n1", 8, labels={"zone": "a"}), node("n2", 8, labels={"zone": "b"})),
                 "a/pinned", {"n2": 1}, id="the pod's nodeSelector picks the node"),
    pytest.param(team(degraded=wl("degraded", {GPU: 6})),
                 (node("n1", 6, capacity=8, health=NodeHealth.DEGRADED),), "a/degraded",
                 {"n1": 1}, id="a degraded node still offers its healthy devices"),
]


@pytest.mark.parametrize(("base", "nodes", "key", "expected"), ADMITS)
def test_admits_onto_nodes(base: Snapshot, nodes: tuple[Any, ...], key: str,
                           expected: dict[str, int]) -> None:
    result = run_cycle(with_nodes(base, *nodes) if nodes else base, NOW)
    assert placed(result, key) == expected
    admission = next(d.admission for d in result.admitted if d.key == key)
    assert (admission.placement is None) == (not nodes)


def holder(placement: dict[str, int] | None, count: int = 1, gpus: int = 8) -> Workload:
    """Workload ``a/old``, admitted in ``a`` with ``count`` pods of ``gpus``, on ``placement``."""
    held = admitted(wl("old", {GPU: gpus}, count=count), "a")
    if placement is None:
        return held
    assert held.admission is not None
    recorded = (PodSetPlacement("main", placement),)
    return replace(held, admission=replace(held.admission, placement=recorded))


# --- why it waits --------------------------------------------------------------------------

WAITS = [
    pytest.param(
        team(pretrain=wl("pretrain", {GPU: 8}, count=2)),
        (node("a", 8), node("b", 5, capacity=8)),
        "UnhealthyCapacity",
        {"flavor": "default", "resource": GPU, "shortfall": "3",
         "unhealthyNodes": [{"node": "b", "devices": "3"}]},
        id="the sick-node example: repairing 3 GPUs of b would let it run"),
    pytest.param(
        team(job=wl("job", {GPU: 8})),
        (node("a", 8, health=NodeHealth.CORDONED),),
        "UnhealthyCapacity",
        {"flavor": "default", "resource": GPU, "shortfall": "8",
         "unhealthyNodes": [{"node": "a", "devices": "8"}]},
        id="a cordoned node offers nothing until repaired"),
    pytest.param(
        team(job=wl("job", {GPU: 8})),
        (node("a", 8, ready=False), node("b", 8, health=NodeHealth.VALIDATING)),
        "UnhealthyCapacity",
        {"flavor": "default", "resource": GPU, "shortfall": "8",
         "unhealthyNodes": [{"node": "a", "devices": "8"}]},
        id="one repaired node is enough, and the hint names only it"),
    pytest.param(
        team(job=wl("job", {GPU: 8})),
        (node("a", 8, unschedulable=True),),
        "UnhealthyCapacity",
        {"flavor": "default", "resource": GPU, "shortfall": "8",
         "unhealthyNodes": [{"node": "a", "devices": "8"}]},
        id="an unschedulable node counts as unhealthy"),
    pytest.param(
        team(job=wl("job", {GPU: 16})),
        (node("a", 8), node("b", 4, capacity=8)),
        "ExceedsNodeCapacity",
        {"podSet": "main", "resource": GPU, "requested": "16", "largestNode": "8",
         "flavors": ["default"]},
        id="no node holds a 16-GPU pod even repaired: it can never run"),
    pytest.param(
        team(job=wl("job", {GPU: 8}, count=3)),
        (node("a", 8), node("b", 8)),
        "InsufficientCapacity",
        {"flavor": "default", "resource": GPU, "requested": "24", "free": "16",
         "capacity": "16"},
        id="sold out: more requested than the class has"),
    pytest.param(
        team(job=wl("job", {GPU: 8}), old=holder({"a": 1, "b": 1}, count=2, gpus=4)),
        (node("a", 8), node("b", 8)),
        "TopologyPlacementFailed",
        {"flavor": "default", "level": "kubernetes.io/hostname", "resource": GPU,
         "requested": "8", "largestDomainFree": "4"},
        id="8 free in total but 4 per node: fragmented per node"),
    pytest.param(
        team(job=in_one(wl("job", {GPU: 4}, count=2), "rack")),
        (node("a", 4, labels={"rack": "r1"}), node("b", 4, labels={"rack": "r2"})),
        "TopologyPlacementFailed",
        {"flavor": "default", "level": "rack", "resource": GPU, "requested": "8",
         "largestDomainFree": "4"},
        id="each pod fits a node, the pod set fits no rack"),
    pytest.param(
        team(job=wl("job", {GPU: 4}, selector={"zone": "c"})),
        (node("a", 8, labels={"zone": "a"}),),
        "InsufficientCapacity",
        {"flavor": "default", "resource": GPU, "requested": "4", "free": "0", "capacity": "0"},
        id="no node of the flavor matches the pod's nodeSelector"),
]


@pytest.mark.parametrize(("base", "nodes", "code", "details"), WAITS)
def test_waits_with_the_capacity_reason(base: Snapshot, nodes: tuple[Any, ...], code: str,
                                        details: dict[str, Any]) -> None:
    snap = with_nodes(base, *nodes, topologies=(RACKS,), flavor_topology={"default": "dc"})
    result = run_cycle(snap, NOW)
    assert not result.admitted
    key = next(iter(base.workloads))
    assert reason(result, key) == (code, details)
    assert [str(r.code) for r in result.pending[key].reasons] == [code]


def test_the_repair_hint_names_the_node_and_its_devices() -> None:
    snap = with_nodes(team(job=wl("job", {GPU: 8}, count=2)),
                      node("a", 8), node("b", 5, capacity=8))
    hints = run_cycle(snap, NOW).pending["a/job"].hints
    assert hints == ("would fit if node b (3 unhealthy GPUs) were repaired",)


def test_a_workload_short_of_quota_waits_for_quota() -> None:
    # Quota used up and the node full: quota is checked first, and is what it waits for.
    snap = with_nodes(team(8, old=holder({"a": 1}), job=wl("job", {GPU: 8})), node("a", 8))
    assert reason(run_cycle(snap, NOW), "a/job")[0] == "WaitingForQuota"


# --- occupancy -----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("old", "expected"),
    [
        pytest.param(holder({"a": 1}), {"b": 1}, id="a recorded placement occupies its node"),
        pytest.param(holder({"b": 1}), {"a": 1}, id="whichever node it records"),
        pytest.param(holder(None), {"b": 1},
                     id="an admission without a placement is placed greedily (first node)"),
    ],
)
def test_admitted_workloads_occupy_their_nodes(old: Workload, expected: dict[str, int]) -> None:
    snap = with_nodes(team(old=old, new=wl("new", {GPU: 8})), node("a", 8), node("b", 8))
    assert placed(run_cycle(snap, NOW), "a/new") == expected


def test_a_placement_on_a_node_that_left_the_inventory_is_ignored() -> None:
    snap = with_nodes(team(old=holder({"gone": 1}), new=wl("new", {GPU: 8})), node("a", 8))
    assert placed(run_cycle(snap, NOW), "a/new") == {"a": 1}


def test_evicted_victims_give_their_nodes_to_the_preemptor() -> None:
    policy = Preemption(within_cluster_queue=WithinClusterQueue.LOWER_PRIORITY)
    low = replace(holder({"a": 1}), priority=0)
    high = wl("high", {GPU: 8}, priority=10)
    base = snapshot(cq("a", {"default": {GPU: 8}}, preemption=policy), low, high)
    result = run_cycle(with_nodes(base, node("a", 8)), NOW)
    assert [e.key for e in result.evicted] == ["a/old"]
    assert placed(result, "a/high") == {"a": 1}


def test_partial_admission_takes_the_pods_the_nodes_hold() -> None:
    elastic = wl("elastic", {GPU: 8}, count=4, min_count=2)
    snap = with_nodes(team(elastic=elastic), node("a", 8), node("b", 8), node("c", 8))
    result = run_cycle(snap, NOW)
    assert placed(result, "a/elastic") == {"a": 1, "b": 1, "c": 1}
    assert result.admitted[0].admission.pod_sets[0].count == 3


def test_pods_admitted_in_one_cycle_do_not_share_a_node() -> None:
    snap = with_nodes(team(one=wl("one", {GPU: 8}), two=wl("two", {GPU: 8}, created=1)),
                      node("a", 8))
    result = run_cycle(snap, NOW)
    assert placed(result, "a/one") == {"a": 1}
    assert reason(result, "a/two")[0] == "InsufficientCapacity"


def test_a_flavor_without_room_passes_the_pod_set_to_the_next_flavor() -> None:
    base = snapshot(cq("a", {"h100": {GPU: 64}, "a100": {GPU: 64}}), wl("job", {GPU: 8}))
    snap = with_nodes(base, node("h1", 8, capacity=8, ready=False),
                      node("x1", 8, labels={"gpu": "a100"}),
                      labels={"h100": {"gpu": "h100"}, "a100": {"gpu": "a100"}})
    result = run_cycle(snap, NOW)
    assert dict(result.admitted[0].admission.pod_sets[0].flavors) == {GPU: "a100"}
    assert placed(result, "a/job") == {"x1": 1}


# --- MIG slices and whole GPUs --------------------------------------------------------------

def mixed() -> Snapshot:
    """One resource group offering both flavors for both resources, with quota everywhere:
    only the nodes keep slices and whole GPUs apart."""
    quotas = tuple(ResourceQuota(r, 64 * M) for r in (GPU, MIG))
    group = ResourceGroup((GPU, MIG), (FlavorQuotas("mig", quotas), FlavorQuotas("h100", quotas)))
    base = snapshot(cq("a", resource_groups=(group,)))
    return with_nodes(base, node("whole", 8), node("sliced", {MIG: 7}, labels={"gpu": "mig"}),
                      labels={"h100": {"gpu": "h100"}, "mig": {"gpu": "mig"}})


@pytest.mark.parametrize(
    ("request_", "flavor", "nodes"),
    [
        pytest.param({GPU: 1}, "h100", {"whole": 1},
                     id="a whole GPU skips the MIG flavor listed first"),
        pytest.param({MIG: 1}, "mig", {"sliced": 1}, id="a slice lands on the MIG node"),
    ],
)
def test_whole_gpus_and_slices_never_share_a_flavor(request_: dict[str, int], flavor: str,
                                                    nodes: dict[str, int]) -> None:
    snap = mixed()
    snap = replace(snap, workloads={"a/job": wl("job", request_)})
    result = run_cycle(snap, NOW)
    assert set(result.admitted[0].admission.pod_sets[0].flavors.values()) == {flavor}
    assert placed(result, "a/job") == nodes


@pytest.mark.parametrize(
    ("request_", "resource", "largest"),
    [pytest.param({GPU: 9}, GPU, "8", id="more whole GPUs than the whole node has"),
     pytest.param({MIG: 8}, MIG, "7", id="more slices than the MIG node has")],
)
def test_a_request_the_right_kind_cannot_hold_waits_instead_of_crossing_over(
        request_: dict[str, int], resource: str, largest: str) -> None:
    # The other kind's node lists none of the resource: it holds no such pod either, so
    # no node of either flavor ever will.
    snap = replace(mixed(), workloads={"a/job": wl("job", request_)})
    result = run_cycle(snap, NOW)
    assert not result.admitted
    code, details = reason(result, "a/job")
    assert (code, details["resource"], details["largestNode"]) == (
        "ExceedsNodeCapacity", resource, largest)


# --- topology -------------------------------------------------------------------------------

def racks(*free: tuple[str, str, int]) -> tuple[Any, ...]:
    return tuple(node(name, gpus, labels={"rack": rack}) for name, rack, gpus in free)


@pytest.mark.parametrize(
    ("workload", "nodes", "expected", "domain"),
    [
        pytest.param(in_one(wl("job", {GPU: 4}, count=2), "rack"),
                     racks(("a1", "r1", 8), ("a2", "r1", 8), ("b1", "r2", 8)),
                     {"b1": 2}, "r2", id="required: the smallest rack that fits"),
        pytest.param(in_one(wl("job", {GPU: 4}, count=4), "rack"),
                     racks(("a1", "r1", 8), ("a2", "r1", 8), ("b1", "r2", 8)),
                     {"a1": 2, "a2": 2}, "r1", id="required: the rack that can hold it all"),
        pytest.param(in_one(wl("job", {GPU: 8}, count=2), "rack", PREFERRED_TOPOLOGY),
                     racks(("a1", "r1", 8), ("b1", "r2", 8)),
                     {"a1": 1, "b1": 1}, None, id="preferred: spread when no rack fits"),
        pytest.param(in_one(wl("job", {GPU: 8}, count=2), "kubernetes.io/hostname"),
                     racks(("a1", "r1", 16), ("b1", "r2", 8)),
                     {"a1": 2}, "a1", id="hostname level: every node is its own domain"),
    ],
)
def test_topology_placement(workload: Workload, nodes: tuple[Any, ...],
                            expected: dict[str, int], domain: str | None) -> None:
    snap = with_nodes(team(job=workload), *nodes, topologies=(RACKS,),
                      flavor_topology={"default": "dc"})
    result = run_cycle(snap, NOW)
    assert placed(result, "a/job") == expected
    placement = result.admitted[0].admission.placement
    assert placement is not None and placement[0].domain == domain


@pytest.mark.parametrize(
    ("flavor_topology", "why"),
    [
        pytest.param({}, "the flavor names no topology", id="flavor without a topology"),
        pytest.param({"default": "dc"}, "which topology dc does not have",
                     id="level not in the flavor's topology"),
    ],
)
def test_a_required_topology_the_flavor_cannot_give_is_no_matching_flavor(
        flavor_topology: dict[str, str], why: str) -> None:
    job = in_one(wl("job", {GPU: 1}), "block")
    snap = with_nodes(team(job=job), node("a", 8), topologies=(RACKS,),
                      flavor_topology=flavor_topology)
    code, details = reason(run_cycle(snap, NOW), "a/job")
    assert code == "NoMatchingFlavor"
    assert why in details["flavors"]["default"]


def test_admission_records_no_placement_for_a_flavor_without_nodes() -> None:
    base = snapshot(cq("a", {"cloud": {GPU: 8}}), wl("job", {GPU: 8}))
    snap = with_nodes(base, node("other", 8), labels={"cloud": {"gpu": "none"}})
    result = run_cycle(snap, NOW)
    assert result.admitted[0].admission == Admission(
        "a", result.admitted[0].admission.pod_sets, None)


# --- the per-flavor priority floor (berth.dev/min-priority) ---------------------------------

def floored(*pending: Workload) -> Snapshot:
    """Flavor ``special`` (first) admits priority 100 and up; ``general`` anyone."""
    base = snapshot(cq("a", {"special": {GPU: 8}, "general": {GPU: 8}}), *pending)
    flavors = dict(base.flavors)
    flavors["special"] = replace(flavors["special"], min_priority=100)
    return replace(base, flavors=flavors)


@pytest.mark.parametrize(
    ("priority", "flavor"),
    [
        pytest.param(100, "special", id="at the floor it may use the specialised flavor"),
        pytest.param(5, "general", id="below the floor it goes to the next flavor"),
    ],
)
def test_min_priority_keeps_low_priority_work_off_a_flavor(priority: int, flavor: str) -> None:
    result = run_cycle(floored(wl("job", {GPU: 4}, priority=priority)), NOW)
    assert dict(result.admitted[0].admission.pod_sets[0].flavors) == {GPU: flavor}


def test_equal_shapes_of_different_priority_get_their_own_flavors() -> None:
    high, low = wl("high", {GPU: 4}, priority=100), wl("low", {GPU: 4}, created=1)
    result = run_cycle(floored(high, low), NOW)
    assert {d.key: d.admission.pod_sets[0].flavors[GPU] for d in result.admitted} == {
        "a/high": "special", "a/low": "general"}


def test_below_every_floor_it_waits_with_no_matching_flavor_and_why() -> None:
    base = snapshot(cq("a", {"special": {GPU: 8}}), wl("job", {GPU: 4}, priority=5))
    base = replace(base, flavors={"special": replace(base.flavors["special"], min_priority=100)})
    code, details = reason(run_cycle(base, NOW), "a/job")
    assert code == "NoMatchingFlavor"
    assert details == {"podSet": "main", "flavors": {"special": (
        "the flavor takes workloads of priority 100 or more (berth.dev/min-priority), "
        "this one has priority 5")}}
