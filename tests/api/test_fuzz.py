"""A bounded schemathesis run over /openapi.json against a local server: no 5xx anywhere.

Each operation gets at most 50 generated requests; failures of every operation are
gathered so one run reports them all.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from read_builders import World, pool, serve
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
