"""``POST /api/v1/simulate`` takes a scenario's ``config`` block: the fair-sharing scenarios
answer over real HTTP what ``berth simulate`` prints, and a wrong field is a 422 naming it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from builders.paths import SCENARIOS
from builders.reads import serve

from admission.simulate.output import to_dict
from admission.simulate.run import simulate
from admission.simulate.scenario import parse_scenario

pytestmark = pytest.mark.db


@pytest.fixture
def api(db_url: str) -> Iterator[httpx.Client]:
    with serve(db_url) as client:
        yield client


@pytest.mark.parametrize("name", [
    pytest.param("fair-sharing-strategies", id="both preemption strategies"),
    pytest.param("admission-fair-sharing", id="admission fair sharing"),
    pytest.param("fair-sharing-memory", id="fair sharing with memory"),
    pytest.param("min-runtime", id="minimum runtime before preemption"),
])  # fmt: skip
def test_the_rest_simulation_decides_as_berth_simulate(api: httpx.Client, name: str) -> None:
    text = (SCENARIOS / f"{name}.yaml").read_text()
    response = api.post("/api/v1/simulate", content=text,
                        headers={"Content-Type": "application/yaml"})
    assert response.status_code == 200, response.text
    assert response.json() == to_dict(simulate(parse_scenario(text, "request")))


def test_a_wrong_config_field_is_a_422_naming_it(api: httpx.Client) -> None:
    text = "config:\n  fairSharing: {enable: true, preemptionStrategies: [Sometimes]}\nsteps: []\n"
    response = api.post("/api/v1/simulate", content=text,
                        headers={"Content-Type": "application/yaml"})
    assert response.status_code == 422, response.text
    assert "config.fairSharing.preemptionStrategies" in response.text
    assert "unknown strategy 'Sometimes'" in response.text
