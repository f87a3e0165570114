"""Two real ``berth serve`` replicas on one database: exactly one admits at a time; SIGKILL
the leader, or freeze it with SIGSTOP, and the other takes over, admitting nothing twice;
a follower that cannot see a live leader says so on ``/readyz``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from builders.invariants import violations
from builders.loop import Ledgered, pool
from builders.manifests import job
from builders.serve_process import ServeProcess, wait_for

LIVENESS = 60.0  # seconds: waits fail only when the thing never happens
NOMINAL = {"team-a": 4000}
# Short for quick takeovers, long enough to outlast a stall of the machine: with 2 s, in a
# CI run on a slow machine neither replica's loop got a turn for seconds (the leader took
# the lease and next ran 6 s later, the other tried first 3 s after it started), the lease
# ran out, and the test took that hand-over, correct as it was, for a second leader.
LEASE = {"BERTH_LEADER_LEASE_SECONDS": "6"}


@pytest.fixture
def replicas(ledgered: Ledgered, tmp_path: Path) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    a = ServeProcess(ledgered.url, tmp_path / "replica-a.log", env=LEASE)
    b = ServeProcess(ledgered.url, tmp_path / "replica-b.log", env=LEASE)
    try:
        a.start()
        b.start()
        yield a, b
    finally:
        a.stop()
        b.stop()


def _leader_holder(ledgered: Ledgered) -> str | None:
    rows = ledgered.rows("SELECT holder FROM loop_leader WHERE id = 1")
    return str(rows[0]["holder"]) if rows else None


def _states(ledgered: Ledgered) -> dict[str, str]:
    return {r["name"]: r["state"] for r in ledgered.rows("SELECT name, state FROM workloads")}


def _admitted(ledgered: Ledgered, names: list[str]) -> bool:
    states = _states(ledgered)
    return all(states.get(name) == "Admitted" for name in names)


def _admission_events(ledgered: Ledgered) -> Counter[str]:
    rows = ledgered.rows(
        "SELECT w.name FROM workload_events e JOIN workloads w ON w.id = e.workload_id "
        "WHERE e.type = 'Admitted'"
    )
    return Counter(str(r["name"]) for r in rows)


def _roles(ledgered: Ledgered, a: ServeProcess, b: ServeProcess) -> tuple[ServeProcess, ServeProcess]:
    wait_for(lambda: _leader_holder(ledgered) in (a.holder, b.holder), LIVENESS, "a replica leads")
    return (a, b) if _leader_holder(ledgered) == a.holder else (b, a)


def _submit(via: ServeProcess, name: str, submitted: set[str]) -> None:
    response = via.post("/api/v1/workloads", json=job(name, 1))
    assert response.status_code == 201, response.text
    submitted.add(f"team-a/{name}")


def _finish(via: ServeProcess, name: str) -> None:
    response = via.post(f"/api/v1/workloads/team-a/{name}/finish")
    assert response.status_code == 200, response.text


def _apply_pool(via: ServeProcess) -> None:
    response = via.post(
        "/api/v1/apply", content=pool(("team-a", 4)), headers={"content-type": "application/yaml"}
    )
    assert response.status_code == 200, response.text


def test_one_replica_admits_and_the_survivor_takes_over_after_sigkill(
    ledgered: Ledgered, replicas: tuple[ServeProcess, ServeProcess]
) -> None:
    leader, follower = _roles(ledgered, *replicas)
    submitted: set[str] = set()
    # Everything goes through the follower's API; only the leader's loop may decide.
    _apply_pool(follower)
    for i in range(1, 7):
        _submit(follower, f"w-{i}", submitted)
    wait_for(lambda: _admitted(ledgered, ["w-1", "w-2", "w-3", "w-4"]), LIVENESS, "4 of 6 admitted")
    assert _states(ledgered)["w-5"] == _states(ledgered)["w-6"] == "Pending"  # 4 GPUs, no more
    _finish(follower, "w-1")
    _finish(follower, "w-2")
    wait_for(lambda: _admitted(ledgered, ["w-5", "w-6"]), LIVENESS, "freed quota admitted the rest")
    _finish(follower, "w-3")
    _finish(follower, "w-4")
    before = {f"team-a/w-{i}" for i in range(1, 7)}
    assert sorted(leader.admitted()) == sorted(before)
    assert follower.admitted() == []
    assert "admission loop leading as" not in follower.output()

    leader.kill()
    _submit(follower, "after-1", submitted)
    _submit(follower, "after-2", submitted)
    wait_for(lambda: _admitted(ledgered, ["after-1", "after-2"]), LIVENESS, "takeover")

    assert _leader_holder(ledgered) == follower.holder
    assert sorted(follower.admitted()) == ["team-a/after-1", "team-a/after-2"]
    assert [name for name, n in _admission_events(ledgered).items() if n > 1] == []
    assert violations(ledgered, NOMINAL, submitted) == []
    terms = ledgered.rows("SELECT term FROM loop_leader WHERE id = 1")
    assert terms[0]["term"] == 2  # one term per leader: the follower never led before the kill


def test_a_frozen_leader_is_replaced_and_steps_down_when_it_wakes(
    ledgered: Ledgered, replicas: tuple[ServeProcess, ServeProcess]
) -> None:
    leader, follower = _roles(ledgered, *replicas)
    submitted: set[str] = set()
    _apply_pool(follower)
    _submit(follower, "first", submitted)
    wait_for(lambda: _admitted(ledgered, ["first"]), LIVENESS, "the leader admits")

    leader.pause()  # alive, its connections open: an advisory lock would stay held for good
    try:
        _submit(follower, "while-frozen", submitted)
        wait_for(lambda: _admitted(ledgered, ["while-frozen"]), LIVENESS, "the follower took over")
        assert _leader_holder(ledgered) == follower.holder
        assert follower.status("/readyz") == 200
    finally:
        leader.resume()
    wait_for(lambda: "lost the leader lease" in leader.output(), LIVENESS, "the old leader steps down")
    _submit(follower, "after-wake", submitted)
    wait_for(lambda: _admitted(ledgered, ["after-wake"]), LIVENESS, "the new leader admits")

    assert _leader_holder(ledgered) == follower.holder
    assert "team-a/after-wake" in follower.admitted()
    assert "team-a/after-wake" not in leader.admitted()
    assert [name for name, n in _admission_events(ledgered).items() if n > 1] == []
    assert violations(ledgered, NOMINAL, submitted) == []


def test_a_follower_that_cannot_reach_a_live_leader_is_not_ready(
    ledgered: Ledgered, replicas: tuple[ServeProcess, ServeProcess]
) -> None:
    leader, follower = _roles(ledgered, *replicas)
    wait_for(lambda: follower.status("/readyz") == 200, LIVENESS, "the follower is ready")
    engine = sa.create_engine(ledgered.url, poolclass=sa.NullPool)
    leader.pause()
    try:
        # The lease row stays locked by a transaction that never ends: the follower can
        # neither see the frozen leader renew nor take the lease when it runs out.
        with engine.connect() as blocker:
            blocker.execute(sa.text("SET idle_in_transaction_session_timeout = 0"))
            blocker.execute(sa.text("SELECT * FROM loop_leader WHERE id = 1 FOR UPDATE"))
            wait_for(lambda: follower.status("/readyz") == 503, LIVENESS, "the follower says so")
            detail = follower.client.get("/readyz").json()["detail"]
            assert "leader lease" in detail, detail
            assert follower.status("/healthz") == 200  # alive, only not ready
            blocker.rollback()
        wait_for(lambda: _leader_holder(ledgered) == follower.holder, LIVENESS, "it takes over")
        wait_for(lambda: follower.status("/readyz") == 200, LIVENESS, "and is ready again")
    finally:
        leader.resume()
        engine.dispose()
