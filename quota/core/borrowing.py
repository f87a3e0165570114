"""Who owes whom (PURE): borrowed resource-seconds per lender/borrower pair, from the
recorded usage intervals and the quota in force.

At every instant between two interval boundaries, within one cohort tree and one (flavor,
resource): a ClusterQueue using more than its nominal quota borrows the excess; the
lenders are the ClusterQueues of the same tree with unused nominal quota (at most their
``lendingLimit``) and the cohorts' own quota. Each borrower's excess is attributed to the
lenders in proportion to what each leaves unused, so the pairs of a borrower add up to
exactly what it borrowed. Quota is taken as it is now: a window from before a quota change
is attributed with today's quotas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from fractions import Fraction
from itertools import pairwise

from quota.core.model import ClusterQueue, Cohort, ResourceGroup

Slot = tuple[str, str]  # (flavor, resource)
_MICROS = 1_000_000
_MICRO = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Held:
    """One usage interval, as the attribution needs it."""

    cluster_queue: str
    flavor: str
    resource: str
    amount: int  # milli-units
    start: datetime
    end: datetime | None  # None: still held


@dataclass(frozen=True, slots=True)
class Debt:
    cohort: str  # the root of the cohort tree both belong to
    borrower: str  # a ClusterQueue
    lender: str  # a ClusterQueue, or "cohort:<name>" for a cohort's own quota
    flavor: str
    resource: str
    milli_seconds: int  # borrowed milli-units × seconds, rounded to the nearest


def _root(name: str | None, cohorts: Mapping[str, Cohort]) -> str | None:
    seen: set[str] = set()
    while name is not None and name in cohorts and cohorts[name].parent is not None:
        if name in seen:
            return None  # a cycle: such queues are inactive, nothing is lent
        seen.add(name)
        name = cohorts[name].parent
    return name


def _quotas(groups: Iterable[ResourceGroup]) -> dict[Slot, tuple[int, int | None]]:
    out: dict[Slot, tuple[int, int | None]] = {}
    for group in groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                out[(flavor.flavor, quota.resource)] = (quota.nominal, quota.lending_limit)
    return out


def owed(
    held: Sequence[Held],
    queues: Mapping[str, ClusterQueue],
    cohorts: Mapping[str, Cohort],
    start: datetime,
    end: datetime,
) -> list[Debt]:
    """Borrowed milli-unit-seconds per (cohort, borrower, lender, flavor, resource) within
    [start, end), largest first."""
    roots = {name: _root(cq.cohort, cohorts) for name, cq in queues.items()}
    nominal = {name: _quotas(cq.resource_groups) for name, cq in queues.items()}
    own = {name: _quotas(c.resource_groups) for name, c in cohorts.items()}
    events: dict[datetime, list[tuple[str, Slot, int]]] = {}
    for h in held:
        if roots.get(h.cluster_queue) is None:
            continue  # outside any cohort: it can neither borrow nor lend
        begin, finish = max(h.start, start), min(h.end or end, end)
        if begin >= finish:
            continue
        slot = (h.flavor, h.resource)
        events.setdefault(begin, []).append((h.cluster_queue, slot, h.amount))
        events.setdefault(finish, []).append((h.cluster_queue, slot, -h.amount))
    usage: dict[tuple[str, Slot], int] = {}
    totals: dict[tuple[str, str, str, Slot], Fraction] = {}
    times = sorted(events)
    for here, after in pairwise(times):
        for cq, slot, delta in events[here]:
            usage[(cq, slot)] = usage.get((cq, slot), 0) + delta
        micros = (after - here) // _MICRO
        _attribute(usage, roots, nominal, own, cohorts, micros, totals)
    debts = [
        Debt(root, borrower, lender, slot[0], slot[1], round(amount / _MICROS))
        for (root, borrower, lender, slot), amount in totals.items()
    ]
    debts = [d for d in debts if d.milli_seconds > 0]
    debts.sort(key=lambda d: (-d.milli_seconds, d.cohort, d.borrower, d.lender, d.flavor,
                              d.resource))
    return debts


def _attribute(
    usage: Mapping[tuple[str, Slot], int],
    roots: Mapping[str, str | None],
    nominal: Mapping[str, Mapping[Slot, tuple[int, int | None]]],
    own: Mapping[str, Mapping[Slot, tuple[int, int | None]]],
    cohorts: Mapping[str, Cohort],
    micros: int,
    totals: dict[tuple[str, str, str, Slot], Fraction],
) -> None:
    """Add one constant stretch of ``micros`` microseconds to ``totals``."""
    borrowed: dict[tuple[str, Slot], dict[str, int]] = {}
    for (cq, slot), used in usage.items():
        quota = nominal[cq].get(slot, (0, None))[0]
        if used > quota:
            root = roots[cq]
            assert root is not None
            borrowed.setdefault((root, slot), {})[cq] = used - quota
    for (root, slot), borrowers in borrowed.items():
        lenders: dict[str, int] = {}
        for cq, quotas in nominal.items():
            if roots.get(cq) != root or slot not in quotas:
                continue
            quota, limit = quotas[slot]
            unused = quota - usage.get((cq, slot), 0)
            if limit is not None:
                unused = min(unused, limit)
            if unused > 0:
                lenders[cq] = unused
        for name, quotas in own.items():
            if slot in quotas and quotas[slot][0] > 0 and _root(name, cohorts) == root:
                lenders[f"cohort:{name}"] = quotas[slot][0]
        pool = sum(lenders.values())
        if pool <= 0:
            continue
        for borrower, amount in borrowers.items():
            for lender, unused in lenders.items():
                key = (root, borrower, lender, slot)
                share = Fraction(amount * unused * micros, pool)
                totals[key] = totals.get(key, Fraction(0)) + share


@dataclass(frozen=True, slots=True)
class Lent:
    """What one borrower holds of one lender's quota at an instant."""

    cohort: str
    borrower: str
    lender: str
    flavor: str
    resource: str
    amount: int  # milli-units, rounded to the nearest


def owed_now(
    held: Iterable[Held], queues: Mapping[str, ClusterQueue], cohorts: Mapping[str, Cohort]
) -> list[Lent]:
    """Borrowed milli-units per (cohort, borrower, lender, flavor, resource) at the instant
    ``held`` describes (the intervals still open), by the same attribution as ``owed``;
    largest first."""
    roots = {name: _root(cq.cohort, cohorts) for name, cq in queues.items()}
    nominal = {name: _quotas(cq.resource_groups) for name, cq in queues.items()}
    own = {name: _quotas(c.resource_groups) for name, c in cohorts.items()}
    usage: dict[tuple[str, Slot], int] = {}
    for h in held:
        if roots.get(h.cluster_queue) is not None:
            key = (h.cluster_queue, (h.flavor, h.resource))
            usage[key] = usage.get(key, 0) + h.amount
    totals: dict[tuple[str, str, str, Slot], Fraction] = {}
    # One "microsecond" of weight 1: each share is then the amount itself.
    _attribute(usage, roots, nominal, own, cohorts, 1, totals)
    lent = [
        Lent(root, borrower, lender, slot[0], slot[1], round(amount))
        for (root, borrower, lender, slot), amount in totals.items()
    ]
    lent = [x for x in lent if x.amount > 0]
    lent.sort(key=lambda x: (-x.amount, x.cohort, x.borrower, x.lender, x.flavor, x.resource))
    return lent
