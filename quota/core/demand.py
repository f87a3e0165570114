"""What waiting work asks of the cluster, for an autoscaler (PURE, standard library only).

Two kinds of demand, kept apart because only one of them is a reason to add nodes:

- **capacity demand**: the quota admits the work but the nodes cannot hold it
  (``InsufficientCapacity``, ``TopologyPlacementFailed``, ``UnhealthyCapacity``), or its
  quota is reserved and an admission check, typically capacity provisioning, has not
  passed (``WaitingForAdmissionCheck``). More (or repaired) nodes would let it start.
- **quota-blocked demand**: the quota does not admit it (``WaitingForQuota``,
  ``ExceedsMaxQuota``). More nodes would not help; more quota (or less work) would.

Each workload counts once, by its primary reason, for the flavor and resource that reason
names (a quota reservation: every flavor and resource it holds), with the topology level
it must be placed within when the reason names one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from quota.core.quantity import QuantityError, parse_quantity

CAPACITY = frozenset({"InsufficientCapacity", "TopologyPlacementFailed", "UnhealthyCapacity",
                      "WaitingForAdmissionCheck"})
QUOTA_BLOCKED = frozenset({"WaitingForQuota", "ExceedsMaxQuota"})
WAITING_CODES = tuple(sorted(CAPACITY | QUOTA_BLOCKED))


@dataclass(frozen=True, slots=True)
class Waiter:
    """One waiting workload as demand reads it: its primary reason and what it holds."""

    code: str
    details: Mapping[str, Any]
    held: Mapping[tuple[str, str], int] = field(default_factory=dict)  # reserved quota


@dataclass(slots=True)
class DemandLine:
    """Demand for one (flavor, resource, topology level): milli-units and workloads."""

    flavor: str
    resource: str
    level: str | None
    amount: int = 0
    workloads: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Demand:
    capacity: tuple[DemandLine, ...] = ()
    quota_blocked: tuple[DemandLine, ...] = ()


def demand(waiters: Iterable[Waiter]) -> Demand:
    """Capacity and quota-blocked demand of ``waiters``, each list in (flavor, resource,
    level) order."""
    lines: dict[tuple[bool, str, str, str], DemandLine] = {}
    for waiter in waiters:
        if waiter.code not in CAPACITY and waiter.code not in QUOTA_BLOCKED:
            continue
        for flavor, resource, amount, level in _asks(waiter):
            key = (waiter.code in CAPACITY, flavor, resource, level or "")
            line = lines.setdefault(key, DemandLine(flavor, resource, level))
            line.amount += amount
            line.workloads += 1
            line.reasons[waiter.code] = line.reasons.get(waiter.code, 0) + 1
    ordered = sorted(lines.items())
    return Demand(
        capacity=tuple(line for (cap, *_), line in ordered if cap),
        quota_blocked=tuple(line for (cap, *_), line in ordered if not cap),
    )


def _asks(waiter: Waiter) -> list[tuple[str, str, int, str | None]]:
    if waiter.code == "WaitingForAdmissionCheck":
        return [(f, r, amount, None) for (f, r), amount in sorted(waiter.held.items())]
    details = waiter.details
    flavor, resource = details.get("flavor"), details.get("resource")
    amount = details.get("shortfall" if waiter.code == "UnhealthyCapacity" else "requested")
    if not isinstance(flavor, str) or not isinstance(resource, str):
        return []
    try:
        milli = parse_quantity(amount) if amount is not None else 0
    except QuantityError:
        milli = 0
    level = details.get("level")
    return [(flavor, resource, milli, level if isinstance(level, str) else None)]
