"""What ``POST /api/v1/simulate`` may cost, over real HTTP: a scenario over a cap is a 413
before it runs, a run past the time limit is stopped and answers 422, an answer over its
size cap is a 413, one simulation past the concurrency bound a 503 with ``Retry-After``,
and ``/healthz`` answers while a long simulation runs."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from builders.inputs import JSON, job, scenario
from builders.reads import serve

from admission.simulate.limits import SimulationLimits

pytestmark = pytest.mark.db

WAIT = 120.0  # liveness: seconds a long simulation may take to be stopped and answer


def one_at_a_time(workloads: int = 2000) -> str:
    """Within every size cap, yet tens of seconds of CPU: one GPU, so each workload's
    completion is an instant of its own whose cycles weigh every workload still queued."""
    steps: list[dict[str, Any]] = [
        {"at": "0s", "create": [job(f"j{i}", runtime="1s") for i in range(workloads)]}, {"at": "10h"},
    ]
    return json.dumps(scenario(*steps, gpus=1))


SMALL_SCENARIO = json.dumps(scenario({"at": "0s", "create": [job()]}))


# --- what a simulation may cost ------------------------------------------------------------


def test_a_scenario_over_the_work_cap_is_a_413_naming_the_limit(api: httpx.Client) -> None:
    # 250 workloads listed at each of 100 steps: 25,000 rows (the cap is 20,000).
    steps = [{"at": "0s", "create": [job(f"j{i}") for i in range(250)]}]
    steps += [{"at": f"{i}m"} for i in range(1, 100)]
    response = api.post("/api/v1/simulate", json=scenario(*steps))
    assert response.status_code == 413, response.text
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("ScenarioTooLarge", "steps")
    assert "25,000 workload rows" in error["message"] and "at most 20,000" in error["message"]


@pytest.mark.parametrize(
    ("limits", "body", "status", "code", "words"),
    [
        pytest.param(SimulationLimits(max_result_bytes=4096), json.dumps(scenario({"at": "0s", "create": [job(f"j{i}") for i in range(40)]})),
                     413, "ResultTooLarge", "passes 4,096 bytes (the limit) at step 0 of 1", id="an answer over the size cap"),
        pytest.param(SimulationLimits(max_cycles=3), json.dumps(scenario(*({"at": f"{i}m"} for i in range(5)))),
                     413, "ScenarioTooLarge", "more than 3 engine cycles", id="more engine cycles than the cap"),
        pytest.param(SimulationLimits(time_limit=0.5), one_at_a_time(),
                     422, "SimulationTooLong", "ran past its time limit of 0.5 s", id="a simulation past the time limit"),
    ],
)
def test_a_simulation_over_a_limit_is_stopped_and_answers_the_error(
    db_url: str, limits: SimulationLimits, body: str, status: int, code: str, words: str
) -> None:
    with serve(db_url, simulation=limits) as client:
        response = client.post("/api/v1/simulate", content=body, headers=JSON, timeout=WAIT)
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert error["code"] == code and words in error["message"], error


@contextmanager
def holding_the_slot(client: httpx.Client) -> Iterator[tuple[Future[httpx.Response], httpx.Response]]:
    """A simulation the time limit will stop, in flight on another thread and holding the
    only slot: small ones are sent until one is refused. (The long one may itself arrive
    while a small one holds the slot; it is then sent again.)"""
    body = one_at_a_time()
    stop = threading.Event()
    timer = threading.Timer(WAIT, stop.set)  # liveness: it must be running by then
    timer.start()
    with ThreadPoolExecutor(1) as pool:
        try:
            running = pool.submit(client.post, "/api/v1/simulate", content=body, headers=JSON, timeout=WAIT)
            while not stop.is_set():
                if running.done():
                    assert running.result().status_code == 503, running.result().text
                    running = pool.submit(client.post, "/api/v1/simulate", content=body, headers=JSON, timeout=WAIT)
                probe = client.post("/api/v1/simulate", content=SMALL_SCENARIO, headers=JSON)
                if probe.status_code != 200:
                    break
                stop.wait(0.05)  # the long one has not taken its slot yet
            else:
                raise AssertionError("the long simulation never held its slot")
        finally:
            timer.cancel()
        yield running, probe


def test_one_simulation_past_the_concurrency_bound_is_refused_with_retry_after(db_url: str) -> None:
    with serve(db_url, simulation=SimulationLimits(concurrency=1, time_limit=5)) as client:
        with holding_the_slot(client) as (running, refused):
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "SimulatorBusy"
            assert refused.headers["Retry-After"] == "5"
            assert running.result().json()["error"]["code"] == "SimulationTooLong"
        # The slot is given back once the stopped simulation has answered.
        assert client.post("/api/v1/simulate", content=SMALL_SCENARIO, headers=JSON).status_code == 200


def test_healthz_answers_while_a_long_simulation_runs(db_url: str) -> None:
    limits = SimulationLimits(concurrency=1, time_limit=10)
    with serve(db_url, simulation=limits) as client, holding_the_slot(client) as (running, _):
        for _ in range(3):
            assert client.get("/healthz", timeout=5).status_code == 200
        assert running.running()  # the three answers came while it ran
        assert running.result().json()["error"]["code"] == "SimulationTooLong"
