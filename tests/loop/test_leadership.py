"""Leadership: one replica decides; a leader that goes, crashes or stops making progress is
replaced, and a replaced leader can never commit a decision."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

import pytest
from builders.loop import Ledgered, RecordingActuator, pool
from builders.manifests import job

from admission.loop.actuation import Actuation
from admission.loop.leader import LedgerLease
from admission.loop.loop import AdmissionLoop, LostLeadership
from admission.loop.runner import run_while_leading
from berth.serve import runner_config
from berth.settings import LoopSettings
from quota.ledger.notify import ChangeListener

pytestmark = pytest.mark.asyncio

LIVENESS = 30.0  # seconds: a wait that fails only when the thing never happens
SHORT_LEASE = 1.5


class FreezableActuator(RecordingActuator):
    """Records like the recording actuator; ``freeze`` makes its next call hang, as a
    leader stuck in a cycle would (the loop then stops renewing its lease)."""

    def __init__(self) -> None:
        super().__init__()
        self.frozen = asyncio.Event()
        self.thawed = asyncio.Event()

    async def actuate(self, actions: Sequence[Actuation]) -> None:
        if self.frozen.is_set():
            await self.thawed.wait()
        await super().actuate(actions)


class Replica:
    def __init__(self, ledgered: Ledgered, name: str, *, lease: float = SHORT_LEASE) -> None:
        self.name = name
        self.actuator = FreezableActuator()
        self.leadership = LedgerLease(ledgered.url, identity=name, duration_seconds=lease)
        self.loop = AdmissionLoop(ledgered.sessions, self.actuator)
        self.stop = asyncio.Event()
        quick = LoopSettings(interval=0.2, leader_poll=0.2, backoff_first=0.1)
        config = runner_config(quick, holder=name)
        self.task = asyncio.create_task(
            run_while_leading(
                self.loop, self.leadership, lambda: ChangeListener(ledgered.url), config, self.stop
            )
        )

    def admitted(self) -> list[str]:
        return [a.key for a in self.actuator.actions if a.action == "admit"]

    async def shut(self) -> None:
        self.stop.set()
        self.actuator.thawed.set()
        await asyncio.wait_for(self.task, LIVENESS)


async def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + LIVENESS
    while not check():
        assert time.monotonic() < deadline, f"{what}: never happened"
        await asyncio.sleep(0.05)


async def _both(ledgered: Ledgered, body: Callable[[Replica, Replica], Awaitable[None]]) -> None:
    a, b = Replica(ledgered, "a"), Replica(ledgered, "b")
    try:
        await body(a, b)
    finally:
        await asyncio.gather(a.shut(), b.shut())


def _holder(ledgered: Ledgered) -> str | None:
    rows = ledgered.rows("SELECT holder FROM loop_leader WHERE id = 1")
    return str(rows[0]["holder"]) if rows else None


def _admission_events(ledgered: Ledgered) -> list[str]:
    rows = ledgered.rows(
        "SELECT w.name FROM workload_events e JOIN workloads w ON w.id = e.workload_id "
        "WHERE e.type = 'Admitted' ORDER BY e.id"
    )
    return [str(r["name"]) for r in rows]


async def test_two_loops_on_one_ledger_exactly_one_admits(ledgered: Ledgered) -> None:
    ledgered.apply(pool(("team-a", 8)))
    names = [f"job-{i}" for i in range(8)]

    async def body(a: Replica, b: Replica) -> None:
        for name in names:
            ledgered.submit(job(name, 1))
        await _until(lambda: len(set(a.admitted()) | set(b.admitted())) == len(names),
                     "every job admitted")
        assert {len(a.admitted()), len(b.admitted())} == {0, len(names)}
        assert sorted(_admission_events(ledgered)) == sorted(names)

    await _both(ledgered, body)


@pytest.mark.parametrize(
    "depose",
    [
        pytest.param("release", id="the leader steps down and the other takes over"),
        pytest.param("kill", id="the leader's lease connection dies and leadership is won again"),
        pytest.param("freeze", id="a leader stuck in a cycle loses its lease to the other"),
    ],
)
async def test_the_other_replica_takes_over(ledgered: Ledgered, depose: str) -> None:
    ledgered.apply(pool(("team-a", 8)))

    async def body(a: Replica, b: Replica) -> None:
        ledgered.submit(job("before", 1))
        await _until(lambda: bool(a.admitted() or b.admitted()), "the first job admitted")
        leader, other = (a, b) if a.admitted() else (b, a)
        if depose == "release":
            await leader.shut()
        elif depose == "kill":
            ledgered.execute(
                "SELECT pg_terminate_backend(holder_pid) FROM loop_leader WHERE id = 1"
            )
        else:
            leader.actuator.frozen.set()
            ledgered.submit(job("trap", 1))  # the leader decides it, then hangs actuating it
            await _until(lambda: _holder(ledgered) == other.name, "the other took the lease")
        ledgered.submit(job("after", 1))
        await _until(lambda: "team-a/after" in a.admitted() + b.admitted(), "'after' admitted")
        if depose in ("release", "freeze"):
            assert "team-a/after" in other.admitted()
        # Whoever leads now, every workload was admitted once.
        assert (a.admitted() + b.admitted()).count("team-a/after") == 1
        expected = {"before", "after"} | ({"trap"} if depose == "freeze" else set())
        assert sorted(_admission_events(ledgered)) == sorted(expected)
        if depose == "freeze":
            leader.actuator.thawed.set()  # the stuck leader wakes up: it must stop leading
            await _until(lambda: not leader.leadership.view().leading, "the old leader stepped down")
            assert _holder(ledgered) == other.name

    await _both(ledgered, body)


async def test_a_follower_sees_the_live_leader_and_a_lease_that_ran_out(ledgered: Ledgered) -> None:
    leader = LedgerLease(ledgered.url, identity="leader", duration_seconds=SHORT_LEASE)
    follower = LedgerLease(ledgered.url, identity="follower", duration_seconds=SHORT_LEASE)
    try:
        assert await leader.acquire()
        assert not await follower.acquire()
        seen = follower.view()
        assert (seen.leading, seen.holder, seen.live) == (False, "leader", True)
        # The leader stops renewing (its loop is stuck); on the database's clock the lease
        # runs out and the follower's next attempt takes it.
        await _until_async(follower.acquire, "the follower took the expired lease")
        assert follower.view().leading
        # The old leader's next renewal (long due) finds the lease taken.
        assert not await leader.held()
        assert not leader.view().leading
    finally:
        await leader.release()
        await follower.release()


async def _until_async(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + LIVENESS
    while not await check():
        assert time.monotonic() < deadline, f"{what}: never happened"
        await asyncio.sleep(0.1)


async def test_a_released_lease_is_taken_at_once(ledgered: Ledgered) -> None:
    first = LedgerLease(ledgered.url, identity="first", duration_seconds=3600)
    second = LedgerLease(ledgered.url, identity="second", duration_seconds=3600)
    try:
        assert await first.acquire()
        assert not await second.acquire()
        await first.release()
        assert await second.acquire()  # no hour-long wait: the lease was given back
    finally:
        await first.release()
        await second.release()


async def test_a_deposed_leader_cannot_commit(ledgered: Ledgered) -> None:
    ledgered.apply(pool(("team-a", 8)))
    old = AdmissionLoop(ledgered.sessions, RecordingActuator())
    await old.begin("old")
    await AdmissionLoop(ledgered.sessions, RecordingActuator()).begin("new")
    ledgered.submit(job("late", 1))

    with pytest.raises(LostLeadership):
        await old.cycle()

    assert ledgered.workload("late")["state"] == "Pending"


async def test_a_start_that_loses_the_lease_stops(ledgered: Ledgered) -> None:
    ledgered.apply(pool(("team-a", 8)))

    async def gone() -> bool:
        return False

    with pytest.raises(LostLeadership, match="ran out while the loop was starting"):
        await AdmissionLoop(ledgered.sessions, RecordingActuator()).begin("slow", keep=gone)
