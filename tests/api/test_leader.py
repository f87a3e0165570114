"""``GET /api/v1/leader``: who leads, since when, and on a follower why this replica does not
(answered from the replica's last look at its lease, with no ledger behind it)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest
from builders.reads import berth_context
from fastapi.testclient import TestClient

from admission.loop.leader import LeaderView
from api.app import create_app
from api.routers.leader import NO_LOOP

SINCE = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
LEASE = "the Lease default/berth-leader"


class Seen:
    """A ``Leadership`` that only reports what it saw."""

    identity = "berth-1"
    renew_seconds = 5.0

    def __init__(self, view: LeaderView) -> None:
        self._view = view

    async def acquire(self) -> bool:
        return self._view.leading

    async def held(self) -> bool:
        return self._view.leading

    async def release(self) -> None:
        return None

    def view(self) -> LeaderView:
        return self._view


def leader_of(leadership: Seen | None) -> dict[str, Any]:
    engine: Any = None  # the route reads no ledger
    context = dataclasses.replace(berth_context(engine), leadership=lambda: leadership)
    with TestClient(create_app(context)) as client:
        answer = client.get("/api/v1/leader")
    assert answer.status_code == 200
    body: dict[str, Any] = answer.json()
    return body


@pytest.mark.parametrize(
    ("view", "expected"),
    [
        pytest.param(
            LeaderView(leading=True, holder="berth-1", live=True, seen_at=1.0, since=SINCE, lease=LEASE),
            {"leading": True, "leader": "berth-1", "since": "2026-12-01T09:30:00Z", "reason": None},
            id="the leader says since when",
        ),
        pytest.param(
            LeaderView(leading=False, holder="berth-0", live=True, seen_at=1.0, since=SINCE, lease=LEASE),
            {"leading": False, "leader": "berth-0", "since": "2026-12-01T09:30:00Z",
             "reason": f"berth-0 leads: it holds {LEASE} and renews it"},
            id="a follower names the leader",
        ),
        pytest.param(
            LeaderView(leading=False, seen_at=1.0, lease=LEASE,
                       error=f"cannot create {LEASE}: forbidden: leases is forbidden"),
            {"leading": False, "leader": None, "since": None,
             "reason": f"cannot create {LEASE}: forbidden: leases is forbidden"},
            id="a follower that cannot write the Lease says why",
        ),
        pytest.param(
            LeaderView(leading=False, holder="berth-0", live=False, seen_at=1.0, lease=LEASE),
            {"leading": False, "leader": None, "since": None,
             "reason": f"the lease of berth-0 ran out; this replica takes {LEASE} next"},
            id="a lease that ran out names no leader",
        ),
    ],
)  # fmt: skip
def test_the_leader_route_reports_what_the_replica_saw(
    view: LeaderView, expected: dict[str, Any]
) -> None:
    body = leader_of(Seen(view))
    assert {key: body[key] for key in expected} == expected
    assert (body["identity"], body["lease"]) == ("berth-1", LEASE)


def test_a_replica_without_the_loop_says_so() -> None:
    assert leader_of(None) == {
        "identity": None, "leading": False, "leader": None, "since": None, "lease": None,
        "reason": NO_LOOP,
    }  # fmt: skip
