"""``berth simulate`` and the durable loop, on one scenario, evict the same work.

``tests/scenarios/node-cordoned.yaml`` cordons a node while work runs on it. The simulator
runs it on its virtual clock. Here the same objects and Jobs go into a real ledger, and
the loop, on a clock set to each step's instant, runs until it settles; at every step
each workload's state, eviction count and nodes must be what the simulator says.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
import yaml
from builders.loop import Ledgered, RecordingActuator, settle
from builders.paths import SCENARIOS

from admission.intake.workloads import submit_workload
from admission.loop.loop import AdmissionLoop
from admission.simulate.run import StepOutcome, simulate
from admission.simulate.scenario import parse_scenario
from quota.core.workload import Workload
from quota.ledger.apply import apply_objects
from quota.ledger.repository import Ledger

pytestmark = pytest.mark.asyncio

SCENARIO = SCENARIOS / "node-cordoned.yaml"
# What this harness carries into the ledger; a step with other events would be skipped.
CARRIED = {"at", "apply", "create"}

Facts = dict[str, tuple[str, int, tuple[str, ...]]]


def facts(workloads: list[Workload]) -> Facts:
    """Per workload key: state, evictions so far, the nodes its pods were placed on."""
    out: Facts = {}
    for workload in workloads:
        placement = workload.admission.placement if workload.admission is not None else None
        nodes = {name for p in placement or () for name, pods in p.nodes.items() if pods}
        out[workload.key] = (str(workload.state), workload.eviction_count, tuple(sorted(nodes)))
    return out


def simulated(step: StepOutcome) -> Facts:
    return facts([view.workload for view in step.workloads])



async def test_a_node_cordoned_under_running_work_evicts_the_same_in_simulate_and_the_loop(
    ledgered: Ledgered, actuator: RecordingActuator
) -> None:
    text = SCENARIO.read_text()
    scenario = parse_scenario(text, str(SCENARIO))
    expected = simulate(scenario).steps
    raw_steps: list[dict[str, Any]] = yaml.safe_load(text)["steps"]
    assert all(set(raw) <= CARRIED for raw in raw_steps)
    clock = [scenario.epoch]

    def now() -> datetime:
        return clock[0]

    loop = AdmissionLoop(ledgered.sessions, actuator, clock=now)
    with ledgered.sessions() as session:
        apply_objects(Ledger(session), list(scenario.objects), actor="test")
    await loop.begin()

    for step, raw, outcome in zip(scenario.steps, raw_steps, expected, strict=True):
        clock[0] = scenario.epoch + step.at
        with ledgered.sessions() as session:
            ledger = Ledger(session)
            apply_objects(ledger, list(step.apply), actor="test")
            # Created a microsecond apart, as the scenario's list order is kept.
            for index, doc in enumerate(raw.get("create", ())):
                created = clock[0] + timedelta(microseconds=index)
                submit_workload(ledger, doc, now=created, actor="test")
        await settle(loop)

        with ledgered.sessions() as session:
            in_ledger = facts(Ledger(session).list_workloads())
        assert in_ledger == simulated(outcome), f"at {step.at_text}"

    # Not vacuous: the work on the cordoned node was evicted for its health, in both.
    evictions = ledgered.rows(
        "SELECT w.name, e.reason FROM workload_events e JOIN workloads w ON w.id = e.workload_id "
        "WHERE e.type = 'Evicted' ORDER BY e.id"
    )
    assert [(r["name"], r["reason"]) for r in evictions] == [
        ("plain", "NodeUnhealthy"),
        ("saver", "NodeUnhealthy"),
    ]
    assert simulated(expected[1])["team/plain"] == ("Pending", 1, ())
    assert simulated(expected[1])["team/saver"] == ("Evicting", 1, ("node-a",))
