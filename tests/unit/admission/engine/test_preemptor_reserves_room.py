"""A preemptor waiting for a checkpointing victim keeps the free nodes it will need.

Found running the demo: a 2x8-GPU production Job needed the node of a victim saving its
checkpoint and one free node. While it waited, a research Job took the free node; the
next cycle the preemptor evicted that one, the next research Job took the node, and so
on: no fixed point at one instant (``berth simulate`` gave up after 1000 cycles).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from builders.simulate import KUEUE, cluster_queue, job, local_queue, priority_class

from admission.simulate.run import StepOutcome, simulate
from admission.simulate.scenario import parse_scenario
from quota.core.checkpoints import CHECKPOINT_GRACE

LOWER = {"withinClusterQueue": "LowerPriority"}


def gpu_node(name: str, gpus: int = 8) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"gpu": "h100"}},
            "status": {"capacity": {"nvidia.com/gpu": str(gpus)},
                       "allocatable": {"nvidia.com/gpu": str(gpus)}}}


def run(later: list[dict[str, Any]]) -> tuple[StepOutcome, ...]:
    objects = [
        {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "h100"},
         "spec": {"nodeLabels": {"gpu": "h100"}}},
        cluster_queue("team", 16, flavor_name="h100", preemption=LOWER),
        local_queue("team", "team"),
        priority_class("high", 1000), priority_class("low", 100),
        gpu_node("n1"), gpu_node("n2"),
    ]
    steps = [
        {"at": "0s", "create": [job("team/saving", 8, priority="low", runtime="1h",
                                    annotations={CHECKPOINT_GRACE: "60s"})]},
        {"at": "1s", "create": [job("team/big", 8, count=2, priority="high", runtime="1h"),
                                *later]},
        {"at": "30s"},
        {"at": "61s"},
    ]
    doc = {"name": "reserve", "objects": objects, "steps": steps}
    return simulate(parse_scenario(yaml.safe_dump(doc), "reserve")).steps


def states(step: StepOutcome) -> dict[str, tuple[str, int]]:
    return {v.workload.name: (str(v.workload.state), v.workload.eviction_count)
            for v in step.workloads}


@pytest.mark.parametrize(
    "later",
    [
        pytest.param([job("team/small-a", 8, priority="low", runtime="1h"),
                      job("team/small-b", 8, priority="low", runtime="1h")],
                     id="two lower Jobs that each fit the free node wait instead of taking turns"),
        pytest.param([job("team/small-a", 8, priority="low", runtime="1h")],
                     id="one lower Job that fits the free node is not admitted to be evicted"),
    ],
)
def test_lower_work_does_not_take_the_room_a_waiting_preemptor_needs(
    later: list[dict[str, Any]],
) -> None:
    _, waiting, still, done = run(later)
    smalls = {j["metadata"]["name"]: ("Pending", 0) for j in later}
    assert states(waiting) == {"saving": ("Evicting", 1), "big": ("Pending", 0), **smalls}
    big = next(v for v in waiting.workloads if v.workload.name == "big")
    assert big.status is not None
    assert str(big.status.reason.code) == "WaitingForPreemptedWorkloads"
    assert states(still) == states(waiting)
    # The grace is over: the victim goes, the preemptor takes both nodes.
    assert states(done) == {"saving": ("Pending", 1), "big": ("Admitted", 0), **smalls}
