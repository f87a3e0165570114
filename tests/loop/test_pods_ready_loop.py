"""waitForPodsReady through the durable loop: the ledger keeps the eviction, the requeue
count and the backoff end; readiness reported to the ledger stops the timeout; the REST
history (what ``berth why`` prints) shows every step. The loop's clock is the test's."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import yaml
from builders.loop import Ledgered, RecordingActuator, pool, settle
from builders.manifests import job
from builders.paths import SCENARIOS

from admission.engine.node_faults import POD_NODES, pod_nodes_annotation
from admission.loop.loop import AdmissionLoop
from admission.simulate.run import simulate
from admission.simulate.scenario import parse_scenario
from quota.core.model import NodeHealth
from quota.core.pods_ready import PodsReadyPolicy
from quota.core.workload import Workload
from quota.ledger import nodes as ledger_nodes
from quota.ledger.apply import apply_objects
from quota.ledger.readiness import record_readiness
from quota.ledger.reads import usage as usage_reads
from quota.ledger.repository import Ledger

POLICY = PodsReadyPolicy(enable=True, timeout=timedelta(minutes=5), backoff_limit_count=2)


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC) + timedelta(seconds=1)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def ready_loop(ledgered: Ledgered, actuator: RecordingActuator, clock: Clock) -> AdmissionLoop:
    return AdmissionLoop(ledgered.sessions, actuator, clock=clock, pods_ready=POLICY)


async def _at(loop: AdmissionLoop, clock: Clock, start: datetime, minutes: float) -> None:
    clock.now = start + timedelta(minutes=minutes)
    await loop.cycle()


@pytest.mark.asyncio
async def test_never_ready_is_evicted_backed_off_and_deactivated_after_the_limit(
    ledgered: Ledgered, ready_loop: AdmissionLoop, clock: Clock, api: httpx.Client
) -> None:
    ledgered.apply(pool(("team-a", 8)))
    ledgered.submit(job("stuck", 1, pods=8))
    start = clock.now
    await ready_loop.begin()
    await ready_loop.cycle()
    assert ledgered.workload("stuck")["state"] == "Admitted"

    seen = []
    for minutes in (4.9, 5, 5.5, 6, 11, 12, 13, 18):
        await _at(ready_loop, clock, start, minutes)
        row = ledgered.workload("stuck")
        seen.append((minutes, row["state"], row["requeue_count"], row["reason_code"]))
    assert seen == [
        (4.9, "Admitted", 0, None),
        (5, "Pending", 1, "WaitingForPodsReady"),  # timed out: backs off 60s
        (5.5, "Pending", 1, "WaitingForPodsReady"),
        (6, "Admitted", 1, None),
        (11, "Pending", 2, "WaitingForPodsReady"),  # backs off 120s
        (12, "Pending", 2, "WaitingForPodsReady"),
        (13, "Admitted", 2, None),
        (18, "Deactivated", 2, "Deactivated"),  # a third timeout is past the limit
    ]
    row = ledgered.workload("stuck")
    assert (row["active"], row["deactivation"]) == (False, "WorkloadRequeuingLimitExceeded")
    assert row["reasons"][0]["details"] == {"reason": "WorkloadRequeuingLimitExceeded"}
    assert row["requeue_at"] == start + timedelta(minutes=13)
    assert all(u["ended_at"] is not None for u in ledgered.usage("stuck"))

    response = await asyncio.to_thread(api.get, "/api/v1/workloads/team-a/stuck/history")
    assert response.status_code == 200, response.text
    texts = [r["text"] for r in response.json()["rows"] if r["kind"] != "Waiting"]
    until = [(start + timedelta(minutes=m)).isoformat() for m in (6, 13)]
    assert texts == [
        "Admitted to ClusterQueue team-a",
        "Evicted from ClusterQueue team-a (PodsReadyTimeout, WaitForStart)",
        f"Requeued (PodsReadyTimeout), backoff until {until[0]}",
        "Admitted to ClusterQueue team-a",
        "Evicted from ClusterQueue team-a (PodsReadyTimeout, WaitForStart)",
        f"Requeued (PodsReadyTimeout), backoff until {until[1]}",
        "Admitted to ClusterQueue team-a",
        "Evicted from ClusterQueue team-a (Deactivated, WorkloadRequeuingLimitExceeded)",
    ]
    codes = [r["code"] for r in response.json()["rows"] if r["kind"] == "Waiting"]
    assert "WaitingForPodsReady" in codes


@pytest.mark.asyncio
async def test_pods_reported_ready_in_time_are_never_timed_out(
    ledgered: Ledgered, ready_loop: AdmissionLoop, clock: Clock
) -> None:
    ledgered.apply(pool(("team-a", 8)))
    ledgered.submit(job("quick", 1, pods=8))
    start = clock.now
    await ready_loop.begin()
    await ready_loop.cycle()
    with ledgered.sessions() as session:
        assert record_readiness(session, "team-a", "quick", ready=True,
                                now=start + timedelta(minutes=1))
    await _at(ready_loop, clock, start, 60)
    row = ledgered.workload("quick")
    assert (row["state"], row["readiness"], row["requeue_count"]) == ("Admitted", "PodsReady", 0)
    assert "PodsReady" in ledgered.events("quick")


@pytest.mark.asyncio
async def test_lost_readiness_times_out_after_the_recovery_timeout(
    ledgered: Ledgered, ready_loop: AdmissionLoop, clock: Clock
) -> None:
    ledgered.apply(pool(("team-a", 8)))
    ledgered.submit(job("flaky", 1, pods=8))
    start = clock.now
    await ready_loop.begin()
    await ready_loop.cycle()
    with ledgered.sessions() as session:
        record_readiness(session, "team-a", "flaky", ready=True, now=start)
        record_readiness(session, "team-a", "flaky", ready=False,
                         now=start + timedelta(minutes=30))
    await _at(ready_loop, clock, start, 34)
    assert ledgered.workload("flaky")["state"] == "Admitted"
    await _at(ready_loop, clock, start, 35)
    row = ledgered.workload("flaky")
    assert (row["state"], row["eviction_reason"]) == ("Pending", "PodsReadyTimeout")


NODES = "---\n".join(
    f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n"
    "status:\n  capacity: {nvidia.com/gpu: '8'}\n  allocatable: {nvidia.com/gpu: '8'}\n"
    for name in ("gpu-1", "gpu-2")
)
FAULTS = [
    pytest.param("gpu-1", True, id="pods on a node Berth marked Degraded: not charged"),
    pytest.param("gpu-2", False, id="pods on a healthy node: the tenant's time"),
]


@pytest.mark.parametrize(("node", "fault"), FAULTS)
@pytest.mark.asyncio
async def test_time_lost_to_a_timeout_on_an_unhealthy_node_is_not_charged(
    ledgered: Ledgered, ready_loop: AdmissionLoop, clock: Clock, node: str, fault: bool
) -> None:
    ledgered.apply(pool(("team-a", 16)) + "---\n" + NODES)
    ledgered.submit(job("slow", 1, pods=8))
    start = clock.now
    await ready_loop.begin()
    await ready_loop.cycle()
    with ledgered.sessions() as session:
        value = pod_nodes_annotation([node], start)
        assert ledger_nodes.annotate_workload(session, "team-a", "slow", POD_NODES, value)
        # Degraded (a device error elsewhere on it): still in the pool, so nothing evicts
        # the workload for the node itself; its pods just never become Ready.
        ledger_nodes.set_health(session, "gpu-1", NodeHealth.HEALTHY, NodeHealth.DEGRADED,
                                why="a device error", actor="test")  # fmt: skip
    await _at(ready_loop, clock, start, 5)
    assert ledgered.workload("slow")["eviction_reason"] == "PodsReadyTimeout"
    intervals = ledgered.rows(
        "SELECT u.end_reason, u.node_fault FROM usage_intervals u JOIN workloads w "
        "ON w.id = u.workload_id WHERE w.name = 'slow'")
    assert {(r["end_reason"], r["node_fault"]) for r in intervals} == {("PodsReadyTimeout", fault)}
    with ledgered.sessions() as session:
        [line] = usage_reads.usage(session, start - timedelta(minutes=1),
                                   start + timedelta(minutes=10), ["clusterQueue"])
    held = 8 * 1000 * 300  # 8 GPUs (milli-units) for the 5 minutes to the timeout
    assert line.milli_seconds == pytest.approx(held, rel=0.01)
    assert line.charged_milli_seconds == (0 if fault else line.milli_seconds)



def _facts(workloads: list[Workload]) -> dict[str, tuple[str, int, int, datetime | None]]:
    return {w.key: (str(w.state), w.eviction_count, w.requeue_count, w.requeue_at)
            for w in workloads}  # fmt: skip


@pytest.mark.asyncio
async def test_the_loop_and_berth_simulate_agree_on_the_pods_ready_scenario(
    ledgered: Ledgered, actuator: RecordingActuator
) -> None:
    """tests/scenarios/pods-ready-timeout.yaml has a step at every timer's instant, so the
    loop, on a clock set to each step, must see what the simulator sees."""
    path = SCENARIOS / "pods-ready-timeout.yaml"
    text = path.read_text()
    scenario = parse_scenario(text, str(path))
    expected = simulate(scenario).steps
    raw_steps: list[dict[str, Any]] = yaml.safe_load(text)["steps"]
    assert all(set(raw) <= {"at", "create", "podsReady"} for raw in raw_steps)
    clock = Clock()
    clock.now = scenario.epoch
    loop = AdmissionLoop(ledgered.sessions, actuator, clock=clock, pods_ready=scenario.pods_ready)
    with ledgered.sessions() as session:
        apply_objects(Ledger(session), list(scenario.objects), actor="test")
    await loop.begin()
    for step, raw, outcome in zip(scenario.steps, raw_steps, expected, strict=True):
        clock.now = scenario.epoch + step.at
        ledgered.feed_step(raw.get("create", ()), step.pods_ready, clock.now)
        await settle(loop)
        with ledgered.sessions() as session:
            in_ledger = _facts(Ledger(session).list_workloads())
        assert in_ledger == _facts([v.workload for v in outcome.workloads]), step.at_text
    assert ledgered.workload("stuck")["deactivation"] == "WorkloadRequeuingLimitExceeded"
