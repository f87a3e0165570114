"""The repair workflow over REST: operator moves, refusals that change nothing, the history."""

from __future__ import annotations

import argparse
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from builders.reads import serve

from api.auth import parse_tokens
from berth.cli import node as node_cli

pytestmark = pytest.mark.db

NODE = """
apiVersion: v1
kind: Node
metadata:
  name: gpu-7
  labels: {gpu: h100}
status:
  capacity: {nvidia.com/gpu: "8"}
  allocatable: {nvidia.com/gpu: "8"}
"""


def _move(api: httpx.Client, state: str, **extra: Any) -> httpx.Response:
    return api.post("/api/v1/nodes/gpu-7/health", json={"state": state, **extra})


def _rows(url: str, query: str) -> list[dict[str, Any]]:
    engine = sa.create_engine(url, poolclass=sa.NullPool)
    with engine.connect() as connection:
        found = [dict(r) for r in connection.execute(sa.text(query)).mappings()]
    engine.dispose()
    return found


@pytest.fixture
def api(api: httpx.Client) -> httpx.Client:
    assert api.post("/api/v1/apply", content=NODE).status_code == 200
    return api


def test_a_node_goes_through_repair_and_back(api: httpx.Client, db_url: str) -> None:
    steps = [
        ("Cordoned", "XID 79 on GPU 3"),
        ("Repairing", "reseating GPU 3"),
        ("Validating", "burn-in running"),
        ("Healthy", "burn-in passed"),
    ]
    before = "Healthy"
    for state, why in steps:
        response = _move(api, state, why=why)
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["node"], body["from"], body["to"], body["why"]) == ("gpu-7", before, state, why)
        assert body["actor"].startswith("api:")
        before = state
    history = api.get("/api/v1/nodes/gpu-7/history").json()
    assert history["health"] == "Healthy"
    assert [(t["from"], t["to"]) for t in history["transitions"]] == [
        ("Healthy", "Cordoned"), ("Cordoned", "Repairing"),
        ("Repairing", "Validating"), ("Validating", "Healthy"),
    ]  # fmt: skip
    assert history["healthSince"] == history["transitions"][-1]["at"]
    assert history["displaced"] == []
    audit = _rows(db_url, "SELECT actor, before, after FROM audit_log WHERE kind = 'Node' "
                          "AND action = 'update' ORDER BY id")  # fmt: skip
    assert [(a["before"]["health"], a["after"]["health"]) for a in audit] == [
        ("Healthy", "Cordoned"), ("Cordoned", "Repairing"),
        ("Repairing", "Validating"), ("Validating", "Healthy"),
    ]  # fmt: skip
    assert audit[0]["after"]["why"] == "XID 79 on GPU 3"


@pytest.mark.parametrize(
    ("body", "status", "field", "message"),
    [
        pytest.param(
            {"state": "Validating"}, 409, "state",
            "node gpu-7 is Healthy: it can move to Cordoned, not to Validating",
            id="skipping repair is refused",
        ),
        pytest.param(
            {"state": "Broken"}, 422, "state",
            "'Broken' is not a node health state; expected one of: Healthy, Degraded, "
            "Cordoned, Repairing, Validating", id="unknown state",
        ),
        pytest.param(
            {"state": "Cordoned", "expectedState": "Degraded"}, 409, "expectedState",
            "node gpu-7 is Healthy, not Degraded (expectedState)",
            id="a stale expectation is refused",
        ),
        pytest.param({"state": "Healthy"}, 409, "state", "node gpu-7 is already Healthy",
                     id="no move to the same state"),
    ],
)  # fmt: skip
def test_refused_moves_change_nothing(
    api: httpx.Client, db_url: str, body: dict[str, str], status: int, field: str, message: str
) -> None:
    response = api.post("/api/v1/nodes/gpu-7/health", json=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["field"] == field
    assert message in error["message"]
    assert api.get("/api/v1/nodes/gpu-7/history").json()["transitions"] == []
    assert _rows(db_url, "SELECT health FROM nodes") == [{"health": "Healthy"}]


def test_unknown_node_is_not_found(api: httpx.Client) -> None:
    moved = api.post("/api/v1/nodes/gpu-99/health", json={"state": "Cordoned"})
    assert moved.status_code == 404
    assert moved.json()["error"] == {
        "code": "NotFound", "message": "node gpu-99 does not exist", "field": "name",
    }  # fmt: skip
    assert api.get("/api/v1/nodes/gpu-99/history").status_code == 404


def test_health_set_by_a_manifest_is_in_the_history(api: httpx.Client) -> None:
    annotated = NODE.replace("  name: gpu-7\n", "  name: gpu-7\n  annotations: {berth.dev/health: Degraded}\n")
    assert api.post("/api/v1/apply", content=annotated).status_code == 200
    [transition] = api.get("/api/v1/nodes/gpu-7/history").json()["transitions"]
    assert (transition["from"], transition["to"]) == ("Healthy", "Degraded")
    assert transition["why"] == "set by manifest annotation berth.dev/health"


def test_moving_a_node_needs_an_admin_token(db_url: str) -> None:
    tokens = parse_tokens("root-secret-token-1:admin,look-secret-token-2:read")
    with serve(db_url, tokens) as client:
        admin = {"authorization": "Bearer root-secret-token-1"}
        reader = {"authorization": "Bearer look-secret-token-2"}
        assert client.post("/api/v1/apply", content=NODE, headers=admin).status_code == 200
        move = {"state": "Cordoned"}
        refused = client.post("/api/v1/nodes/gpu-7/health", json=move, headers=reader)
        assert refused.status_code == 403
        assert client.get("/api/v1/nodes/gpu-7/history", headers=reader).json()["health"] == (
            "Healthy"
        )
        done = client.post("/api/v1/nodes/gpu-7/health", json=move, headers=admin)
        assert done.status_code == 200


def test_berth_node_cli_moves_and_shows_history(
    api: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    def node(action: str, why: str = "") -> int:
        args = argparse.Namespace(action=action, name="gpu-7", why=why, server=str(api.base_url))
        return node_cli.run(args)

    assert node("cordon", "ECC errors") == 0
    assert capsys.readouterr().out == "node gpu-7: Healthy -> Cordoned (ECC errors)\n"
    assert node("return") == 2
    assert capsys.readouterr().err == (
        "error: node gpu-7 is Cordoned: it can move to Repairing, not to Healthy\n"
    )
    assert node("history") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("node gpu-7: Cordoned since ")
    assert lines[1].endswith("Healthy -> Cordoned  by api:127.0.0.1: ECC errors")
    assert len(lines) == 2
