"""Live ClusterQueue and cohort status, usage metering, metrics and simulate, over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from builders.reads import World, pool, serve

from quota.ledger.reads import queues
from quota.ledger.reads.queue_cache import QuotaObjectCache, cached_queue_statuses

pytestmark = pytest.mark.db


@pytest.fixture
def world(db_url: str) -> Iterator[World]:
    """team-a (4 GPUs) runs a1 (4) and a2 (2, borrowed from team-b) for an hour from T0,
    then a1 finishes and a3 (4) starts; a5 waits. team-c (2 GPUs) is outside the cohort."""
    w = World(db_url)
    w.apply(pool(("team-a", 4), ("team-b", 4)))
    w.apply(pool(("team-c", 2), cohort=None))
    for name, gpus in (("a1", 4), ("a2", 2), ("a3", 4), ("a5", 4)):
        w.submit(name, gpus, "team-a")
    w.cycle()
    w.advance(hours=1)
    w.finish("team-a", "a1")
    w.cycle()
    yield w
    w.close()


@pytest.fixture
def api(world: World) -> Iterator[httpx.Client]:
    with serve(world.url) as client:
        yield client


def _gpu(status: dict[str, Any]) -> dict[str, Any]:
    [flavor] = status["flavors"]
    [resource] = flavor["resources"]
    return {"flavor": flavor["name"], **resource}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/api/v1/clusterqueues/team-a", {"used": "6", "borrowed": "2", "lent": "0", "nominal": "4"}, id="borrowing queue uses above nominal"),
        pytest.param("/api/v1/clusterqueues/team-b", {"used": "0", "borrowed": "0", "lent": "2", "nominal": "4"}, id="idle queue lends what the other borrows"),
        pytest.param("/api/v1/clusterqueues/team-c", {"used": "0", "borrowed": "0", "lent": "0", "borrowingLimit": None}, id="queue outside a cohort lends nothing"),
        pytest.param("/api/v1/cohorts/all", {"nominal": "8", "used": "6", "borrowed": "2", "lent": "2"}, id="cohort sums its queues"),
    ],
)
def test_quota_figures(api: httpx.Client, path: str, expected: dict[str, object]) -> None:
    response = api.get(path)
    assert response.status_code == 200, response.text
    figures = _gpu(response.json()["status"])
    assert {key: figures[key] for key in expected} == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/api/v1/clusterqueues/team-a", (1, 2, {"WaitingForQuota": 1}), id="queue counts pending by reason"),
        pytest.param("/api/v1/clusterqueues/team-b", (0, 0, {}), id="empty queue counts nothing"),
        pytest.param("/api/v1/cohorts/all", (1, 2, {"WaitingForQuota": 1}), id="cohort counts its queues' workloads"),
    ],
)
def test_counts(api: httpx.Client, path: str, expected: tuple[int, int, dict[str, int]]) -> None:
    status = api.get(path).json()["status"]
    assert (status["pendingWorkloads"], status["admittedWorkloads"], status["pendingByReason"]) == expected


def test_cluster_queue_keeps_its_spec_beside_the_status(api: httpx.Client) -> None:
    body = api.get("/api/v1/clusterqueues/team-a").json()
    assert (body["kind"], body["metadata"]["name"], body["spec"]["cohort"]) == ("ClusterQueue", "team-a", "all")


def test_cohort_lists_its_subtree(api: httpx.Client) -> None:
    body = api.get("/api/v1/cohorts/all").json()
    assert body["clusterQueues"] == ["team-a", "team-b"]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v1/clusterqueues/nope", id="unknown ClusterQueue"),
        pytest.param("/api/v1/cohorts/nope", id="unknown cohort"),
    ],
)
def test_unknown_queue_or_cohort_is_404_naming_it(api: httpx.Client, path: str) -> None:
    response = api.get(path)
    assert response.status_code == 404
    assert "'nope'" in response.json()["error"]["message"]


def test_list_endpoints_still_list_manifests(api: httpx.Client) -> None:
    body = api.get("/api/v1/clusterqueues").json()
    assert [item["metadata"]["name"] for item in body["items"]] == ["team-a", "team-b", "team-c"]


def test_queue_statuses_page_through_every_queue(api: httpx.Client) -> None:
    first = api.get("/api/v1/status/clusterqueues", params={"limit": 2}).json()
    second = api.get("/api/v1/status/clusterqueues", params={"limit": 2, "cursor": first["nextCursor"]}).json()
    assert [i["name"] for i in first["items"] + second["items"]] == ["team-a", "team-b", "team-c"]
    assert second["nextCursor"] is None


@pytest.mark.parametrize(
    ("hours", "group_by", "expected"),
    [
        pytest.param((0, 1), "clusterQueue,flavor", [({"clusterQueue": "team-a", "flavor": "h100"}, 6 * 3600.0, 2)], id="first hour: a1 (4) and a2 (2) for an hour"),
        pytest.param((0.5, 1.5), "flavor", [({"flavor": "h100"}, 4 * 1800 + 2 * 3600 + 4 * 1800.0, 3)], id="a window cuts intervals and counts open ones to its end"),
        pytest.param((0, 1), "namespace", [({"namespace": "team-a"}, 6 * 3600.0, 2)], id="grouped by namespace"),
    ],
)
def test_usage(world: World, api: httpx.Client, hours: tuple[float, float], group_by: str,
               expected: list[tuple[dict[str, str], float, int]]) -> None:
    start, end = (world.start + timedelta(hours=h) for h in hours)
    response = api.get("/api/v1/usage", params={"from": start.isoformat(), "to": end.isoformat(), "groupBy": group_by})
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert [(i["group"], i["resourceSeconds"], i["workloads"]) for i in items] == expected
    assert all(i["resource"] == "nvidia.com/gpu" and i["cost"] is None for i in items)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        pytest.param({"groupBy": "colour"}, "groupBy", id="unknown grouping"),
        pytest.param({"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "from", id="window ends before it starts"),
        pytest.param({"from": "2026-01-01T00:00:00"}, "query.from", id="time without a zone"),
        pytest.param({"to": "0.5"}, "query.to", id="a number is not a time, though pydantic reads one"),
        pytest.param({"to": "yesterday"}, "query.to", id="not a time"),
    ],
)
def test_bad_usage_parameters_are_422(api: httpx.Client, params: dict[str, str], field: str) -> None:
    response = api.get("/api/v1/usage", params=params)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field


@pytest.mark.parametrize(
    "line",
    [
        pytest.param('berth_pending_workloads{cluster_queue="team-a",reason="WaitingForQuota"} 1.0', id="pending by queue and reason"),
        pytest.param('berth_admitted_workloads_total{cluster_queue="team-a"} 3.0', id="admissions by queue"),
        pytest.param("berth_finished_workloads_total 1.0", id="finished total"),
        pytest.param('berth_cluster_queue_borrowed{cluster_queue="team-a",flavor="h100",resource="nvidia.com/gpu"} 2.0', id="borrowed per flavor and resource"),
        pytest.param('berth_cluster_queue_nominal_quota{cluster_queue="team-c",flavor="h100",resource="nvidia.com/gpu"} 2.0', id="nominal quota"),
        pytest.param('berth_admission_wait_time_seconds_bucket{le="3600.0"} 3.0', id="a3 waited an hour"),
        pytest.param('berth_admission_wait_time_seconds_bucket{le="1800.0"} 2.0', id="a1 and a2 waited no time"),
        pytest.param("# TYPE berth_admission_cycle_duration_seconds histogram", id="cycle durations are exposed"),
    ],
)
def test_metrics(api: httpx.Client, line: str) -> None:
    response = api.get("/metrics")
    assert response.status_code == 200
    assert line in response.text.splitlines()


SCENARIO = """
objects:
  - {apiVersion: kueue.x-k8s.io/v1beta1, kind: ResourceFlavor, metadata: {name: h100}}
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ClusterQueue
    metadata: {name: q}
    spec:
      namespaceSelector: {}
      resourceGroups:
        - coveredResources: [nvidia.com/gpu]
          flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
  - {apiVersion: kueue.x-k8s.io/v1beta1, kind: LocalQueue, metadata: {name: lq, namespace: ns}, spec: {clusterQueue: q}}
