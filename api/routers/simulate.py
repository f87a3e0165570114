"""``POST /api/v1/simulate``: the what-if of ``berth simulate`` over REST; nothing is written.

A simulation is CPU-bound pure code, so it runs in a worker thread, never on the event
loop that serves ``/healthz`` and the admission loop. What it may cost is bounded
(``admission.simulate_limits``): a scenario over a cap is refused before it runs, the
engine's cycles are counted, the time limit is a deadline the simulator checks between
cycles (so the thread, and the CPU it burns, stops: nothing runs on after the answer), the
answer is cut off at its size cap, and at most ``concurrency`` simulations run at once;
one more is refused at once with 503 and ``Retry-After``, not queued.
"""

from __future__ import annotations

import math
import threading
import time

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.concurrency import run_in_threadpool

from admission.simulate.limits import SimulationLimits, SimulationStopped, check_size
from admission.simulate.output import render_compact
from admission.simulate.run import simulate
from admission.simulate.scenario import parse_scenario
from api.schemas.errors import error_responses
from api.schemas.scenario import SimulationOut, scenario_body
from quota.core.errors import BerthError

router = APIRouter(prefix="/api/v1", tags=["simulate"])


class SimulatorBusy(BerthError):
    status = 503
    code = "SimulatorBusy"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class SimulationGate:
    """The app's simulation limits and the slots of the simulations running now."""

    def __init__(self, limits: SimulationLimits) -> None:
        self.limits = limits
        self._slots = threading.BoundedSemaphore(limits.concurrency)

    def enter(self) -> None:
        """Take a slot, or ``SimulatorBusy`` when every slot is taken."""
        if not self._slots.acquire(blocking=False):
            raise SimulatorBusy(
                f"{self.limits.concurrency} simulations are running (the limit); "
                "try again when one has finished",
                retry_after=max(1, math.ceil(self.limits.time_limit)),
            )

    def leave(self) -> None:
        self._slots.release()


def install(app: FastAPI, limits: SimulationLimits) -> None:
    """Give the app its simulation limits (``berth serve`` takes them from the settings)."""
    app.state.berth_simulations = SimulationGate(limits)


@router.post(
    "/simulate",
    response_class=Response,
    openapi_extra={"requestBody": scenario_body()},
    responses={
        200: {"model": SimulationOut, "description": "every step's workloads, preemptions and "
              "ClusterQueue usage"},
        **error_responses(
            413, 422, 503,
            notes={
                413: "PayloadTooLarge (over 1 MiB), ScenarioTooLarge (over a cap: steps, "
                "workloads, objects) or ResultTooLarge (the answer would be over its cap)",
                422: "InvalidInput naming the object and field, or SimulationTooLong (past "
                "the time limit)",
                503: "SimulatorBusy: every simulation slot is taken; try again after "
                "Retry-After seconds",
            },
            headers={503: {"Retry-After": "seconds until a slot is likely free"}},
        ),
    },
)  # fmt: skip
async def run_scenario(request: Request) -> Response:
    """Run a scenario through the admission engine on a virtual clock; the steps' outcomes.

    Beyond the schema, a 422 names what only the whole scenario shows: steps out of time
    order, a finish, delete or checkpoint naming a workload that does not exist at that
    step, a name created twice, and each object's own cross-field checks (as apply)."""
    gate: SimulationGate = request.app.state.berth_simulations
    gate.enter()
    try:
        deadline = time.monotonic() + gate.limits.time_limit
        text = (await request.body()).decode("utf-8", errors="replace")
        # anyio waits for the thread even when the request is cancelled, so the slot is
        # given back only once the simulation has stopped.
        body = await run_in_threadpool(_run, text, gate.limits, deadline)
    finally:
        gate.leave()
    return Response(body, media_type="application/json")


def _run(text: str, limits: SimulationLimits, deadline: float) -> bytes:
    def keep_going() -> bool:
        return time.monotonic() < deadline

    scenario = parse_scenario(text, "request")
    check_size(scenario, limits)
    try:
        result = simulate(scenario, cycle_budget=limits.max_cycles, keep_going=keep_going)
    except SimulationStopped as exc:
        raise SimulationStopped(
            f"the simulation ran past its time limit of {limits.time_limit:g} s and was "
            f"{exc.message}: shorten the scenario, or run berth simulate on the command line"
        ) from exc
    return render_compact(result, max_bytes=limits.max_result_bytes)
