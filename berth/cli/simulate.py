"""``berth simulate FILE [--format json|table]``: read a scenario, run it, print the result."""

from __future__ import annotations

import sys

from admission.simulate.output import render_json, render_table
from admission.simulate.run import SimulationError, simulate
from admission.simulate.scenario import parse_scenario
from quota.core.errors import InvalidInput

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INVALID = 2
FORMATS = ("json", "table")


def run(path: str, fmt: str) -> int:
    """Simulate the scenario at ``path`` ("-" is stdin); print JSON or a table; the exit code."""
    if fmt not in FORMATS:
        print(f"{path}: --format {fmt!r}: expected one of: {', '.join(FORMATS)}", file=sys.stderr)
        return EXIT_INVALID
    try:
        text = _read(path)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"{path}: cannot read: {_why(exc)}", file=sys.stderr)
        return EXIT_INVALID
    try:
        scenario = parse_scenario(text, path)
        result = simulate(scenario)
    except InvalidInput as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return EXIT_INVALID
    except SimulationError as exc:
        print(f"{path}: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    sys.stdout.write(render_json(result) if fmt == "json" else render_table(result))
    return EXIT_OK


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _why(exc: OSError | UnicodeDecodeError) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
