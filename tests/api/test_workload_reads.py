"""GET /api/v1/workloads…: why a workload waits, who is ahead, when it may start, its
history, and filtered pages — over HTTP, on a ledger written by the real admission loop."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from builders.reads import World, pool, serve

from quota.core.workload import WorkloadState
from quota.ledger.reads import workloads as reads

pytestmark = pytest.mark.db


@pytest.fixture
def world(db_url: str) -> Iterator[World]:
    """team-a and team-b (4 GPUs each) share cohort ``all``; team-a has run a1 (1h, done),
    runs a2 (2 GPUs, borrowing) and a3, and waits with a5 and then a6."""
    w = World(db_url)
    w.apply(pool(("team-a", 4), ("team-b", 4)))
    for name, gpus in (("a1", 4), ("a2", 2), ("a3", 4), ("a5", 4)):
        w.submit(name, gpus, "team-a")
    w.cycle()
    w.advance(hours=1)
    w.finish("team-a", "a1")
    w.cycle()
    w.advance(minutes=30)
    w.submit("a6", 4, "team-a")
    w.cycle()
    yield w
    w.close()


@pytest.fixture
def api(world: World) -> Iterator[httpx.Client]:
    with serve(world.url) as client:
        yield client


def _at(body: Any, path: str) -> Any:
    for part in path.split("."):
        body = body[int(part)] if isinstance(body, list) else body[part]
    return body


@pytest.mark.parametrize(
    ("name", "field", "expected"),
    [
        pytest.param("a5", "reason", "WaitingForQuota", id="pending workload names its primary reason"),
        pytest.param("a5", "reasons.0.details.shortfall", "2", id="the reason carries the shortfall as a quantity"),
        pytest.param("a5", "position", 1, id="first in its queue"),
        pytest.param("a6", "position", 2, id="later submission is second"),
        pytest.param("a6", "aheadCount", 1, id="counts the workloads ahead"),
        pytest.param("a6", "ahead.0.name", "a5", id="names the workload ahead"),
        pytest.param("a6", "ahead.0.requests", {"nvidia.com/gpu": "4"}, id="ahead shows requests as quantities"),
        pytest.param("a3", "state", "Admitted", id="admitted workload says so"),
        pytest.param("a3", "reason", None, id="admitted workload has no wait reason"),
        pytest.param("a3", "admission.podSetAssignments.0.flavors", {"nvidia.com/gpu": "h100"}, id="admission gives the flavor per pod set"),
        pytest.param("a3", "estimatedStart", None, id="no estimate once admitted"),
        pytest.param("a1", "state", "Finished", id="finished workload is still readable"),
    ],
)
def test_workload_detail(api: httpx.Client, name: str, field: str, expected: object) -> None:
    response = api.get(f"/api/v1/workloads/team-a/{name}")
    assert response.status_code == 200, response.text
    assert _at(response.json(), field) == expected


def test_estimate_is_made_from_the_queues_observed_run_times(api: httpx.Client) -> None:
    estimate = api.get("/api/v1/workloads/team-a/a6").json()["estimatedStart"]
    assert "median run time 1h over the last 1 finished workload of ClusterQueue team-a" in estimate["basis"]
    assert "1 ahead" in estimate["basis"]


def test_no_history_means_no_estimate(db_url: str) -> None:
    w = World(db_url)
    w.apply(pool(("team-a", 4), cohort=None))
    w.submit("big", 4, "team-a")
    w.submit("next", 4, "team-a")
    w.cycle()
    with serve(db_url) as api:
        body = api.get("/api/v1/workloads/team-a/next").json()
    w.close()
    assert (body["reason"], body["estimatedStart"]) == ("WaitingForQuota", None)


def test_unknown_workload_is_404_naming_it(api: httpx.Client) -> None:
    response = api.get("/api/v1/workloads/team-a/nope")
    assert response.status_code == 404
    assert "team-a/nope" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("name", "field", "expected"),
    [
        pytest.param("a5", "timeline.-1.code", "WaitingForQuota", id="timeline ends in the current reason"),
        pytest.param("a5", "timeline.-1.until", None, id="current reason is still open"),
        pytest.param("a3", "timeline.-1.code", "WaitingForQuota", id="admitted workload keeps the reason it waited for"),
        pytest.param("a3", "timeline.-1.seconds", 3600.0, id="a closed reason lasted until admission"),
        pytest.param("a3", "admissions", 1, id="admissions are counted"),
        pytest.param("a3", "events.0.type", "Admitted", id="events list the admission"),
        pytest.param("a1", "events.1.type", "Finished", id="the finish is an event"),
        pytest.param("a3", "summary", "waited 1h: 1h WaitingForQuota", id="summary in words with durations"),
    ],
)
def test_history(api: httpx.Client, name: str, field: str, expected: object) -> None:
    response = api.get(f"/api/v1/workloads/team-a/{name}/history")
    assert response.status_code == 200, response.text
    body = response.json()
    path, _, last = field.rpartition(".")
    if path.endswith("-1"):  # "timeline.-1.code": the last entry
        body = response.json()[path.split(".")[0]][-1]
        assert body[last] == expected
    else:
        assert _at(body, field) == expected


def test_pages_walk_every_workload_once(api: httpx.Client) -> None:
    names: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2}
        if cursor:
            params["cursor"] = cursor
        page = api.get("/api/v1/workloads", params=params).json()
        names += [item["name"] for item in page["items"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert names == ["a1", "a2", "a3", "a5", "a6"]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        pytest.param({"state": "Pending"}, ["a5", "a6"], id="pending only"),
        pytest.param({"reason": "WaitingForQuota"}, ["a5", "a6"], id="by primary reason"),
        pytest.param({"clusterQueue": "team-a", "state": "Admitted"}, ["a2", "a3"], id="by ClusterQueue and state"),
        pytest.param({"clusterQueue": "team-b"}, [], id="a queue with nothing"),
        pytest.param({"namespace": "team-b"}, [], id="another namespace"),
    ],
)
def test_list_filters(api: httpx.Client, params: dict[str, str], expected: list[str]) -> None:
    response = api.get("/api/v1/workloads", params=params)
    assert response.status_code == 200, response.text
    assert [item["name"] for item in response.json()["items"]] == expected


@pytest.mark.parametrize(
    ("params", "field"),
    [
        pytest.param({"cursor": "not-a-cursor"}, "cursor", id="a cursor we never gave out"),
        pytest.param({"limit": "0"}, "query.limit", id="limit below one"),
        pytest.param({"limit": "1001"}, "query.limit", id="limit above the maximum"),
        pytest.param({"state": "Sleeping"}, "query.state", id="unknown state"),
        pytest.param({"reason": "Bored"}, "query.reason", id="unknown reason code"),
    ],
)
def test_bad_list_parameters_are_422_naming_the_field(
    api: httpx.Client, params: dict[str, str], field: str
) -> None:
    response = api.get("/api/v1/workloads", params=params)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field


@contextmanager
def _statements(engine: sa.Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(*args: Any) -> None:
        seen.append(args[2])

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)


@pytest.mark.parametrize("name", ["a1", "a2", "a3", "a5", "a6", "nope"])
def test_detail_in_one_statement_says_what_the_separate_reads_say(world: World, name: str) -> None:
    with world.sessions() as session:
        view = reads.get_workload_view(session, "team-a", name)
        ahead: list[reads.AheadEntry] = []
        history = None
        if view is not None and view.state is WorkloadState.PENDING and view.cluster_queue:
            ahead = reads.workloads_ahead(session, view.cluster_queue, view.position, 5)
            if view.position is not None:
                history = reads.run_times(session, view.cluster_queue)
        with _statements(world.engine) as seen:
            detail = reads.get_workload_detail(session, "team-a", name, ahead=5)
    assert len(seen) == 1
    if view is None:
        assert detail is None
    else:
        assert detail == reads.WorkloadDetailView(view, tuple(ahead), history)
