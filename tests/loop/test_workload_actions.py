"""POST /api/v1/workloads and …/finish over real HTTP (the app as ``berth serve`` builds it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from builders.loop import Ledgered, pool
from builders.manifests import job


@pytest.fixture
def client(ledgered: Ledgered, api: httpx.Client) -> Iterator[httpx.Client]:
    ledgered.apply(pool(("team-a", 4)))
    yield api


def _error(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()["error"]
    return body


def test_a_json_job_is_recorded_pending_with_its_first_reason(
    client: httpx.Client, ledgered: Ledgered
) -> None:
    response = client.post("/api/v1/workloads", json=job("train", 2))

    assert response.status_code == 201
    body = response.json()
    assert (body["namespace"], body["name"], body["state"]) == ("team-a", "train", "Pending")
    assert body["podSets"][0]["requests"] == {"nvidia.com/gpu": "2"}
    row = ledgered.workload("train")
    assert row["reason_code"] == "PendingEvaluation"
    assert [r["code"] for r in ledgered.timeline("train")] == ["PendingEvaluation"]


def test_a_yaml_workload_manifest_is_accepted(client: httpx.Client) -> None:
    manifest = (
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
        "metadata: {name: sweep, namespace: team-a}\n"
        "spec:\n  queueName: main\n  podSets:\n    - name: workers\n      count: 2\n"
        "      template:\n        spec:\n          containers:\n"
        "            - {name: w, resources: {requests: {nvidia.com/gpu: 1}}}\n"
    )
    response = client.post(
        "/api/v1/workloads", content=manifest, headers={"content-type": "application/yaml"}
    )

    assert response.status_code == 201
    assert (response.json()["kind"], response.json()["podSets"][0]["count"]) == ("Workload", 2)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param(
            json.dumps({**job("x", 1), "kind": "Deployment"}),
            "kind",
            id="a Deployment is not a workload",
        ),
        pytest.param(
            json.dumps({k: v for k, v in job("x", 1).items() if k != "spec"}),
            "spec",
            id="a Job without spec names the spec",
        ),
        pytest.param("kind: [unclosed", "", id="a body that is not YAML says so"),
    ],
)
def test_invalid_manifests_are_refused_naming_the_field(
    client: httpx.Client, body: str, field: str
) -> None:
    response = client.post("/api/v1/workloads", content=body)

    assert response.status_code == 422
    error = _error(response)
    assert error["code"] == "InvalidInput"
    assert error.get("field", "") == field
    assert error["message"]


def test_a_second_unfinished_workload_with_the_name_is_a_conflict(client: httpx.Client) -> None:
    assert client.post("/api/v1/workloads", json=job("train", 2)).status_code == 201

    response = client.post("/api/v1/workloads", json=job("train", 2))

    assert response.status_code == 409
    assert _error(response) == {
        "code": "Conflict",
        "message": _error(response)["message"],
        "field": "metadata.name",
    }
    assert "team-a/train" in _error(response)["message"]


def test_finish_releases_the_workload_and_the_name_can_be_reused(
    client: httpx.Client, ledgered: Ledgered
) -> None:
    client.post("/api/v1/workloads", json=job("train", 2))

    finished = client.post("/api/v1/workloads/team-a/train/finish")
    again = client.post("/api/v1/workloads/team-a/train/finish")
    reused = client.post("/api/v1/workloads", json=job("train", 2))

    assert (finished.status_code, finished.json()["state"]) == (200, "Finished")
    assert (again.status_code, again.json()["state"]) == (200, "Finished")
    assert reused.status_code == 201
    assert [r["until"] is not None for r in ledgered.timeline("train")] == [True, False]


def test_finishing_an_unknown_workload_is_not_found_naming_it(client: httpx.Client) -> None:
    response = client.post("/api/v1/workloads/team-a/ghost/finish")

    assert response.status_code == 404
    error = _error(response)
    assert (error["code"], error["field"]) == ("NotFound", "name")
    assert "team-a/ghost" in error["message"]


def test_submit_notifies_the_loop_channel(client: httpx.Client, ledgered: Ledgered) -> None:
    engine = sa.create_engine(ledgered.url, isolation_level="AUTOCOMMIT", poolclass=sa.NullPool)
    try:
        with engine.connect() as connection:
            raw: Any = connection.connection.driver_connection
            raw.execute("LISTEN berth_changes")
            client.post("/api/v1/workloads", json=job("train", 2))
            payloads = {n.payload for n in raw.notifies(timeout=5, stop_after=1)}
    finally:
        engine.dispose()

    assert "workloads" in payloads
