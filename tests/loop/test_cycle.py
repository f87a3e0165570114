"""The admission loop over a real ledger: one transaction per cycle, then actuation."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from builders.loop import Ledgered, RecordingActuator, pool
from builders.manifests import job

from admission.loop.loop import AdmissionLoop

pytestmark = pytest.mark.asyncio


async def _started(loop: AdmissionLoop, actuator: RecordingActuator) -> None:
    await loop.begin()
    actuator.clear()


async def test_over_quota_admits_one_and_explains_the_other(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("first", 4))
    ledgered.submit(job("second", 4))
    await _started(loop, actuator)

    summary = await loop.cycle()

    assert summary.admitted == 1
    first, second = ledgered.workload("first"), ledgered.workload("second")
    assert (first["state"], first["cluster_queue"]) == ("Admitted", "team-a")
    assert second["state"] == "Pending"
    assert second["reason_code"] == "WaitingForQuota"
    assert second["reasons"][0]["code"] == "WaitingForQuota"
    assert second["queue_position"] == 1
    assert [(r["code"], r["until"] is None) for r in ledgered.timeline("second")] == [
        ("PendingEvaluation", False),
        ("WaitingForQuota", True),
    ]
    assert [r["until"] is None for r in ledgered.timeline("first")] == [False]
    assert ledgered.events("first") == ["Admitted"]
    assert [(u["amount"], u["ended_at"]) for u in ledgered.usage("first")] == [(4000, None)]


async def test_finishing_the_holder_admits_the_waiting_one_next_cycle(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("first", 4))
    ledgered.submit(job("second", 4))
    await _started(loop, actuator)
    await loop.cycle()

    ledgered.finish("team-a", "first")
    summary = await loop.cycle()

    assert summary.admitted == 1
    assert ledgered.workload("second")["state"] == "Admitted"
    assert all(r["until"] is not None for r in ledgered.timeline("second"))
    assert ledgered.events("first") == ["Admitted", "Finished"]
    assert all(u["ended_at"] is not None for u in ledgered.usage("first"))


async def test_preemption_evicts_the_victim_back_to_the_queue(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4), preempt=True))
    ledgered.submit(job("low", 4))
    await _started(loop, actuator)
    await loop.cycle()
    actuator.clear()
    ledgered.submit(job("urgent", 4, priority="high"))

    summary = await loop.cycle()

    assert (summary.evicted, summary.admitted) == (1, 1)
    low = ledgered.workload("low")
    assert (low["state"], low["eviction_count"], low["admission"]) == ("Pending", 1, None)
    assert ledgered.events("low") == ["Admitted", "Evicted", "Requeued"]
    assert all(u["ended_at"] is not None for u in ledgered.usage("low"))
    assert ledgered.workload("urgent")["state"] == "Admitted"
    assert [(a.key, a.action) for a in actuator.actions if a.action != "reason"] == [
        ("team-a/low", "evict"),
        ("team-a/urgent", "admit"),
    ]


async def test_a_checkpointing_victim_keeps_its_quota_until_its_grace_ends(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4), preempt=True))
    ledgered.submit(job("low", 4, annotations={"berth.dev/checkpoint-grace": "1s"}))
    await _started(loop, actuator)
    await loop.cycle()
    ledgered.submit(job("urgent", 4, priority="high"))

    await loop.cycle()
    evicting = ledgered.workload("low")
    ledgered.execute(
        "UPDATE workloads SET evicted_at = evicted_at - interval '5 seconds' WHERE name = 'low'"
    )
    await loop.cycle()
    await loop.cycle()

    assert (evicting["state"], evicting["admission"] is not None) == ("Evicting", True)
    assert ledgered.workload("low")["state"] == "Pending"
    assert ledgered.events("low") == ["Admitted", "Evicted", "Requeued"]
    assert ledgered.workload("urgent")["state"] == "Admitted"


async def test_the_actuator_receives_exactly_the_committed_decisions(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("first", 4))
    ledgered.submit(job("second", 4))
    await _started(loop, actuator)

    await loop.cycle()
    quiet = await loop.cycle()

    assert [(a.key, a.action) for a in actuator.actions] == [
        ("team-a/first", "admit"),
        ("team-a/second", "reason"),
    ]
    admit = actuator.actions[0]
    assert admit.admission is not None and set(admit.flavors) == {"gpu"}
    assert str(actuator.actions[1].reason.code if actuator.actions[1].reason else "") == (
        "WaitingForQuota"
    )
    assert (quiet.admitted, quiet.reasons, len(actuator.batches)) == (0, 0, 1)


async def test_a_row_changed_behind_the_snapshot_is_retried_without_double_admission(
    ledgered: Ledgered, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("first", 4))

    class BumpBeforeWrite(AdmissionLoop):
        bumped = False

        def _commit(self, plan, now):  # type: ignore[no-untyped-def]
            if plan.transitions and not self.bumped:
                self.bumped = True
                ledgered.execute("UPDATE workloads SET version = version + 1 WHERE name = 'first'")
            return super()._commit(plan, now)

    loop = BumpBeforeWrite(ledgered.sessions, actuator)
    await _started(loop, actuator)

    stale = await loop.cycle()
    retried = await loop.cycle()
    again = await loop.cycle()

    assert (stale.retried, stale.admitted) == (True, 0)
    assert (retried.retried, retried.admitted, again.admitted) == (False, 1, 0)
    assert ledgered.events("first") == ["Admitted"]
    assert len(ledgered.usage("first")) == 1
    assert [a.action for a in actuator.actions] == ["admit"]


async def test_quota_changed_between_snapshot_and_write_is_decided_again(
    ledgered: Ledgered, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("first", 4))

    class ShrinkBeforeWrite(AdmissionLoop):
        shrunk = False

        def _commit(self, plan, now):  # type: ignore[no-untyped-def]
            if plan.transitions and not self.shrunk:
                self.shrunk = True
                ledgered.apply(pool(("team-a", 2)))
            return super()._commit(plan, now)

    loop = ShrinkBeforeWrite(ledgered.sessions, actuator)
    await _started(loop, actuator)

    first = await loop.cycle()
    second = await loop.cycle()

    assert (first.retried, second.admitted) == (True, 0)
    row = ledgered.workload("first")
    assert (row["state"], row["reason_code"]) == ("Pending", "ExceedsMaxQuota")


async def test_restart_re_actuates_what_is_in_force(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("first", 4))
    ledgered.submit(job("second", 4))
    await loop.begin()
    await loop.cycle()

    restarted = RecordingActuator()
    await AdmissionLoop(ledgered.sessions, restarted).begin()

    assert [(a.key, a.action, a.reason.code if a.reason else None) for a in restarted.actions] == [
        ("team-a/first", "admit", None),
        ("team-a/second", "reason", "WaitingForQuota"),
    ]


async def test_reconcile_closes_usage_left_open_by_a_finished_workload(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("first", 4))
    await _started(loop, actuator)
    await loop.cycle()
    ledgered.execute("UPDATE workloads SET state = 'Finished' WHERE name = 'first'")

    await loop.reconcile()

    assert [u["ended_at"] is not None for u in ledgered.usage("first")] == [True]


async def test_the_invariant_checker_notices_a_double_admission(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    from builders.invariants import violations

    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("first", 4))
    await _started(loop, actuator)
    await loop.cycle()
    clean = violations(ledgered, {"team-a": 4000}, {"team-a/first"})
    ledgered.execute(
        "INSERT INTO usage_intervals (workload_id, cluster_queue, flavor, resource, amount, "
        "started_at) SELECT id, 'team-a', 'gpu', 'nvidia.com/gpu', 4000, now() - interval '1s' "
        "FROM workloads WHERE name = 'first'"
    )

    found = violations(ledgered, {"team-a": 4000}, {"team-a/first", "team-a/lost"})

    assert clean == []
    assert any("8000 > nominal 4000" in v for v in found)
    assert any("two admissions at once" in v for v in found)
    assert "team-a/lost was submitted but is not in the ledger" in found


async def test_a_long_transaction_elsewhere_on_the_server_does_not_stall_admission(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator
) -> None:
    """A transaction left open (a backup, a report, another application's idle session)
    holds the server's oldest-xid mark back; objects written after it began must not look
    changed to every cycle from then on, or no cycle could ever commit."""
    engine = sa.create_engine(ledgered.url, poolclass=sa.NullPool)
    with engine.connect() as elsewhere:
        elsewhere.execute(sa.text("SELECT pg_current_xact_id()"))  # open, with an xid
        ledgered.apply(pool(("team-a", 4)))
        ledgered.submit(job("first", 4))
        await _started(loop, actuator)

        summaries = [await loop.cycle() for _ in range(3)]

        assert [s.retried for s in summaries] == [False, False, False]
        assert ledgered.workload("first")["state"] == "Admitted"
        ledgered.apply(pool(("team-a", 8)))  # a real change is still seen
        ledgered.submit(job("second", 4))
        await loop.cycle()
        assert ledgered.workload("second")["state"] == "Admitted"
        elsewhere.rollback()
    engine.dispose()
