"""Node capacity through the real loop and ledger: nodes load into the snapshot, placements
are written with the admission and read back, and the capacity reasons reach the ledger."""

from __future__ import annotations

from typing import Any

import pytest
from builders.loop import Ledgered, RecordingActuator, pool
from builders.manifests import job

from admission.loop.loop import AdmissionLoop

pytestmark = pytest.mark.asyncio


def node(name: str, allocatable: int, capacity: int = 8) -> str:
    return (
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n"
        f"status:\n  capacity: {{nvidia.com/gpu: '{capacity}'}}\n"
        f"  allocatable: {{nvidia.com/gpu: '{allocatable}'}}\n"
    )


def gang(name: str, pods: int, gpus: int) -> dict[str, Any]:
    doc = job(name, gpus)
    doc["spec"]["parallelism"] = pods
    return doc


async def test_a_sick_node_makes_the_gang_wait_until_it_is_repaired(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    # The flavor ``gpu`` has no nodeLabels: every node is in its pool.
    ledgered.apply(pool(("team-a", 64)))
    ledgered.apply(node("node-a", 8) + "---\n" + node("node-b", 5))
    ledgered.submit(gang("pretrain", 2, 8))
    await loop.begin()
    await loop.cycle()

    waiting = ledgered.workload("pretrain")
    assert (waiting["state"], waiting["reason_code"]) == ("Pending", "UnhealthyCapacity")
    assert waiting["reasons"][0]["details"]["unhealthyNodes"] == [
        {"node": "node-b", "devices": "3"}
    ]
    assert waiting["hints"] == ["would fit if node node-b (3 unhealthy GPUs) were repaired"]

    ledgered.apply(node("node-b", 8))
    await loop.cycle()

    admitted = ledgered.workload("pretrain")
    assert admitted["state"] == "Admitted"
    assert admitted["admission"]["placement"] == [
        {"name": "main", "nodes": {"node-a": 1, "node-b": 1}}
    ]
    assert [(r["code"], r["until"] is None) for r in ledgered.timeline("pretrain")] == [
        ("PendingEvaluation", False),
        ("UnhealthyCapacity", False),
    ]


async def test_the_recorded_placement_keeps_the_node_taken_across_a_restart(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 64)))
    ledgered.apply(node("node-a", 8) + "---\n" + node("node-b", 8))
    ledgered.submit(job("first", 8))
    await loop.begin()
    await loop.cycle()
    ledgered.submit(job("second", 8))
    ledgered.submit(job("third", 8))

    restarted = AdmissionLoop(ledgered.sessions, RecordingActuator())
    await restarted.begin()
    await restarted.cycle()

    # The fresh snapshot reads first's placement (node-a) from the ledger: second gets
    # node-b, and third finds the class sold out although quota has 40 GPUs left.
    first, second = ledgered.workload("first"), ledgered.workload("second")
    assert first["admission"]["placement"] == [{"name": "main", "nodes": {"node-a": 1}}]
    assert second["admission"]["placement"] == [{"name": "main", "nodes": {"node-b": 1}}]
    third = ledgered.workload("third")
    assert (third["state"], third["reason_code"]) == ("Pending", "InsufficientCapacity")
    assert third["reasons"][0]["details"] == {
        "flavor": "gpu", "resource": "nvidia.com/gpu", "requested": "8", "free": "0",
        "capacity": "16",
    }