steps:
  - at: 0s
    create:
      - apiVersion: batch/v1
        kind: Job
        metadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: lq}}
        spec: {template: {spec: {containers: [{name: m, resources: {requests: {nvidia.com/gpu: "8"}}}]}}}
"""


def _rows(url: str) -> int:
    engine = sa.create_engine(url, poolclass=sa.NullPool)
    with engine.connect() as connection:
        count = connection.execute(sa.text("SELECT (SELECT count(*) FROM audit_log) + (SELECT count(*) FROM workloads)")).scalar_one()
    engine.dispose()
    return int(count)


def test_simulate_answers_the_what_if_and_writes_nothing(world: World, api: httpx.Client) -> None:
    before = _rows(world.url)
    response = api.post("/api/v1/simulate", content=SCENARIO, headers={"content-type": "application/yaml"})
    assert response.status_code == 200, response.text
    assert response.json()["steps"][0]["workloads"]["ns/j"]["reason"]["code"] == "ExceedsMaxQuota"
    assert _rows(world.url) == before


def test_invalid_scenario_is_422_naming_the_problem(api: httpx.Client) -> None:
    response = api.post("/api/v1/simulate", content="steps: [", headers={"content-type": "application/yaml"})
    assert response.status_code == 422
    assert "invalid YAML" in response.json()["error"]["message"]


BAD_QUEUE = """
objects:
  - {apiVersion: kueue.x-k8s.io/v1beta1, kind: ResourceFlavor, metadata: {name: gpu}}
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ClusterQueue
    metadata: {name: cq-a}
    spec: {resourceGroups: [{coveredResources: [cpu], flavors: [{name: gpu, resources: [{name: cpu, nominalQuota: -1}]}]}]}
