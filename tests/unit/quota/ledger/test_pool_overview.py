"""The pool overview's arithmetic: capacity from matching Nodes, or quota where none match."""

from __future__ import annotations

import pytest

from quota.core.model import (
    ClusterQueue,
    FlavorQuotas,
    Node,
    NodeHealth,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from quota.ledger.reads.dashboard import PoolResource, pool_of

GPU = "nvidia.com/gpu"
H100 = ResourceFlavor("h100", node_labels={"gpu": "h100"})


def _node(name: str, gpus: int, allocatable: int | None = None, **kw: object) -> Node:
    alloc = gpus if allocatable is None else allocatable
    return Node(name, labels={"gpu": "h100"}, capacity={GPU: gpus * 1000},
                allocatable={GPU: alloc * 1000}, **kw)  # type: ignore[arg-type]


def _queue(gpus: int) -> ClusterQueue:
    return ClusterQueue("q", resource_groups=(ResourceGroup(
        (GPU,), (FlavorQuotas("h100", (ResourceQuota(GPU, gpus * 1000),)),)),))


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param([_node("a", 8), _node("b", 8)], PoolResource(GPU, 16000, 0, 4000),
                     id="healthy nodes: all capacity usable"),
        pytest.param([_node("a", 8), _node("b", 8, 6, health=NodeHealth.DEGRADED)],
                     PoolResource(GPU, 16000, 2000, 4000),
                     id="degraded node loses only its bad devices"),
        pytest.param([_node("a", 8), _node("b", 8, health=NodeHealth.REPAIRING)],
                     PoolResource(GPU, 16000, 8000, 4000),
                     id="node under repair loses everything"),
        pytest.param([_node("a", 8), _node("b", 8, unschedulable=True)],
                     PoolResource(GPU, 16000, 8000, 4000), id="cordoned node loses everything"),
        pytest.param([], PoolResource(GPU, 12000, 0, 4000), id="no nodes: quota stands in"),
    ],
)
def test_pool_capacity(nodes: list[Node], expected: PoolResource) -> None:
    [flavor] = pool_of([H100], nodes, [_queue(12)], {"h100": {GPU: 4000}})
    assert flavor.resources == (expected,)
    assert flavor.capacity_source == ("nodes" if nodes else "quota")


def test_free_never_goes_below_zero() -> None:
    assert PoolResource(GPU, 8000, 4000, 6000).free == 0


def test_nodes_of_other_flavors_do_not_count() -> None:
    other = Node("x", labels={"gpu": "a100"}, capacity={GPU: 8000}, allocatable={GPU: 8000})
    [flavor] = pool_of([H100], [other, _node("a", 8)], [], {})
    assert flavor.nodes == 1 and flavor.resources[0].capacity == 8000
