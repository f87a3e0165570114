"""Hypothesis property: what the engine places never exceeds a node's healthy allocatable."""

from __future__ import annotations

from dataclasses import replace

from builders.capacity import in_one, node, with_nodes
from builders.engine import GPU, T0, M, cq, snapshot, wl
from hypothesis import given, settings
from hypothesis import strategies as st

from admission.engine.cycle import run_cycle
from admission.engine.types import Snapshot
from quota.core.model import Node, NodeHealth, Topology
from quota.core.workload import PREFERRED_TOPOLOGY, REQUIRED_TOPOLOGY, Workload, WorkloadState

IN_SERVICE = (NodeHealth.HEALTHY, NodeHealth.DEGRADED)
TOPOLOGY = Topology("dc", ("rack", "kubernetes.io/hostname"))


@st.composite
def nodes(draw: st.DrawFn) -> list[Node]:
    out = []
    for i in range(draw(st.integers(1, 5))):
        healthy = draw(st.integers(0, 8))
        out.append(node(
            f"n{i}", healthy, capacity=healthy + draw(st.integers(0, 3)),
            labels={"rack": draw(st.sampled_from(("r1", "r2")))},
            unschedulable=draw(st.booleans()) and draw(st.booleans()),
            ready=not (draw(st.booleans()) and draw(st.booleans())),
            health=draw(st.sampled_from(list(NodeHealth))),
        ))
    return out


@st.composite
def workloads(draw: st.DrawFn) -> list[Workload]:
    out = []
    for i in range(draw(st.integers(1, 10))):
        workload = wl(f"w{i}", {GPU: draw(st.integers(1, 8))}, count=draw(st.integers(1, 3)),
                      priority=draw(st.integers(0, 2)), created=i)
        topology = draw(st.sampled_from((None, REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY)))
        if topology is not None:
            workload = in_one(workload, draw(st.sampled_from(("rack", "kubernetes.io/hostname"))),
                              topology)
        out.append(workload)
    return out


def healthy(n: Node) -> int:
    in_service = not n.unschedulable and n.ready and n.health in IN_SERVICE
    return n.allocatable[GPU] if in_service else 0


def settle(snap: Snapshot) -> Snapshot:
    """Admit until a cycle admits nothing more, as the loop and the simulator do."""
    for _ in range(10):
        result = run_cycle(snap, T0)
        if not result.admitted:
            return snap
        held = dict(snap.workloads)
        for decision in result.admitted:
            held[decision.key] = replace(held[decision.key], state=WorkloadState.ADMITTED,
                                         admission=decision.admission, admitted_at=T0)
        snap = replace(snap, workloads=held)
    return snap


@settings(max_examples=150, deadline=None)
@given(nodes(), workloads(), st.integers(8, 64))
def test_admitted_pods_never_exceed_a_nodes_healthy_allocatable(
        inventory: list[Node], pending: list[Workload], quota: int) -> None:
    base = snapshot(cq("a", {"default": {GPU: quota}}), *pending)
    final = settle(with_nodes(base, *inventory, topologies=(TOPOLOGY,),
                              flavor_topology={"default": "dc"}))
    used: dict[str, int] = {}
    for workload in final.workloads.values():
        if workload.state is not WorkloadState.ADMITTED:
            continue
        assert workload.admission is not None and workload.admission.placement is not None
        for placement, pod_set in zip(workload.admission.placement, workload.pod_sets,
                                      strict=True):
            assert sum(placement.nodes.values()) == workload.admission.pod_sets[0].count
            for name, pods in placement.nodes.items():
                used[name] = used.get(name, 0) + pods * pod_set.requests[GPU]
            if REQUIRED_TOPOLOGY in pod_set.annotations:
                assert placement.level == pod_set.annotations[REQUIRED_TOPOLOGY]
            if placement.level is not None:
                # A required (or honoured preferred) domain holds every pod of the pod set.
                by_name = {n.name: n for n in inventory}
                values = {by_name[n].labels.get(placement.level, n) for n in placement.nodes}
                assert values == {placement.domain}
    for n in inventory:
        assert used.get(n.name, 0) <= healthy(n), n.name
    total = sum(used.values())
    assert total <= quota * M
