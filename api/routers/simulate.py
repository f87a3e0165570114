"""``POST /api/v1/simulate``: the what-if of ``berth simulate`` over REST; nothing is written."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool

from admission.scenario import parse_scenario
from admission.simulate import simulate
from admission.simulate_output import to_dict

router = APIRouter(prefix="/api/v1", tags=["simulate"])


@router.post(
    "/simulate",
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "a scenario (spec/scenario.md): objects, then timed steps",
            "content": {
                "application/yaml": {"schema": {"type": "string"}},
                "application/json": {"schema": {"type": "object"}},
            },
        }
    },
)
async def run_scenario(request: Request) -> dict[str, Any]:
    """Run a scenario through the admission engine on a virtual clock; the steps' outcomes."""
    text = (await request.body()).decode("utf-8", errors="replace")
    # The engine is CPU-bound: keep it off the event loop so other requests still answer.
    return await run_in_threadpool(_run, text)


def _run(text: str) -> dict[str, Any]:
    return to_dict(simulate(parse_scenario(text, "request")))