steps: [{at: 0s}]
"""


def test_invalid_scenario_names_the_object_beside_the_field_as_apply_does(api: httpx.Client) -> None:
    response = api.post("/api/v1/simulate", content=BAD_QUEUE, headers={"content-type": "application/yaml"})
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    field = "objects[1].spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"
    assert (error["code"], error["field"]) == ("InvalidInput", field)
    assert error["message"].startswith(f"request: ClusterQueue/cq-a: {field}: must not be negative")
    assert [(p["source"], p["document"], p["object"], p["field"]) for p in error["problems"]] == [
        ("request", None, "ClusterQueue/cq-a", field)
    ]


def _read_cached(world: World, cache: QuotaObjectCache, name: str) -> tuple[list[Any], int]:
    seen: list[str] = []

    def count(*args: Any) -> None:
        seen.append(args[2])

    sa.event.listen(world.engine, "before_cursor_execute", count)
    try:
        with world.sessions() as session:
            return cached_queue_statuses(session, [name], cache), len(seen)
    finally:
        sa.event.remove(world.engine, "before_cursor_execute", count)


@pytest.mark.parametrize("name", ["team-a", "team-b", "team-c", "nope"])
def test_status_from_kept_objects_is_the_status_read_afresh(world: World, name: str) -> None:
    cache = QuotaObjectCache()
    first, _ = _read_cached(world, cache, name)
    again, statements = _read_cached(world, cache, name)
    with world.sessions() as session:
        fresh = queues.queue_statuses(session, [name])
    assert (first, again, statements) == (fresh, fresh, 1)


def test_kept_objects_are_read_again_when_quota_changes(world: World) -> None:
    cache = QuotaObjectCache()
    _read_cached(world, cache, "team-a")
    world.apply(pool(("team-a", 6), ("team-b", 4)))
    [status], statements = _read_cached(world, cache, "team-a")
    [gpu] = status.resources
    assert (gpu.nominal, gpu.used, gpu.borrowed, statements > 1) == (6000, 6000, 0, True)


def test_cluster_queue_served_after_a_quota_change_shows_it(world: World, api: httpx.Client) -> None:
    assert _gpu(api.get("/api/v1/clusterqueues/team-a").json()["status"])["nominal"] == "4"
    world.apply(pool(("team-a", 6), ("team-b", 4)))
    figures = _gpu(api.get("/api/v1/clusterqueues/team-a").json()["status"])
    assert (figures["nominal"], figures["borrowed"]) == ("6", "0")
