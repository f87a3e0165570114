"""What one ``POST /api/v1/simulate`` may cost, and the errors past it (PURE).

A scenario's cost grows with its steps, its workloads and, above all, their product: every
step of the answer lists every workload created so far. Unbounded, a 5,000-workload,
200-step scenario answered 426 MB and took the server from 220 MB to 2.2 GB. Measured on
the development machine, 1,000 workloads over 20 steps answer 9 MB in under a second of
simulation; the defaults below keep an answer within a few MB and a few seconds.

``check_size`` refuses a parsed scenario over the caps before anything runs; the
simulator counts engine cycles against ``max_cycles`` and asks a ``keep_going`` callback
between cycles, which the edge answers from its clock (the time limit: nothing here reads
one); the JSON renderer stops at ``max_result_bytes``. ``berth simulate`` on the command
line runs without these limits (it has only the input bounds every reader has).
"""

from __future__ import annotations

from dataclasses import dataclass

from admission.simulate.scenario import WORKLOAD_KINDS, Scenario
from quota.core.errors import BerthError

LOCAL = "or run berth simulate on the command line, which has no such limit"


@dataclass(frozen=True, slots=True)
class SimulationLimits:
    """The caps of the REST simulator; ``time_limit`` and ``concurrency`` are settings."""

    max_steps: int = 1_000
    max_workloads: int = 2_000  # created over the whole scenario
    max_workload_rows: int = 20_000  # workloads listed, summed over the steps
    max_objects: int = 1_000  # quota objects and Nodes, initial and applied by steps
    max_cycles: int = 10_000  # engine cycles over the whole run
    max_result_bytes: int = 8 * 1024 * 1024
    time_limit: float = 10.0  # seconds, parsing included
    concurrency: int = 2  # simulations running at once; more are refused (503)


class ScenarioTooLarge(BerthError):
    """A scenario over one of the caps; the message names it, its size and the limit."""

    status = 413
    code = "ScenarioTooLarge"


class ResultTooLarge(BerthError):
    status = 413
    code = "ResultTooLarge"


class SimulationStopped(BerthError):
    """The edge's ``keep_going`` said stop (its time limit passed) between two cycles."""

    status = 422
    code = "SimulationTooLong"


def check_size(scenario: Scenario, limits: SimulationLimits) -> None:
    """``ScenarioTooLarge`` for the first cap the scenario is over."""
    steps = scenario.steps
    workloads = sum(len(step.create) for step in steps)
    objects = len(scenario.objects) + sum(len(step.apply) for step in steps)
    rows = alive = 0
    for step in steps:
        gone = sum(1 for ref in step.delete if ref.kind in WORKLOAD_KINDS)
        alive += len(step.create) - gone
        rows += alive  # each step lists every workload created and not deleted
    for what, field, size, limit in (
        ("steps", "steps", len(steps), limits.max_steps),
        ("workloads", "steps[].create", workloads, limits.max_workloads),
        ("objects", "objects", objects, limits.max_objects),
        (
            "workload rows in its answer (each step lists every workload created so far)",
            "steps",
            rows,
            limits.max_workload_rows,
        ),
    ):
        if size > limit:
            raise ScenarioTooLarge(
                f"the scenario has {size:,} {what}; POST /api/v1/simulate takes at most "
                f"{limit:,}: split it, {LOCAL}",
                field=field,
            )


def too_many_cycles(limit: int, at: str) -> ScenarioTooLarge:
    return ScenarioTooLarge(
        f"the simulation needed more than {limit:,} engine cycles (the limit) by virtual time "
        f"{at}: shorten the scenario, {LOCAL}",
        field="steps",
    )


def result_too_large(limit: int, step: int, steps: int) -> ResultTooLarge:
    return ResultTooLarge(
        f"the answer passes {limit:,} bytes (the limit) at step {step} of {steps}: "
        f"simulate fewer steps or workloads, {LOCAL}",
        field="steps",
    )
