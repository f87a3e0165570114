"""GET /api/v1/usage (charged, waste, fault time, cost, cohort) and /api/v1/borrowing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from builders.reads import World, pool, serve

H = 3600.0  # one GPU-hour in GPU-seconds
PRICED = (
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
    "metadata: {name: h100, annotations: {berth.dev/price-per-hour: 'nvidia.com/gpu=2.00'}}\n"
)


@pytest.fixture
def world(db_url: str) -> Iterator[World]:
    """h100 costs 2.00 per GPU-hour. team-a (4 GPUs) runs a1 (6 GPUs, 2 borrowed from
    team-b) from T0 to T0+1h, when it finishes. b1 of team-b then holds 4 GPUs from 1h to
    3h and is preempted having checkpointed at 2.5h, and 2 GPUs from 3h to 4h until a
    node fault evicts it (no checkpoint since 3h)."""
    w = World(db_url)
    w.apply(pool(("team-a", 4), ("team-b", 4)))
    w.apply(PRICED)
    w.submit("a1", 6, "team-a")
    w.cycle()
    w.advance(hours=1)
    w.finish("team-a", "a1")
    w.submit("b1", 4, "team-b")
    at = {h: w.start + timedelta(hours=h) for h in (1, 2.5, 3, 4)}
    with w.sessions() as session:
        session.execute(
            sa.text(
                "INSERT INTO usage_intervals (workload_id, cluster_queue, flavor, resource, "
                "amount, started_at, ended_at, end_reason, lost_from) SELECT id, 'team-b', "
                "'h100', 'nvidia.com/gpu', v.amount, v.started_at, v.ended_at, v.end_reason, "
                "v.lost_from FROM workloads, (VALUES "
                "(4000, CAST(:h1 AS timestamptz), CAST(:h3 AS timestamptz), 'Preempted', "
                " CAST(:h25 AS timestamptz)), "
                "(2000, CAST(:h3 AS timestamptz), CAST(:h4 AS timestamptz), 'NodeUnhealthy', "
                " CAST(:h3 AS timestamptz))"
                ") AS v(amount, started_at, ended_at, end_reason, lost_from) WHERE name = 'b1'"
            ),
            {"h1": at[1], "h25": at[2.5], "h3": at[3], "h4": at[4]},
        )
    yield w
    w.close()


@pytest.fixture
def api(world: World) -> Iterator[httpx.Client]:
    with serve(world.url) as client:
        yield client


def _usage(api: httpx.Client, world: World, hours: tuple[float, float],
           group_by: str) -> list[dict[str, Any]]:
    start, end = (world.start + timedelta(hours=h) for h in hours)
    response = api.get("/api/v1/usage", params={"from": start.isoformat(), "to": end.isoformat(),
                                                "groupBy": group_by})
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def test_usage_by_queue_separates_waste_fault_time_and_cost(world: World, api: httpx.Client) -> None:
    a, b = _usage(api, world, (0, 5), "clusterQueue")

    # team-a: a1 held 6 GPUs for 1h and finished: all charged, 6 GPU-h x 2.00 = 12.
    assert (a["group"], a["resourceSeconds"], a["chargedResourceSeconds"]) == (
        {"clusterQueue": "team-a"}, 6 * H, 6 * H)
    assert (a["wasteResourceSeconds"], a["faultResourceSeconds"], a["cost"]) == (0, 0, 12.0)
    assert a["ended"] == {"Finished": 1}
    # team-b: held 4 GPUs x 2h + 2 GPUs x 1h = 10 GPU-h. Waste: 4 GPUs from the checkpoint
    # at 2.5h to the preemption at 3h = 2 GPU-h (charged: the tenant ran it). Fault: 2 GPUs
    # x 1h, not charged: 8 GPU-h charged, 16.00.
    assert (b["resourceSeconds"], b["wasteResourceSeconds"], b["faultResourceSeconds"]) == (
        10 * H, 2 * H, 2 * H)
    assert (b["chargedResourceSeconds"], b["cost"]) == (8 * H, 16.0)
    assert b["ended"] == {"NodeUnhealthy": 1, "Preempted": 1}


@pytest.mark.parametrize(
    ("hours", "group_by", "expected"),
    [
        pytest.param((0, 5), "cohort", [({"cohort": "all"}, 16 * H, 14 * H, 28.0)],
                     id="by cohort: both queues summed, fault time not charged"),
        pytest.param((0, 5), "cohort,flavor", [({"cohort": "all", "flavor": "h100"},
                                                16 * H, 14 * H, 28.0)],
                     id="by cohort and flavor"),
        # [2h, 5h): 4 GPUs x 1h + 2 GPUs x 1h held = 6; the fault hour is inside: charged 4.
        pytest.param((2, 5), "clusterQueue", [({"clusterQueue": "team-b"}, 6 * H, 4 * H, 8.0)],
                     id="a window cuts intervals, waste and fault time alike"),
    ],
)
def test_usage_over_any_window_and_grouping(
    world: World, api: httpx.Client, hours: tuple[float, float], group_by: str,
    expected: list[tuple[dict[str, str], float, float, float]],
) -> None:
    items = _usage(api, world, hours, group_by)
    assert [(i["group"], i["resourceSeconds"], i["chargedResourceSeconds"], i["cost"])
            for i in items] == expected


def test_borrowing_says_who_owes_whom(world: World, api: httpx.Client) -> None:
    start, end = world.start, world.start + timedelta(hours=5)
    response = api.get("/api/v1/borrowing", params={"from": start.isoformat(),
                                                    "to": end.isoformat()})

    assert response.status_code == 200, response.text
    # a1 used 6 of team-a's 4 for the first hour, while team-b left all 4 unused: team-a
    # owes team-b 2 GPU-hours (4.00 at 2.00). Later team-b stayed within its own 4.
    assert [(i["borrower"], i["lender"], i["cohort"], i["resourceSeconds"], i["cost"])
            for i in response.json()["items"]] == [("team-a", "team-b", "all", 2 * H, 4.0)]


def test_borrowing_refuses_a_window_that_ends_before_it_starts(api: httpx.Client) -> None:
    response = api.get("/api/v1/borrowing", params={"from": "2026-01-02T00:00:00Z",
                                                    "to": "2026-01-01T00:00:00Z"})
    assert (response.status_code, response.json()["error"]["field"]) == (422, "from")


@pytest.mark.parametrize("path", ["/api/v1/borrowing", "/api/v1/usage"])
def test_a_window_ending_in_year_one_needs_a_start(api: httpx.Client, path: str) -> None:
    # Found by the schema fuzzer: the default one-day window before it cannot exist.
    response = api.get(path, params={"to": "0001-01-01T11:20:07Z"})
    assert (response.status_code, response.json()["error"]["field"]) == (422, "to")
