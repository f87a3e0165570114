"""``POST /api/v1/simulate`` reads ``config.waitForPodsReady`` and ``podsReady`` events as
``berth simulate`` does: the same answer for the same scenario file."""

from __future__ import annotations

import contextlib
import io
import json

import httpx
import pytest
from builders.paths import SCENARIOS

from berth.cli.simulate import run

pytestmark = pytest.mark.db

SCENARIO = SCENARIOS / "pods-ready-timeout.yaml"


def test_rest_and_cli_agree_on_a_pods_ready_scenario(api: httpx.Client) -> None:
    response = api.post("/api/v1/simulate", content=SCENARIO.read_text(),
                        headers={"Content-Type": "application/yaml"})
    assert response.status_code == 200, response.text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run(str(SCENARIO), "json") == 0
    assert response.json() == json.loads(out.getvalue())
    last = response.json()["steps"][-1]["workloads"]["team/stuck"]
    assert (last["state"], last["reason"]["details"]) == (
        "Deactivated", {"reason": "WorkloadRequeuingLimitExceeded"})


def test_a_bad_pods_ready_config_is_a_422_naming_the_field(api: httpx.Client) -> None:
    text = SCENARIO.read_text().replace("timeout: 5m", "timeout: soon")
    response = api.post("/api/v1/simulate", content=text,
                        headers={"Content-Type": "application/yaml"})
    assert response.status_code == 422, response.text
    assert "config.waitForPodsReady.timeout" in response.text
