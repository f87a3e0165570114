"""A bounded schemathesis run over /openapi.json against a local server: no 5xx anywhere.

Each operation gets at most 50 generated requests; failures of every operation are
gathered so one run reports them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from builders.reads import World, pool, serve
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

pytestmark = [pytest.mark.db, pytest.mark.slow]
EXAMPLES = 50


@pytest.fixture
def base_url(db_url: str) -> Iterator[str]:
    world = World(db_url)
    world.apply(pool(("team-a", 4), ("team-b", 4)))
    world.submit("a1", 4, "team-a")
    world.submit("a2", 4, "team-a")
    world.cycle()
    world.close()
    with serve(db_url) as client:
        yield str(client.base_url)


def test_no_operation_answers_a_server_error(base_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15, "the OpenAPI document lost operations"
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def exercise(case: schemathesis.Case) -> None:
            case.call_and_validate(checks=[not_a_server_error])

        try:
            exercise()
        except Exception as exc:  # every operation's failure is reported, not just the first
            failures.append(f"{operation.label}: {str(exc)[:1500]}")
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
            response = httpx.get(url, params={name: "a\x00b"})
            assert response.status_code == 422, (path, name, response.status_code)
            assert name in response.json()["error"]["field"], (path, name)
            checked.append((path, name))
    assert len(checked) >= 10, checked
