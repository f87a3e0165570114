"""Leadership: one replica decides; when it goes, another takes over within seconds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest
from loop_builders import Ledgered, RecordingActuator, job, pool

from admission.leader import LEADER_LOCK, AdvisoryLockLeadership
from admission.loop import AdmissionLoop, LostLeadership
from admission.runner import RunnerConfig, run_while_leading
from quota.ledger_notify import ChangeListener

pytestmark = pytest.mark.asyncio


class Replica:
    def __init__(self, ledgered: Ledgered, name: str) -> None:
        self.name = name
        self.actuator = RecordingActuator()
        self.leadership = AdvisoryLockLeadership(ledgered.url)
        self.loop = AdmissionLoop(ledgered.sessions, self.actuator)
        self.stop = asyncio.Event()
        config = RunnerConfig(holder=name, interval=0.2, leader_poll=0.2, backoff_first=0.1)
        self.task = asyncio.create_task(
            run_while_leading(
                self.loop, self.leadership, lambda: ChangeListener(ledgered.url), config, self.stop
            )
        )

    def admitted(self) -> set[str]:
        return {a.key for a in self.actuator.actions if a.action == "admit"}

    async def shut(self) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, 10)


async def _until(check: Callable[[], bool], seconds: float = 10) -> float:
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < seconds, "condition not reached in time"
        await asyncio.sleep(0.05)
    return time.monotonic() - start


async def _both(ledgered: Ledgered, body: Callable[[Replica, Replica], Awaitable[None]]) -> None:
    a, b = Replica(ledgered, "a"), Replica(ledgered, "b")
    try:
        await body(a, b)
    finally:
        await asyncio.gather(a.shut(), b.shut())


async def test_two_loops_on_one_ledger_exactly_one_admits(ledgered: Ledgered) -> None:
    ledgered.apply(pool(("team-a", 8)))
    names = [f"job-{i}" for i in range(8)]

    async def body(a: Replica, b: Replica) -> None:
        for name in names:
            ledgered.submit(job(name, 1))
        await _until(lambda: len(a.admitted() | b.admitted()) == len(names))
        await asyncio.sleep(0.5)
        assert {len(a.admitted()), len(b.admitted())} == {0, len(names)}
        assert len(ledgered.rows("SELECT * FROM workload_events WHERE type = 'Admitted'")) == 8

    await _both(ledgered, body)


@pytest.mark.parametrize(
    "depose",
    [
        pytest.param("release", id="the leader steps down and the other takes over"),
        pytest.param("kill", id="the leader's connection dies and leadership is won again"),
    ],
)
async def test_the_other_replica_takes_over(ledgered: Ledgered, depose: str) -> None:
    ledgered.apply(pool(("team-a", 8)))

    async def body(a: Replica, b: Replica) -> None:
        ledgered.submit(job("before", 1))
        await _until(lambda: bool(a.admitted() | b.admitted()))
        leader, other = (a, b) if a.admitted() else (b, a)
        if depose == "release":
            await leader.shut()
        else:
            ledgered.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                "AND classid = :high AND objid = :low",
                high=LEADER_LOCK >> 32,
                low=LEADER_LOCK & 0xFFFFFFFF,
            )
        ledgered.submit(job("after", 1))
        took = await _until(lambda: "team-a/after" in (a.admitted() | b.admitted()))
        assert took < 5
        if depose == "release":
            assert "team-a/after" in other.admitted()
        # Whoever won the lock again, the workload was admitted once.
        assert [
            x.key for x in a.actuator.actions + b.actuator.actions if x.action == "admit"
        ].count("team-a/after") == 1
        assert len(ledgered.rows("SELECT * FROM workload_events WHERE type = 'Admitted'")) == 2

    await _both(ledgered, body)


async def test_a_deposed_leader_cannot_commit(ledgered: Ledgered) -> None:
    ledgered.apply(pool(("team-a", 8)))
    old = AdmissionLoop(ledgered.sessions, RecordingActuator())
    await old.begin("old")
    await AdmissionLoop(ledgered.sessions, RecordingActuator()).begin("new")
    ledgered.submit(job("late", 1))

    with pytest.raises(LostLeadership):
        await old.cycle()

    assert ledgered.workload("late")["state"] == "Pending"
