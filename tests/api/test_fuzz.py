"""A bounded schemathesis run over /openapi.json against a real server with tokens, every
check on: each status answered is declared, each body matches its schema, what the schema
allows is accepted and what it does not is refused, a request without a token is refused
where the document says one is needed. The same contract ``.ci/run`` checks with the CLI;
``schemathesis.toml`` names the few operations where a schema-valid request may be a 422.

Each operation gets a bounded number of valid and of invalid requests, derandomized: a red
run is red again on a rerun. (The CLI step adds schemathesis' coverage and stateful phases.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import schemathesis
from builders.reads import World, pool, serve
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.config import SchemathesisConfig
from schemathesis.generation import GenerationMode
from schemathesis.schemas import BaseSchema

from api.auth import parse_tokens

pytestmark = [pytest.mark.db, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = 25
TOKENS = parse_tokens("fuzz-admin-token-4f1c:admin,fuzz-read-token-9b2e:read")
ADMIN = {"Authorization": f"Bearer {TOKENS[0].token}"}


@pytest.fixture
def base_url(db_url: str) -> Iterator[str]:
    world = World(db_url)
    world.apply(pool(("team-a", 4), ("team-b", 4)))
    world.submit("a1", 4, "team-a")
    world.submit("a2", 4, "team-a")
    world.cycle()
    world.close()
    with serve(db_url, TOKENS) as client:
        yield str(client.base_url).rstrip("/")


@pytest.fixture
def contract(base_url: str) -> BaseSchema:
    """The served OpenAPI document, configured as the CLI step is (schemathesis.toml)."""
    config = SchemathesisConfig.from_path(str(REPO / "schemathesis.toml"))
    return schemathesis.openapi.from_url(f"{base_url}/openapi.json", config=config)


def test_every_operation_keeps_its_contract(contract: BaseSchema) -> None:
    operations = [result.ok() for result in contract.get_all_operations()]
    assert len(operations) >= 25, "the OpenAPI document lost operations"
    failures: list[str] = []
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(mode, headers=ADMIN))
            @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))  # fmt: skip
            def exercise(case: schemathesis.Case) -> None:
                # No checks argument: every check the configuration enables, all of them.
                case.call_and_validate(headers=ADMIN)

            try:
                exercise()
            except Unsatisfiable:  # no parameter and no body: no request breaks the schema
                assert mode is GenerationMode.NEGATIVE, operation.label
            except Exception as exc:  # every operation's failure is reported, not the first
                failures.append(f"{operation.label} ({mode}): {str(exc)[:2000]}")
    assert not failures, "\n\n".join(failures)


def test_a_nul_in_any_query_parameter_is_refused_naming_it(base_url: str) -> None:
    """Every GET operation's query parameters, from the OpenAPI document: a NUL byte is a
    422 that names the parameter, never a 500 from PostgreSQL (a router without the guard
    once let one through)."""
    document = httpx.get(f"{base_url}/openapi.json").json()
    checked = []
    for path, operations in document["paths"].items():
        get = operations.get("get")
        if get is None:
            continue
        url = base_url + re.sub(r"\{[^}]+\}", "x", path)
        for parameter in get.get("parameters", []):
            if parameter["in"] != "query":
                continue
            name = parameter["name"]
            response = httpx.get(url, params={name: "a\x00b"}, headers=ADMIN)
            assert response.status_code == 422, (path, name, response.status_code)
            assert name in response.json()["error"]["field"], (path, name)
            checked.append((path, name))
    assert len(checked) >= 10, checked
