"""The OpenAPI document is the REST contract: every operation declares its body and every
status it can answer, each error with the one error schema; and what the document says a
parameter or body is, the server holds to (over real HTTP and a real PostgreSQL).

The walk over ``app.openapi()`` fails for a new operation that declares no error answers or
takes a body of any shape; the schemathesis run (test_fuzz.py) checks the declarations
against what the server does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from builders.inputs import JSON
from builders.reads import World, berth_context, pool, serve

from api.app import create_app
from api.auth import parse_tokens

ERROR = {"$ref": "#/components/schemas/ErrorResponse"}
# Kueue's visibility API (api.routers.visibility) answers what its own routes refuse as
# Kubernetes does, with a Status, since Kueue's clients read that.
KUBE_STATUS = {"$ref": "#/components/schemas/KubeStatus"}
# Answers that are not REST resources: liveness, readiness (its 503 says why in its own
# shape), the dashboard page.
NOT_API = {("get", "/healthz"), ("get", "/readyz"), ("get", "/")}
TOKENS = parse_tokens("contract-admin-9f8e7d:admin,contract-read-1a2b3c:read")
BARE_SCHEMAS = ({}, {"type": "object"}, {"type": "string"})
# Reads answered from the replica's memory, never from the ledger: no 503 to declare.
NO_LEDGER = {("get", "/api/v1/leader")}
# Changes that take no body (what is sent is not read).
BODILESS = {("post", "/api/v1/workloads/{namespace}/{name}/finish")}


def document(tokens: tuple[Any, ...] = TOKENS) -> dict[str, Any]:
    engine: Any = None  # the document is built without touching the ledger
    return create_app(berth_context(engine, tokens)).openapi()


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, methods in doc["paths"].items():
        for method, operation in methods.items():
            yield method, path, operation


def resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_every_operation_declares_its_errors_with_the_error_schema() -> None:
    doc = document()
    checked = 0
    for method, path, operation in operations(doc):
        if (method, path) in NOT_API:
            continue
        errors = {status: answer for status, answer in operation["responses"].items()
                  if int(status) >= 400}  # fmt: skip
        assert errors, f"{method.upper()} {path} declares no error answers"
        for status, answer in errors.items():
            schema = answer.get("content", {}).get("application/json", {}).get("schema")
            kube = path.startswith("/apis/") and status in ("403", "404")
            assert schema == (KUBE_STATUS if kube else ERROR), f"{method.upper()} {path} {status}"
        expected = {"401", "422", "503"}  # the token, the parameter guards, the ledger
        if (method, path) in NO_LEDGER:
            expected -= {"503"}
        if method != "get":
            expected |= {"403"}  # changes need an admin token
        if "requestBody" in operation:
            expected |= {"413"}
        assert expected <= set(errors), f"{method.upper()} {path}: {sorted(errors)}"
        checked += 1
    assert checked >= 22


def test_every_body_has_a_real_schema_not_any_object_or_string() -> None:
    doc = document()
    bodies = 0
    for method, path, operation in operations(doc):
        if method not in ("post", "put", "patch") or (method, path) in BODILESS:
            continue
        assert "requestBody" in operation, f"{method.upper()} {path} declares no body"
        for media, content in operation["requestBody"]["content"].items():
            schema = resolve(doc, content["schema"])
            assert schema not in BARE_SCHEMAS, f"{method.upper()} {path} {media}: {schema}"
            assert schema.get("properties") or schema.get("anyOf"), (path, media, schema)
            bodies += 1
    assert bodies >= 8  # apply and submit, simulate: YAML and JSON; checkpointed, health


def test_every_success_answer_of_the_api_has_a_schema() -> None:
    doc = document()
    for method, path, operation in operations(doc):
        successes = [answer for status, answer in operation["responses"].items()
                     if status.startswith("2")]  # fmt: skip
        assert len(successes) == 1, (method, path)
        content = successes[0].get("content", {})
        assert content, f"{method.upper()} {path}: no content declared"
        for media, body in content.items():
            assert body.get("schema") not in (None, {}), f"{method.upper()} {path} {media}"


def test_the_bearer_scheme_is_declared_only_where_tokens_are_checked() -> None:
    secured, open_ = document(), document(())
    schemes = secured["components"]["securitySchemes"]
    assert schemes["bearer"]["scheme"] == "bearer"
    assert (schemes["berthToken"]["type"], schemes["berthToken"]["in"], schemes["berthToken"]["name"]) == ("apiKey", "header", "X-Berth-Token")
    # Either one: a list of requirements is alternatives.
    assert secured["paths"]["/api/v1/apply"]["post"]["security"] == [{"bearer": []}, {"berthToken": []}]
    assert "security" not in secured["paths"]["/healthz"]["get"]
    assert "securitySchemes" not in open_.get("components", {})
    assert not [path for _, path, op in operations(open_) if "security" in op]


def test_only_the_accepted_kinds_and_api_versions_are_declared() -> None:
    schemas = document()["components"]["schemas"]
    local_queue = schemas["LocalQueue"]["properties"]
    assert local_queue["apiVersion"]["enum"] == [
        "berth.dev/v1beta1", "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2",
    ]  # fmt: skip
    assert schemas["Namespace"]["properties"]["apiVersion"]["enum"] == ["v1"]
    assert schemas["Job"]["properties"]["apiVersion"]["const"] == "batch/v1"
    assert schemas["ObjectList"]["properties"]["kind"]["const"] == "List"
    for kind in ("Job", "Workload", "Node", "ClusterQueue"):
        assert {"apiVersion", "kind", "metadata"} <= set(schemas[kind]["required"]), kind
        assert schemas[kind]["properties"]["metadata"]["required"][0] == "name", kind


# --- what the document declares, the server holds to -------------------------------------

@pytest.fixture
def served(db_url: str) -> Iterator[httpx.Client]:
    world = World(db_url)
    world.apply(pool(("team-a", 4)))
    world.submit("a1", 4, "team-a")
    world.close()
    with serve(db_url) as client:
        yield client


@pytest.mark.db
@pytest.mark.parametrize(
    ("path", "query", "field"),
    [
        pytest.param("/api/v1/usage", {"to": "0.5"}, "to", id="a number is not a time (pydantic read it as a Unix timestamp)"),
        pytest.param("/api/v1/borrowing", {"to": "0.5"}, "to", id="borrowing: the same"),
        pytest.param("/api/v1/usage", {"from": "1700000000"}, "from", id="whole seconds since 1970"),
        pytest.param("/api/v1/usage", {"to": "2026-11-30"}, "to", id="a date without a time"),
        pytest.param("/api/v1/borrowing", {"from": "2026-11-30T21:00:00"}, "from", id="a time without a zone"),
        pytest.param("/api/v1/usage", {"to": "2026-11-30 21:00:00Z"}, "to", id="a space for the T"),
        pytest.param("/api/v1/borrowing", {"to": "2026-02-30T00:00:00Z"}, "to", id="a day the month does not have"),
        pytest.param("/api/v1/usage", {"from": "2026-11-30T21:00:00Z", "to": "2026-11-30T21:00:00Z"}, "from", id="from not before to (the rule the document states in words)"),
    ],
)
def test_query_times_are_rfc3339_or_a_422_naming_the_parameter(
    served: httpx.Client, path: str, query: dict[str, str], field: str
) -> None:
    response = served.get(path, params=query)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"].split(".")[-1] == field


@pytest.mark.db
@pytest.mark.parametrize(
    "query",
    [
        pytest.param({"from": "2026-11-30T21:00:00Z", "to": "2026-12-01T21:00:00.25+02:00"}, id="a fraction and an offset"),
        pytest.param({"to": "2026-11-30t21:00:00z"}, id="lower-case t and z"),
        pytest.param({"from": "0335-05-11T15:52:12-12:12", "to": "9999-12-31T23:59:59+23:59"}, id="the far ends of the calendar"),
    ],
)
def test_any_rfc3339_time_is_taken(served: httpx.Client, query: dict[str, str]) -> None:
    for path in ("/api/v1/usage", "/api/v1/borrowing"):
        response = served.get(path, params=query)
        assert response.status_code == 200, (path, response.text)


@pytest.mark.db
@pytest.mark.parametrize(
    ("method", "path", "body", "status", "field"),
    [
        pytest.param("POST", "/api/v1/nodes/n1/health", {"state": "Broken"}, 422, "state", id="a health state outside the enum"),
        pytest.param("POST", "/api/v1/nodes/n1/health", {"state": "Cordoned", "expectedState": "Fine"}, 422, "expectedState", id="an expected state outside the enum"),
        pytest.param("POST", "/api/v1/nodes/n1/health", {"state": "Cordoned", "reason": "XID 79"}, 422, "reason", id="a health field the schema does not declare is refused, not ignored"),
        pytest.param("POST", "/api/v1/nodes/n1/health", {"state": "Cordoned", "expected_state": "Healthy"}, 422, "expected_state", id="only the declared camelCase names"),
        pytest.param("POST", "/api/v1/workloads/team-a/a1/checkpointed", {"at": "2026-01-01T00:00:00Z", "where": "s3://x"}, 422, "where", id="a checkpoint field the schema does not declare"),
        pytest.param("POST", "/api/v1/workloads/team-a/a1/checkpointed", {"at": 1700000000}, 422, "at", id="a checkpoint time that is a number"),
        pytest.param("POST", "/api/v1/workloads/team-a/a1/checkpointed", {"at": "2026-01-01 00:00:00Z"}, 422, "at", id="a checkpoint time that is ISO 8601 but not RFC 3339"),
        pytest.param("POST", "/api/v1/workloads/team-a/a1/checkpointed", {"location": " "}, 422, "location", id="a blank checkpoint location"),
        pytest.param("GET", "/api/v1/workloads", None, 422, "cursor", id="a cursor outside the declared alphabet"),
        pytest.param("POST", "/api/v1/nodes/n1/health", b"\x05\xff", 422, None, id="a health move whose body is not JSON: a 422 as everywhere, not FastAPI's 400"),
    ],
)
def test_what_the_document_refuses_the_server_refuses_naming_the_field(
    served: httpx.Client, method: str, path: str, body: Any, status: int, field: str
) -> None:
    params = {"cursor": "not/a+cursor"} if field == "cursor" else None
    content = body if isinstance(body, bytes) else json.dumps(body) if body else None
    response = served.request(method, path, content=content, params=params, headers=JSON)
    assert response.status_code == status, response.text
    assert response.json()["error"].get("field", "").split(".")[-1] == (field or "")


@pytest.mark.db
@pytest.mark.parametrize(
    ("method", "path", "status", "allow"),
    [
        pytest.param("GET", "/api/v1/apply", 405, "POST", id="a GET of apply is a 405, not a kind named apply"),
        pytest.param("OPTIONS", "/api/v1/workloads", 405, "GET, POST", id="Allow lists the methods of every route at the path"),
        pytest.param("GET", "/api/v1/flavours", 404, None, id="no kind by that plural"),
    ],
)
def test_routes_that_do_not_exist_answer_in_the_error_shape(
    served: httpx.Client, method: str, path: str, status: int, allow: str | None
) -> None:
    response = served.request(method, path)
    assert response.status_code == status
    assert set(response.json()["error"]) == {"code", "message"}
    assert response.headers.get("allow") == allow
