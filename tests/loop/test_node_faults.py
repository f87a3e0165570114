"""Node faults through the durable loop: work on a cordoned node is evicted with reason
NodeUnhealthy (after its checkpoint grace, if it has one); work elsewhere stays."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from builders.loop import Ledgered, RecordingActuator, pool
from builders.manifests import job

from admission.engine.node_faults import POD_NODES, pod_nodes_annotation
from admission.loop.actuation import CHECKPOINT, EVICT
from admission.loop.loop import AdmissionLoop
from quota.core.model import NodeHealth
from quota.ledger import nodes as ledger_nodes

pytestmark = pytest.mark.asyncio

NODES = "---\n".join(
    f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n"
    "status:\n  capacity: {nvidia.com/gpu: '8'}\n  allocatable: {nvidia.com/gpu: '8'}\n"
    for name in ("gpu-1", "gpu-2")
)


def _pods_on(ledgered: Ledgered, name: str, node: str) -> None:
    """What the pod watcher records once the Job's pods are bound."""
    value = pod_nodes_annotation([node], datetime.now(UTC))
    with ledgered.sessions() as session:
        assert ledger_nodes.annotate_workload(session, "team-a", name, POD_NODES, value)


def _cordon(ledgered: Ledgered, node: str) -> None:
    with ledgered.sessions() as session:
        ledger_nodes.set_health(
            session, node, NodeHealth.HEALTHY, NodeHealth.CORDONED,
            why="3 of 8 devices unhealthy", actor="test",
        )  # fmt: skip


async def test_cordoned_node_requeues_its_workloads_with_node_unhealthy(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 16)) + "---\n" + NODES)
    ledgered.submit(job("plain", 4))
    ledgered.submit(job("saver", 4, annotations={"berth.dev/checkpoint-grace": "10m"}))
    ledgered.submit(job("elsewhere", 4))
    await loop.begin()
    await loop.cycle()
    assert {ledgered.workload(n)["state"] for n in ("plain", "saver", "elsewhere")} == {
        "Admitted"
    }
    _pods_on(ledgered, "plain", "gpu-1")
    _pods_on(ledgered, "saver", "gpu-1")
    _pods_on(ledgered, "elsewhere", "gpu-2")
    actuator.clear()

    _cordon(ledgered, "gpu-1")
    await loop.cycle()

    evicted = ledgered.rows(
        "SELECT w.name, e.type, e.reason, e.details FROM workload_events e "
        "JOIN workloads w ON w.id = e.workload_id WHERE e.type IN ('Evicted', 'Requeued') "
        "ORDER BY e.id"
    )
    assert [(r["name"], r["type"], r["reason"]) for r in evicted] == [
        ("plain", "Evicted", "NodeUnhealthy"),
        ("plain", "Requeued", "NodeUnhealthy"),
        ("saver", "Evicted", "NodeUnhealthy"),
    ]
    assert evicted[0]["details"]["nodes"] == ["gpu-1"]
    assert ledgered.workload("plain")["eviction_count"] == 1
    # Its quota was released (the same cycle may admit it again, elsewhere: gpu-2 has room).
    assert ledgered.usage("plain")[0]["ended_at"] is not None
    # Checkpoint grace: still holding its quota while it saves its work.
    saver = ledgered.workload("saver")
    assert (saver["state"], saver["evicted_at"] is not None) == ("Evicting", True)
    assert [u["ended_at"] for u in ledgered.usage("saver")] == [None]
    assert ledgered.workload("elsewhere")["state"] == "Admitted"
    stopped = {(a.key, a.action) for a in actuator.actions if a.action in (EVICT, CHECKPOINT)}
    assert stopped == {("team-a/plain", EVICT), ("team-a/saver", CHECKPOINT)}
    [displaced] = ledger_displaced(ledgered, "gpu-1")
    assert displaced == ("team-a", "saver")  # newest first
    # Nothing more to evict: the next cycle leaves the node's work as it is.
    actuator.clear()
    await loop.cycle()
    assert not [a for a in actuator.actions if a.action in (EVICT, CHECKPOINT)]


def ledger_displaced(ledgered: Ledgered, node: str) -> list[tuple[str, str]]:
    with ledgered.sessions() as session:
        found = ledger_nodes.displaced(session, node)
    return [(d.namespace, d.name) for d in found][:1]
