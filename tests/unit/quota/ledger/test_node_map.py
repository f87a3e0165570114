"""The node map's arithmetic: devices allocated from recorded placements, unhealthy from
health and allocatable, free as what is left, and which workloads sit where."""

from __future__ import annotations

import pytest

from quota.core.model import Node, NodeHealth, ResourceFlavor
from quota.core.workload import Admission, PodSetAssignment, PodSetPlacement
from quota.ledger.reads.activity import NodeDevices, Placed, Resident, node_map_of

GPU = "nvidia.com/gpu"
H100 = ResourceFlavor("h100", node_labels={"gpu": "h100"})


def _node(name: str, gpus: int = 8, allocatable: int | None = None, **kw: object) -> Node:
    alloc = gpus if allocatable is None else allocatable
    return Node(name, labels={"gpu": "h100"}, capacity={GPU: gpus * 1000},
                allocatable={GPU: alloc * 1000}, **kw)  # type: ignore[arg-type]


def _placed(name: str, pods: int, per_pod: int, where: dict[str, int] | None) -> Placed:
    assignment = PodSetAssignment("main", pods, {GPU: "h100"}, {GPU: pods * per_pod * 1000})
    placement = None if where is None else (PodSetPlacement("main", where),)
    return Placed("ns", name, Admission("q", (assignment,), placement))


@pytest.mark.parametrize(
    ("node", "placed", "expected"),
    [
        pytest.param(_node("a"), [_placed("w", 2, 2, {"a": 2})], NodeDevices(GPU, 8000, 0, 4000),
                     id="two pods of two GPUs allocate four"),
        pytest.param(_node("a"), [_placed("w", 4, 2, {"a": 1, "b": 3})],
                     NodeDevices(GPU, 8000, 0, 2000),
                     id="a workload spread over nodes counts only its pods on this one"),
        pytest.param(_node("a", 8, 6, health=NodeHealth.DEGRADED), [_placed("w", 1, 4, {"a": 1})],
                     NodeDevices(GPU, 8000, 2000, 4000),
                     id="a degraded node loses only its bad devices"),
        pytest.param(_node("a", health=NodeHealth.REPAIRING), [],
                     NodeDevices(GPU, 8000, 8000, 0), id="a node under repair has nothing free"),
        pytest.param(_node("a"), [_placed("w", 2, 4, None)], NodeDevices(GPU, 8000, 0, 0),
                     id="an admission on quota alone sits on no node"),
    ],
)
def test_node_devices(node: Node, placed: list[Placed], expected: NodeDevices) -> None:
    [slot] = node_map_of([node], [H100], placed)
    assert slot.resources == (expected,)
    assert slot.flavors == ("h100",)


def test_free_is_what_neither_work_nor_faults_take() -> None:
    assert NodeDevices(GPU, 8000, 2000, 4000).free == 2000
    assert NodeDevices(GPU, 8000, 8000, 4000).free == 0


def test_residents_are_listed_on_each_node_they_use_with_their_pods_there() -> None:
    placed = [_placed("spread", 3, 2, {"b": 2, "a": 1}), _placed("alone", 1, 8, {"c": 1})]
    slots = {s.name: s for s in node_map_of([_node(n) for n in "cba"], [H100], placed)}
    assert list(slots) == ["a", "b", "c"]
    assert slots["a"].workloads == (Resident("ns", "spread", "q", 1, {GPU: 2000}),)
    assert slots["b"].workloads == (Resident("ns", "spread", "q", 2, {GPU: 4000}),)
    assert slots["c"].workloads == (Resident("ns", "alone", "q", 1, {GPU: 8000}),)
