"""``berth why NS/NAME``, ``berth history NS/NAME`` and ``berth top``, read commands over
the REST API printed for people, and the workload table ``berth get workloads`` prints."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from berth.cli.client import EXIT_INVALID, guarded
from berth.cli.history import history_lines
from berth.cli.tables import columns
from quota.core.quantity import QuantityError, parse_quantity
from quota.core.timeline import format_duration

BAR = 24
# The numbers worth printing from a reason's details, in reading order.
NUMBERS = (
    "requested",
    "available",
    "shortfall",
    "nominal",
    "used",
    "borrowingLimit",
    "borrowable",
    "free",
    "capacity",
    "maximum",
    "largestDomainFree",
)


def why(args: argparse.Namespace) -> int:
    """Explain why a workload waits, what would help, and when it may start."""
    key = _key(args.workload)
    if key is None:
        return EXIT_INVALID
    namespace, name = key
    return guarded(
        args,
        lambda c: sys.stdout.write(
            explain(c.workload(namespace, name), c.history(namespace, name))
        ),
    )


def history(args: argparse.Namespace) -> int:
    """A workload's history alone: the part ``why`` ends with."""
    key = _key(args.workload)
    if key is None:
        return EXIT_INVALID
    namespace, name = key
    return guarded(
        args,
        lambda c: sys.stdout.write("\n".join(history_lines(c.history(namespace, name))) + "\n"),
    )


def top(args: argparse.Namespace) -> int:
    """ClusterQueue usage bars per flavor and resource, with pending counts."""
    return guarded(
        args, lambda c: sys.stdout.write(usage_bars(list(c.pages("/api/v1/status/clusterqueues"))))
    )


def _key(workload: str) -> tuple[str, str] | None:
    namespace, _, name = workload.partition("/")
    if not namespace or not name:
        print(f"{workload!r}: expected NAMESPACE/NAME", file=sys.stderr)
        return None
    return namespace, name


def explain(workload: Mapping[str, Any], history: Mapping[str, Any]) -> str:
    """The ``berth why`` text for a workload and its history."""
    key = f"{workload['namespace']}/{workload['name']}"
    queue = workload.get("clusterQueue")
    where = f"in ClusterQueue {queue}" if queue else "in no ClusterQueue"
    lines = [
        f"{key} is {workload['state']} {where} "
        f"(LocalQueue {workload['queueName']}, priority {workload['priority']})"
    ]
    if workload["state"] != "Pending":
        admission = workload.get("admission")
        if admission:
            for p in admission["podSetAssignments"]:
                flavors = ", ".join(f"{r} in {f}" for r, f in p["flavors"].items())
                lines.append(f"  pod set {p['name']}: {p['count']} pods, {flavors}")
    reasons = workload.get("reasons") or []
    for index, reason in enumerate(reasons):
        lines.append(f"{'Why' if index == 0 else 'Also'}: {reason['code']}: {reason['message']}")
        numbers = _numbers(reason.get("details") or {})
        if numbers:
            lines.append(f"  {numbers}")
    for hint in workload.get("hints") or []:
        lines.append(f"Hint: {hint}")
    if workload.get("position") is not None:
        lines.append(
            f"Position {workload['position']} {where} "
            f"({workload.get('aheadCount') or 0} ahead)"
        )
        for ahead in workload.get("ahead") or []:
            lines.append(
                f"  {ahead['position']}. {ahead['namespace']}/{ahead['name']} priority "
                f"{ahead['priority']} {_requests(ahead['requests'])} "
                f"{ahead.get('reason') or ''}".rstrip()
            )
    estimate = workload.get("estimatedStart")
    if estimate:
        at = datetime.fromisoformat(estimate["at"])
        wait = format_duration((at - datetime.now(UTC)).total_seconds())
        lines.append(
            f"Estimated start: in about {wait} ({at:%Y-%m-%d %H:%M} UTC): {estimate['basis']}"
        )
    elif workload["state"] == "Pending" and not queue:
        lines.append("Estimated start: unknown (it is in no ClusterQueue)")
    elif workload["state"] == "Pending":
        lines.append(
            "Estimated start: unknown (no run history for this ClusterQueue yet, "
            "or waiting alone will not let it start)"
        )
    lines.extend(history_lines(history))
    return "\n".join(lines) + "\n"


def workload_table(items: Sequence[Mapping[str, Any]], *, wide: bool = False) -> str:
    """Workloads as aligned columns, in ClusterQueue then queue order."""
    header = ["NAMESPACE", "NAME", "STATE", "CLUSTERQUEUE", "POS", "REASON"]
    if wide:
        header += ["PRIORITY", "REQUESTS", "AGE", "MESSAGE"]
    now = datetime.now(UTC)
    ordered = sorted(
        items,
        key=lambda w: (
            w.get("clusterQueue") or "",
            w.get("position") or 1 << 62,
            w["namespace"],
            w["name"],
        ),
    )
    rows = []
    for w in ordered:
        row = [
            w["namespace"],
            w["name"],
            w["state"],
            w.get("clusterQueue") or "-",
            str(w["position"]) if w.get("position") is not None else "-",
            w.get("reason") or "-",
        ]
        if wide:
            age = (now - datetime.fromisoformat(w["createdAt"])).total_seconds()
            row += [
                str(w["priority"]),
                _requests(w.get("requests") or {}),
                format_duration(age),
                w.get("message") or "",
            ]
        rows.append(row)
    if not rows:
        return "No workloads found.\n"
    return columns(header, rows)


def usage_bars(statuses: Iterable[Mapping[str, Any]]) -> str:
    """One bar per ClusterQueue, flavor and resource: ``#`` used within nominal, ``+``
    borrowed above it, ``.`` idle nominal; then the figures and the pending reasons."""
    rows = []
    for item in statuses:
        status = item["status"]
        pending = ", ".join(f"{code} {n}" for code, n in status["pendingByReason"].items())
        counts = f"admitted {status['admittedWorkloads']}, pending {status['pendingWorkloads']}"
        if pending:
            counts += f" ({pending})"
        for flavor in status["flavors"]:
            for r in flavor["resources"]:
                rows.append(
                    [
                        item["name"],
                        flavor["name"],
                        r["name"],
                        _bar(r["used"], r["nominal"], r["borrowed"]),
                        f"{r['used']}/{r['nominal']}",
                        f"borrowed {r['borrowed']} lent {r['lent']}",
                        counts,
                    ]
                )
    if not rows:
        return "No ClusterQueues found.\n"
    return columns(["CLUSTERQUEUE", "FLAVOR", "RESOURCE", "USAGE", "USED", "", ""], rows)


def _bar(used: str, nominal: str, borrowed: str) -> str:
    try:
        u, n, b = (parse_quantity(v) for v in (used, nominal, borrowed))
    except QuantityError:
        return "?" * BAR
    scale = max(u, n, 1)
    own = round((u - b) * BAR / scale)
    over = round(b * BAR / scale)
    return "[" + "#" * own + "+" * over + "." * max(0, BAR - own - over) + "]"


def _numbers(details: Mapping[str, Any]) -> str:
    found = [f"{k} {details[k]}" for k in NUMBERS if details.get(k) is not None]
    holders = details.get("holders")
    if holders:
        found.append(f"held by {', '.join(str(h) for h in holders)}")
    return ", ".join(found)


def _requests(requests: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in requests.items()) or "-"
