"""waitForPodsReady.requeuingStrategy.timestamp in the durable loop: the ledger's order,
GET positions and ``berth simulate`` agree on where a timed-out workload queues."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import yaml
from builders.loop import Ledgered, RecordingActuator, settle
from builders.paths import SCENARIOS

from admission.loop.loop import AdmissionLoop
from admission.simulate.run import simulate
from admission.simulate.scenario import parse_scenario
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.workload import WorkloadState
from quota.ledger.apply import apply_objects
from quota.ledger.repository import Ledger

SCENARIO = SCENARIOS / "pods-ready-requeue-order.yaml"


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now



async def _positions(api: httpx.Client, keys: list[str]) -> dict[str, tuple[str, int | None]]:
    out = {}
    for key in keys:
        response = await asyncio.to_thread(api.get, f"/api/v1/workloads/{key}")
        assert response.status_code == 200, response.text
        body = response.json()
        out[key] = (body["state"], body["position"])
    return out


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "timestamp",
    [
        pytest.param(RequeuingTimestamp.EVICTION,
                     id="eviction: the timed-out workload is second behind later and blocked"),
        pytest.param(RequeuingTimestamp.CREATION,
                     id="creation: the timed-out workload heads the queue and is admitted again"),
    ],
)  # fmt: skip
async def test_ledger_positions_and_simulate_agree_on_the_requeue_order(
    ledgered: Ledgered, actuator: RecordingActuator, api: httpx.Client,
    timestamp: RequeuingTimestamp,
) -> None:
    text = SCENARIO.read_text()
    scenario = parse_scenario(text, str(SCENARIO))
    scenario = replace(scenario, pods_ready=replace(scenario.pods_ready, timestamp=timestamp))
    expected = simulate(scenario).steps
    raw_steps: list[dict[str, Any]] = yaml.safe_load(text)["steps"]
    # The loop runs on a clock near now: the API's reads of a far past epoch are not at issue.
    epoch = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    clock = Clock(epoch)
    loop = AdmissionLoop(ledgered.sessions, actuator, clock=clock, pods_ready=scenario.pods_ready)
    with ledgered.sessions() as session:
        apply_objects(Ledger(session), list(scenario.objects), actor="test")
    await loop.begin()
    for step, raw, outcome in zip(scenario.steps, raw_steps, expected, strict=True):
        clock.now = epoch + step.at
        ledgered.feed_step(raw.get("create", ()), step.pods_ready, clock.now)
        await settle(loop)

        simulated = {v.workload.key: (str(v.workload.state),
                                      v.status.position if v.status else None)
                     for v in outcome.workloads}  # fmt: skip
        assert await _positions(api, sorted(simulated)) == simulated, step.at_text
        with ledgered.sessions() as session:
            pending = Ledger(session).list_workloads([WorkloadState.PENDING], timestamp=timestamp)
        by_position = sorted((p, k) for k, (s, p) in simulated.items() if s == "Pending")
        assert [w.key for w in pending] == [k for _, k in by_position], step.at_text

    final = {k: s for k, (s, _) in (await _positions(api, ["team/stuck"])).items()}
    assert final == {"team/stuck": "Pending" if timestamp is RequeuingTimestamp.EVICTION
                     else "Admitted"}  # fmt: skip
