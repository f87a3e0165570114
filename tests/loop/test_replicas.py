"""Two real ``berth serve`` replicas on one database: exactly one admits at a time; SIGKILL the
leader and the other takes over within seconds, admitting nothing twice."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from invariants import violations
from loop_builders import Ledgered, job, pool
from serve_process import ServeProcess, wait_for

TAKEOVER_BOUND = 15.0  # seconds from SIGKILL of the leader to the survivor's first admission
NOMINAL = {"team-a": 4000}


@pytest.fixture
def replicas(ledgered: Ledgered, tmp_path: Path) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    a = ServeProcess(ledgered.url, tmp_path / "replica-a.log")
    b = ServeProcess(ledgered.url, tmp_path / "replica-b.log")
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


def test_one_replica_admits_and_the_survivor_takes_over_after_sigkill(
    ledgered: Ledgered, replicas: tuple[ServeProcess, ServeProcess]
) -> None:
    a, b = replicas
    wait_for(lambda: _leader_holder(ledgered) in (a.holder, b.holder), 15, "a replica leads")
    leader, follower = (a, b) if _leader_holder(ledgered) == a.holder else (b, a)
    submitted: set[str] = set()

    def submit(via: ServeProcess, name: str) -> None:
        response = via.post("/api/v1/workloads", json=job(name, 1))
        assert response.status_code == 201, response.text
        submitted.add(f"team-a/{name}")

    def finish(via: ServeProcess, name: str) -> None:
        response = via.post(f"/api/v1/workloads/team-a/{name}/finish")
        assert response.status_code == 200, response.text

    # Everything goes through the follower's API; only the leader's loop may decide.
    response = follower.post(
        "/api/v1/apply",
        content=pool(("team-a", 4)),
        headers={"content-type": "application/yaml"},
    )
    assert response.status_code == 200, response.text
    for i in range(1, 7):
        submit(follower, f"w-{i}")
    wait_for(lambda: _admitted(ledgered, ["w-1", "w-2", "w-3", "w-4"]), 10, "4 of 6 admitted")
    assert _states(ledgered)["w-5"] == _states(ledgered)["w-6"] == "Pending"  # 4 GPUs, no more
    finish(follower, "w-1")
    finish(follower, "w-2")
    wait_for(lambda: _admitted(ledgered, ["w-5", "w-6"]), 10, "freed quota admitted the rest")
    finish(follower, "w-3")
    finish(follower, "w-4")
    time.sleep(4 * leader.interval)  # a few more cycles: neither replica admits anything else
    before = {f"team-a/w-{i}" for i in range(1, 7)}
    assert sorted(leader.admitted()) == sorted(before)
    assert follower.admitted() == []
    assert "admission loop leading as" not in follower.output()

    leader.kill()
    killed = time.monotonic()
    submit(follower, "after-1")
    submit(follower, "after-2")
    wait_for(lambda: _admitted(ledgered, ["after-1", "after-2"]), TAKEOVER_BOUND, "takeover")
    takeover = time.monotonic() - killed
    print(f"\nsurvivor admitted new work {takeover:.2f}s after the leader was SIGKILLed")

    assert takeover < TAKEOVER_BOUND
    assert _leader_holder(ledgered) == follower.holder
    assert sorted(follower.admitted()) == ["team-a/after-1", "team-a/after-2"]
    everywhere = Counter(leader.admitted() + follower.admitted())
    assert [key for key, n in everywhere.items() if n > 1] == []
    assert violations(ledgered, NOMINAL, submitted) == []
    terms = ledgered.rows("SELECT term FROM loop_leader WHERE id = 1")
    assert terms[0]["term"] == 2  # one term per leader: the follower never led before the kill
