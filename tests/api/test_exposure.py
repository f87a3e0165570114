"""What answers without a token when tokens are set (liveness only, and metrics when a
setting opens them), what the webhook listener exposes (the webhook alone), and the rules
``create_app`` enforces on routes so no write answers before it commits."""

from __future__ import annotations

from typing import Annotated

import pytest
from builders.served import served
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.testclient import TestClient

from api.app import check_routes, create_webhook_app
from api.auth import parse_tokens
from api.deps import ContextDep, LedgerDep, ledger
from berth import settings
from quota.core.errors import BerthError

TOKENS = parse_tokens("root-secret-token-1:admin,look-secret-token-2:read")
READ = {"authorization": "Bearer look-secret-token-2"}


@pytest.mark.db
@pytest.mark.parametrize(
    ("metrics_open", "headers", "status"),
    [
        pytest.param(False, {}, 401, id="metrics need a token when tokens are set"),
        pytest.param(False, READ, 200, id="a read token scrapes metrics"),
        pytest.param(True, {}, 200, id="BERTH_METRICS_OPEN lets a scraper in without one"),
    ],
)
def test_metrics_behind_tokens_unless_opened(
    db_url: str, metrics_open: bool, headers: dict[str, str], status: int
) -> None:
    with served(db_url, TOKENS, metrics_open=metrics_open) as api:
        response = api.get("/metrics", headers=headers)
        assert response.status_code == status, response.text
        assert api.get("/healthz").status_code == 200  # liveness never needs one
        if status == 200:
            assert "berth_pending_workloads" in response.text


@pytest.mark.db
def test_the_api_listener_does_not_serve_the_webhook(db_url: str) -> None:
    with served(db_url, TOKENS) as api:
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}
        assert api.post("/mutate/batch/v1/jobs", json=review).status_code in (401, 404)
        assert api.post("/mutate/batch/v1/jobs", json=review, headers=READ).status_code == 404


def test_the_webhook_listener_serves_the_webhook_and_liveness_only() -> None:
    app = create_webhook_app()
    paths = ["/healthz", "/mutate/batch/v1/jobs", "/mutate/workloads"]
    assert sorted(app.openapi()["paths"]) == paths
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/api/v1/workloads").status_code == 404


def _app_with(route: str) -> FastAPI:
    app = FastAPI()
    if route == "write through the read ledger":

        @app.post("/bad")
        def bad(ledger: LedgerDep) -> None:
            return None

    elif route == "async route on the ledger":

        @app.get("/bad")
        async def bad_async(ctx: ContextDep) -> None:
            return None

    elif route == "included router, async on the ledger":
        router = APIRouter(prefix="/api")

        @router.get("/bad")
        async def bad_included() -> None:
            return None

        # the ledger comes with the include, as the token checks do in api.app
        app.include_router(router, dependencies=[Depends(ledger)])

    else:

        @app.post("/good")
        def good(ctx: ContextDep) -> None:
            return None

        @app.get("/fine")
        async def fine(request: Request, body: Annotated[bytes, Depends(lambda: b"")]) -> None:
            return None

    return app


@pytest.mark.parametrize(
    ("route", "refused"),
    [
        pytest.param("write through the read ledger", "a write must open its transaction", id="a write may not commit after answering"),
        pytest.param("async route on the ledger", "must be a plain def", id="no ledger I/O on the event loop"),
        pytest.param("included router, async on the ledger", "must be a plain def", id="routes of included routers are checked too, with the include's dependencies"),
        pytest.param("sound routes", None, id="a sync write and an async route without the ledger pass"),
    ],
)
def test_create_app_refuses_routes_that_break_the_transaction_rules(route: str, refused: str | None) -> None:
    app = _app_with(route)
    if refused is None:
        check_routes(app)
    else:
        with pytest.raises(RuntimeError, match=refused):
            check_routes(app)


@pytest.mark.parametrize(
    ("env", "field"),
    [
        pytest.param({"BERTH_DB_STATEMENT_TIMEOUT": "soon"}, "BERTH_DB_STATEMENT_TIMEOUT", id="timeout not a number"),
        pytest.param({"BERTH_DB_STATEMENT_TIMEOUT": "0"}, "BERTH_DB_STATEMENT_TIMEOUT", id="timeout of zero"),
        pytest.param({"BERTH_LEADER_LEASE_SECONDS": "-3"}, "BERTH_LEADER_LEASE_SECONDS", id="negative lease"),
        pytest.param({"BERTH_METRICS_OPEN": "maybe"}, "BERTH_METRICS_OPEN", id="open is true or false"),
    ],
)
def test_bad_settings_name_the_variable(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], field: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(BerthError) as refused:
        settings.load()
    assert refused.value.field == field


def test_settings_carry_the_timeouts_the_lease_and_the_metrics_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BERTH_DB_STATEMENT_TIMEOUT", "12.5")
    monkeypatch.setenv("BERTH_LEADER_LEASE_SECONDS", "9")
    monkeypatch.setenv("BERTH_METRICS_OPEN", "true")
    loaded = settings.load()
    assert (loaded.database.connection.statement_seconds, loaded.loop.lease_seconds, loaded.http.metrics_open) == (12.5, 9.0, True)
