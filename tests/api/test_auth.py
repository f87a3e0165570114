"""Bearer tokens: 401 without or with a bad token, 403 for reads trying to write and for
tenants outside their namespaces; oversize and malformed bodies; nothing written on error."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
import sqlalchemy as sa
from builders.manifests import job
from builders.reads import World, pool, serve

from api.auth import Grant, Role, check_bind, parse_tokens
from berth import settings
from berth.cli.client import ApiError, BerthClient

pytestmark = pytest.mark.db

A, B, C = "d3b07384d113edec49eaa623", "c157a79031e1c40f85931829", "6b86b273ff34fce19d6b804e"
TOKENS = parse_tokens("root-secret-token-1:admin,look-secret-token-2:read,tenant-secret-token-3:read:team-a")
FLAVOR = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a100}\n"


@pytest.fixture
def world(db_url: str) -> Iterator[World]:
    w = World(db_url)
    w.apply(pool(("team-a", 4), ("team-b", 4)))
    w.submit("mine", 8, "team-a")
    w.submit("theirs", 2, "team-b")
    w.cycle()
    yield w
    w.close()


@pytest.fixture
def api(world: World) -> Iterator[httpx.Client]:
    with serve(world.url, TOKENS) as client:
        yield client


def _count(url: str, table: str) -> int:
    engine = sa.create_engine(url, poolclass=sa.NullPool)
    with engine.connect() as connection:
        found = connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()
    engine.dispose()
    return int(found)


@pytest.mark.parametrize(
    ("token", "method", "path", "status"),
    [
        pytest.param(None, "GET", "/api/v1/workloads", 401, id="no token"),
        pytest.param("guess", "GET", "/api/v1/clusterqueues/team-a", 401, id="a wrong token"),
        pytest.param("look-secret-token-2", "GET", "/api/v1/workloads/team-b/theirs", 200, id="read token reads"),
        pytest.param("look-secret-token-2", "POST", "/api/v1/apply", 403, id="read token cannot apply"),
        pytest.param("look-secret-token-2", "POST", "/api/v1/workloads/team-a/mine/finish", 403, id="read token cannot finish"),
        pytest.param("look-secret-token-2", "POST", "/api/v1/simulate", 403, id="read token cannot simulate"),
        pytest.param("look-secret-token-2", "POST", "/api/v1/workloads/team-a/mine/checkpointed", 403, id="read token cannot report a checkpoint"),
        pytest.param("look-secret-token-2", "GET", "/api/v1/borrowing", 200, id="read token reads who owes whom"),
        pytest.param("root-secret-token-1", "POST", "/api/v1/apply", 200, id="admin token applies"),
        pytest.param("root-secret-token-1", "GET", "/api/v1/resourceflavors", 200, id="admin token reads"),
        pytest.param("tenant-secret-token-3", "GET", "/api/v1/workloads/team-a/mine", 200, id="tenant reads its namespace"),
        pytest.param("tenant-secret-token-3", "GET", "/api/v1/workloads/team-b/theirs", 403, id="tenant cannot read another namespace"),
        pytest.param("tenant-secret-token-3", "GET", "/api/v1/workloads/team-b/theirs/history", 403, id="nor its history"),
        pytest.param("tenant-secret-token-3", "GET", "/api/v1/workloads?namespace=team-b", 403, id="nor list it"),
        pytest.param(None, "GET", "/healthz", 200, id="liveness needs no token"),
    ],
)
@pytest.mark.parametrize(
    "carrier",
    [
        pytest.param(lambda t: {"authorization": f"Bearer {t}"}, id="as a bearer token"),
        pytest.param(lambda t: {"x-berth-token": t}, id="in X-Berth-Token"),
    ],
)
def test_access(api: httpx.Client, carrier: Callable[[str], dict[str, str]], token: str | None, method: str, path: str, status: int) -> None:
    """Either header grants exactly the same."""
    headers = carrier(token) if token else {}
    response = api.request(method, path, headers=headers, content=FLAVOR if method == "POST" else None)
    assert response.status_code == status, response.text
    if status >= 400:
        assert response.json()["error"]["code"] == {401: "Unauthorized", 403: "Forbidden"}[status]


def test_401_carries_the_bearer_challenge(api: httpx.Client) -> None:
    assert api.get("/api/v1/workloads").headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    ("authorization", "berth_token", "status", "message"),
    [
        pytest.param("Bearer root-secret-token-1", "root-secret-token-1", 200, None, id="the same token in both headers is fine"),
        pytest.param("Bearer look-secret-token-2", "root-secret-token-1", 401, "differ: send one", id="different tokens in the two headers are refused"),
        pytest.param("Bearer guess", "root-secret-token-1", 401, "differ: send one", id="a wrong bearer token does not fall back to the other header"),
        pytest.param("Basic dXNlcjpwYXNz", "root-secret-token-1", 200, None, id="another scheme's Authorization leaves X-Berth-Token to decide"),
    ],
)
def test_both_token_headers(api: httpx.Client, authorization: str, berth_token: str, status: int, message: str | None) -> None:
    headers = {"authorization": authorization, "x-berth-token": berth_token}
    response = api.get("/api/v1/resourceflavors", headers=headers)
    assert response.status_code == status, response.text
    if message:
        assert message in response.json()["error"]["message"]


def test_refused_mutation_writes_nothing(world: World, api: httpx.Client) -> None:
    before = _count(world.url, "resource_flavors")
    api.post("/api/v1/apply", content=FLAVOR, headers={"authorization": "Bearer look-secret-token-2"})
    assert _count(world.url, "resource_flavors") == before


def test_tenant_lists_only_its_namespaces(api: httpx.Client) -> None:
    body = api.get("/api/v1/workloads", headers={"authorization": "Bearer tenant-secret-token-3"}).json()
    assert [item["name"] for item in body["items"]] == ["mine"]


def test_tenant_sees_work_ahead_but_not_other_tenants_names(db_url: str) -> None:
    w = World(db_url)
    w.apply(pool(("team-a", 4), ("team-b", 4), cohort=None))
    w.apply(pool(("shared", 4), cohort=None).replace("namespace: shared", "namespace: team-b"))
    w.apply(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
        "metadata: {name: main, namespace: team-a}\nspec: {clusterQueue: shared}\n"
    )
    for name, namespace in (("hog", "team-b"), ("first", "team-b"), ("mine", "team-a")):
        w.submit(name, 4, namespace)
        w.advance(seconds=1)  # FIFO: submission order decides
    w.cycle()
    with serve(db_url, TOKENS) as api:
        body = api.get("/api/v1/workloads/team-a/mine", headers={"authorization": "Bearer tenant-secret-token-3"}).json()
    print("BODY", body)
    w.close()
    assert [(a["namespace"], a["name"], a["requests"]) for a in body["ahead"]] == [
        ("(another namespace)", "(another namespace)", {"nvidia.com/gpu": "4"})
    ]


def test_oversize_body_is_413_and_writes_nothing(world: World, api: httpx.Client) -> None:
    before = _count(world.url, "audit_log")
    body = FLAVOR + "#" + "x" * (1024 * 1024) + "\n"
    response = api.post("/api/v1/apply", content=body, headers={"authorization": "Bearer root-secret-token-1"})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PayloadTooLarge"
    assert _count(world.url, "audit_log") == before


def test_streamed_oversize_body_is_413(api: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield FLAVOR.encode()
        for _ in range(5):
            yield b"#" + b"x" * 300_000 + b"\n"

    response = api.post("/api/v1/apply", content=chunks(), headers={"authorization": "Bearer root-secret-token-1"})
    assert response.status_code == 413


def test_malformed_workload_is_422_naming_the_field_and_writes_nothing(world: World, api: httpx.Client) -> None:
    before = _count(world.url, "workloads")
    doc = job("broken", 1)
    del doc["metadata"]["name"]
    response = api.post("/api/v1/workloads", json=doc, headers={"authorization": "Bearer root-secret-token-1"})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "metadata.name"
    assert _count(world.url, "workloads") == before


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(f"{A}:admin", (Grant(A, Role.ADMIN),), id="one admin token"),
        pytest.param(f" {A}:admin , {B}:read ", (Grant(A, Role.ADMIN), Grant(B, Role.READ)), id="spaces around entries"),
        pytest.param(f"{C}:read:x|y", (Grant(C, Role.READ, frozenset({"x", "y"})),), id="tenant token with namespaces"),
        pytest.param("", (), id="none configured"),
    ],
)
def test_parse_tokens(text: str, expected: tuple[Grant, ...]) -> None:
    assert parse_tokens(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(f"{A}:root", "role must be admin or read", id="unknown role"),
        pytest.param("justatoken", "expected token:role", id="no role"),
        pytest.param(f"{A}:admin:ns", "only read tokens", id="namespaced admin"),
        pytest.param(f"{A}:read:", "at least one namespace", id="empty namespace list"),
        pytest.param("a:admin", "at least 16 characters, this one has 1", id="a one-character token"),
        pytest.param("0123456789abcde:admin", "at least 16 characters, this one has 15", id="one character short"),
        pytest.param("aaaaaaaaaaaaaaaaaaaaaaaa:admin", "at least 6 different characters", id="one character repeated"),
        pytest.param("abababababababababab:read", "at least 6 different characters", id="two characters alternating"),
        pytest.param(f"{A}:admin,{A}:read", "the same token is given twice", id="one token with two roles"),
    ],
)
def test_parse_tokens_refuses_bad_entries(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as refused:
        parse_tokens(text)
    # The refusal names the entry, never the secret itself.
    token = text.split(":")[0]
    assert len(token) < 8 or token not in str(refused.value)


@pytest.mark.parametrize(
    ("host", "tokens", "starts"),
    [
        pytest.param("127.0.0.1", (), "no API tokens configured", id="loopback without tokens: warn"),
        pytest.param("::1", (), "no API tokens configured", id="IPv6 loopback without tokens: warn"),
        pytest.param("0.0.0.0", (), "refusing to listen on 0.0.0.0", id="all interfaces without tokens: refuse"),
        pytest.param("0.0.0.0", TOKENS, None, id="all interfaces with tokens: fine"),
    ],
)
def test_check_bind(host: str, tokens: tuple[Grant, ...], starts: str | None) -> None:
    said = check_bind(host, tokens)
    assert (said is None) if starts is None else (said is not None and said.startswith(starts))


@pytest.mark.parametrize(
    ("token", "status"),
    [
        pytest.param("look-secret-token-2", 200, id="the CLI client sends BERTH_TOKEN as a bearer token"),
        pytest.param("guess", 401, id="the CLI client reports a refused token"),
    ],
)
def test_cli_client_uses_the_token_from_the_environment(
    api: httpx.Client, monkeypatch: pytest.MonkeyPatch, token: str, status: int
) -> None:
    monkeypatch.setenv("BERTH_TOKEN", token)
    with BerthClient(settings.load({"server": str(api.base_url)}).client) as client:
        try:
            got = 200 if client.workload("team-a", "mine")["name"] == "mine" else 0
        except ApiError as exc:
            got = exc.status
    assert got == status
