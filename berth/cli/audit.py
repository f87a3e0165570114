"""``berth audit``: who changed what and when, newest first, over REST (``--server``, and
``$BERTH_TOKEN`` with the admin role when the server has tokens)."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from berth.cli.client import BerthClient, add_server_flag, guarded
from berth.cli.tables import columns
from quota.core.checkpoints import format_time

PATH = "/api/v1/audit"
MAX_PAGE = 1000  # the API's largest page
DEFAULT_SHOWN = 100
VALUE_WIDTH = 40  # a changed value longer than this is cut short in the table
HEADER = ("AT", "ACTOR", "ACTION", "KIND", "NAME", "VERSION", "CHANGE")


def add_parser(commands: Any) -> argparse.ArgumentParser:
    audit: argparse.ArgumentParser = commands.add_parser(
        "audit", help="who changed what and when, newest first (admin token)"
    )
    audit.add_argument("--kind", help="one kind, e.g. ClusterQueue, cq, nodes, workloads")
    audit.add_argument("--name", help="one object or workload name (in every namespace)")
    audit.add_argument(
        "--since",
        metavar="TIME",
        help="entries from an RFC 3339 time on (2026-11-30T21:00:00Z), or from so long "
        "ago (90s, 15m, 1h30m)",
    )
    audit.add_argument(
        "--limit",
        type=_positive,
        default=DEFAULT_SHOWN,
        metavar="N",
        help=f"show at most N entries, the newest (default {DEFAULT_SHOWN})",
    )
    audit.add_argument("-o", "--output", choices=["table", "json"], default="table")
    add_server_flag(audit)
    return audit


def run(args: argparse.Namespace) -> int:
    params: dict[str, str | int] = {"limit": min(args.limit, MAX_PAGE)}
    for flag in ("kind", "name"):
        if getattr(args, flag, None):
            params[flag] = getattr(args, flag)
    if getattr(args, "since", None):
        params["since"] = since(args.since, datetime.now(UTC))
    render = (lambda e: json.dumps(e, indent=2) + "\n") if args.output == "json" else table
    return guarded(
        args, lambda client: sys.stdout.write(render(_entries(client, params, args.limit)))
    )


def since(text: str, now: datetime) -> str:
    """``--since`` as the API takes it: a duration becomes the time that long before
    ``now``; anything else goes as given (the server says what is wrong with it)."""
    # Imported here: the scenario module costs every `berth` command ~0.1 s to load.
    from admission.simulate.scenario import DurationError, parse_duration

    try:
        return format_time(now - parse_duration(text.strip()))
    except DurationError:
        return text


def table(entries: Sequence[Mapping[str, Any]]) -> str:
    """One line per entry, newest first: when, who, what, and what it changed."""
    if not entries:
        return "No audit entries found.\n"
    rows = [
        [
            format_time(datetime.fromisoformat(e["at"]).replace(microsecond=0)),
            e["actor"],
            e["action"],
            e["kind"],
            e["name"] if e.get("namespace") is None else f"{e['namespace']}/{e['name']}",
            "-" if e.get("version") is None else str(e["version"]),
            change(e),
        ]
        for e in entries
    ]
    return columns(HEADER, rows)


def change(entry: Mapping[str, Any]) -> str:
    """``created``, ``deleted``, or each changed field: a plain value as ``field: old -> new``
    (``field: new`` when it was not recorded before), a structure by its name alone."""
    if entry["action"] != "update":
        return f"{entry['action']}d"
    before, after = entry.get("before") or {}, entry.get("after") or {}
    parts = []
    for field in entry.get("changed") or ():
        old, new = before.get(field), after.get(field)
        if not (_plain(old) and _plain(new)):
            parts.append(field)
        elif field not in before:
            parts.append(f"{field}: {_shown(new)}")
        else:
            parts.append(f"{field}: {_shown(old)} -> {_shown(new)}")
    return ", ".join(parts) or "-"


def _entries(client: BerthClient, params: Mapping[str, str | int], shown: int) -> list[Any]:
    """The newest ``shown`` entries (the pages after them are never asked for)."""
    return list(itertools.islice(client.pages(PATH, params), shown))


def _plain(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _shown(value: object) -> str:
    text = "-" if value is None else str(value)
    return text if len(text) <= VALUE_WIDTH else text[: VALUE_WIDTH - 1] + "…"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value
