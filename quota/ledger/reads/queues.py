"""Live status of ClusterQueues and cohorts: quota, usage, borrowing and lending per flavor
and resource, pending and admitted counts, pending counts per primary reason (read-only).

Usage comes from the open usage intervals (what admitted work holds now), summed in SQL,
and is laid over the cohort tree arithmetic of ``quota.tree``; only the quota pools the
asked-for queues belong to are loaded, so one queue's status does not read the world.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from quota.core.model import ClusterQueue, Cohort, ResourceGroup
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import HOLDS_QUOTA_SQL, WorkloadState
from quota.ledger.errors import translated
from quota.ledger.objects import KINDS, read_groups

_QUEUES = KINDS["ClusterQueue"]
_COHORTS = KINDS["Cohort"]
_RESERVED = str(WorkloadState.QUOTA_RESERVED)


@dataclass(frozen=True, slots=True)
class ResourceFigures:
    """One (flavor, resource) of a queue or cohort; milli-units; ``None`` limit: unlimited."""

    flavor: str
    resource: str
    nominal: int = 0
    borrowing_limit: int | None = None
    lending_limit: int | None = None
    used: int = 0
    borrowed: int = 0  # used above nominal: taken from the cohort
    lent: int = 0  # of its unused nominal, what other queues of the cohort use now


@dataclass(frozen=True, slots=True)
class QueueStatus:
    name: str
    cohort: str | None
    resources: tuple[ResourceFigures, ...]
    pending: int = 0
    reserving: int = 0  # holding quota: QuotaReserved, Admitted or Evicting
    admitted: int = 0  # fully admitted: Admitted or Evicting
    pending_by_reason: Mapping[str, int] = field(default_factory=dict)
    spec: ClusterQueue | None = None  # the stored object the figures belong to


@dataclass(frozen=True, slots=True)
class CohortStatus:
    name: str
    parent: str | None
    cohorts: tuple[str, ...]  # every cohort below it
    cluster_queues: tuple[str, ...]  # every ClusterQueue below it
    resources: tuple[ResourceFigures, ...]
    pending: int = 0
    reserving: int = 0
    admitted: int = 0
    pending_by_reason: Mapping[str, int] = field(default_factory=dict)


@translated
def queue_statuses(session: Session, names: Sequence[str] | None = None) -> list[QueueStatus]:
    """Status of the named ClusterQueues (every one when ``None``), in name order; names
    that do not exist are left out."""
    cohorts = load_cohorts(session)
    queues = load_queues(session, names, cohorts)
    wanted = sorted(queues) if names is None else sorted(n for n in set(names) if n in queues)
    return _statuses(session, queues, cohorts, wanted)


@translated
def cohort_status(session: Session, name: str) -> CohortStatus | None:
    """The cohort's subtree with its queues' figures summed; ``None`` when no cohort of that
    name exists (declared, or named by a ClusterQueue)."""
    cohorts = load_cohorts(session)
    below = _subtree(name, cohorts)
    queues = load_queues(session, None, cohorts, in_cohorts=below)
    members = sorted(q.name for q in queues.values() if q.cohort in below)
    if name not in cohorts and not members:
        return None
    statuses = _statuses(session, queues, cohorts, members)
    own: dict[FlavorResource, int] = {}
    for cohort_name in below:
        cohort = cohorts.get(cohort_name)
        for fr, nominal in _nominals(cohort.resource_groups if cohort else ()).items():
            own[fr] = own.get(fr, 0) + nominal
    spec = cohorts.get(name)
    return CohortStatus(
        name=name,
        parent=spec.parent if spec else None,
        cohorts=tuple(sorted(below - {name})),
        cluster_queues=tuple(members),
        resources=sum_figures([s.resources for s in statuses], own),
        pending=sum(s.pending for s in statuses),
        reserving=sum(s.reserving for s in statuses),
        admitted=sum(s.admitted for s in statuses),
        pending_by_reason=_sum_counts(s.pending_by_reason for s in statuses),
    )


def sum_figures(
    parts: Iterable[Iterable[ResourceFigures]], extra_nominal: Mapping[FlavorResource, int]
) -> tuple[ResourceFigures, ...]:
    """Figures added up per (flavor, resource); an unlimited limit stays unlimited."""
    totals: dict[FlavorResource, ResourceFigures] = {
        fr: ResourceFigures(fr[0], fr[1], nominal=amount, borrowing_limit=0, lending_limit=0)
        for fr, amount in extra_nominal.items()
    }
    for figures in parts:
        for f in figures:
            key = (f.flavor, f.resource)
            t = totals.get(key, ResourceFigures(f.flavor, f.resource, 0, 0, 0))
            totals[key] = ResourceFigures(
                f.flavor,
                f.resource,
                nominal=t.nominal + f.nominal,
                borrowing_limit=_add_limit(t.borrowing_limit, f.borrowing_limit),
                lending_limit=_add_limit(t.lending_limit, f.lending_limit),
                used=t.used + f.used,
                borrowed=t.borrowed + f.borrowed,
                lent=t.lent + f.lent,
            )
    return tuple(totals[k] for k in sorted(totals))


def attribute_lending(borrowed: int, lenders: Mapping[str, int]) -> dict[str, int]:
    """Split ``borrowed`` over ``lenders`` (name → idle quota it may lend) pro rata, whole
    milli-units, remainders to the first names; never more than a lender has."""
    # The ledger does not record whose quota a borrower uses (neither does Kueue): a
    # proportional split is the one that does not depend on the order queues were admitted.
    capacity = sum(lenders.values())
    if borrowed <= 0 or capacity <= 0:
        return {name: 0 for name in lenders}
    borrowed = min(borrowed, capacity)
    shares = {name: borrowed * idle // capacity for name, idle in lenders.items()}
    left = borrowed - sum(shares.values())
    for name in sorted(lenders):
        if left == 0:
            break
        if shares[name] < lenders[name]:
            shares[name] += 1
            left -= 1
    return shares


# --- loading ---------------------------------------------------------------------------


def load_cohorts(session: Session) -> dict[str, Cohort]:
    rows = session.execute(select(_COHORTS.table)).mappings().all()
    groups = read_groups(session, "Cohort") if rows else {}
    return {r["name"]: _COHORTS.from_row(r, groups.get(r["name"], ())) for r in rows}


def load_queues(
    session: Session,
    names: Sequence[str] | None,
    cohorts: Mapping[str, Cohort],
    *,
    in_cohorts: set[str] | None = None,
) -> dict[str, ClusterQueue]:
    """The named queues plus every queue sharing a quota pool with one of them."""
    table = _QUEUES.table
    if names is None and in_cohorts is None:
        query = select(table)
    else:
        pools: set[str] = set(in_cohorts or ())
        if names is not None:
            direct = session.execute(
                select(table.c.cohort).where(table.c.name.in_(list(names)))
            ).scalars()
            for cohort in direct:
                if cohort is not None:
                    pools |= _subtree(_root(cohort, cohorts), cohorts)
        else:
            for cohort in list(pools):
                pools |= _subtree(_root(cohort, cohorts), cohorts)
        query = select(table).where(
            table.c.name.in_(list(names or ())) | table.c.cohort.in_(sorted(pools))
        )
    rows = session.execute(query).mappings().all()
    groups = read_groups(session, "ClusterQueue", [r["name"] for r in rows]) if rows else {}
    return {r["name"]: _QUEUES.from_row(r, groups.get(r["name"], ())) for r in rows}


def _usage(session: Session, names: Sequence[str]) -> dict[str, dict[FlavorResource, int]]:
    rows = session.execute(
        text(
            "SELECT cluster_queue, flavor, resource, sum(amount) FROM usage_intervals "
            "WHERE ended_at IS NULL AND cluster_queue = ANY(CAST(:names AS text[])) "
            "GROUP BY cluster_queue, flavor, resource"
        ),
        {"names": list(names)},
    ).all()
    out: dict[str, dict[FlavorResource, int]] = {}
    for queue, flavor, resource, amount in rows:
        out.setdefault(queue, {})[(flavor, resource)] = int(amount)
    return out


def counts_sql(*, named: bool = True) -> str:
    """The one query of pending and holding counts per ClusterQueue, as rows
    ``('pending', queue, primary code, NULL, count)`` (a workload not evaluated yet counts
    as PendingEvaluation), ``('admitted', queue, NULL, NULL, count)`` (holding quota and
    admitted) and ``('reserving', queue, NULL, NULL, count)`` (holding quota only, its
    admission checks not all Ready yet);
    for the queues in ``:names``, or every queue when not ``named``. Pending rows carry no
    ClusterQueue: they are reached through their LocalQueues (one index range each) rather
    than through a join the planner would run as a scan. Five columns, so that a read can
    take it into a ``UNION ALL`` with other figures (``queue_cache``)."""
    listed = "= ANY(CAST(:names AS text[]))" if named else "IS NOT NULL"
    return f"""
    SELECT 'pending', q, COALESCE(code, 'PendingEvaluation'), NULL, count(*)::numeric FROM (
        SELECT lq.cluster_queue AS q, w.reason_code AS code
        FROM local_queues AS lq
        JOIN workloads AS w ON w.namespace = lq.namespace AND w.queue_name = lq.name
        WHERE w.state = 'Pending' AND w.cluster_queue IS NULL AND lq.cluster_queue {listed}
        UNION ALL
        SELECT w.cluster_queue, w.reason_code FROM workloads AS w
        WHERE w.state = 'Pending' AND w.cluster_queue {listed}
    ) AS p GROUP BY 2, 3
    UNION ALL
    SELECT CASE WHEN state = '{_RESERVED}' THEN 'reserving' ELSE 'admitted' END,
        cluster_queue, NULL, NULL, count(*)::numeric FROM workloads
    WHERE state = ANY(CAST(:holding AS text[])) AND cluster_queue {listed}
    GROUP BY 1, 2
    """


_COUNTS = {named: text(counts_sql(named=named)) for named in (True, False)}


@translated
def queue_counts(session: Session, names: Sequence[str] | None = None) -> Counts:
    """Pending counts per ClusterQueue and primary reason, reserving and admitted counts
    per ClusterQueue: of ``names``, or of every ClusterQueue that has workloads when
    ``None``."""
    params: dict[str, object] = {"holding": list(HOLDS_QUOTA_SQL)}
    if names is not None:
        params["names"] = list(names)
    rows = session.execute(_COUNTS[names is not None], params).all()
    return counts_of(rows)


@dataclass(frozen=True, slots=True)
class Counts:
    by_reason: dict[str, dict[str, int]]  # queue -> primary code -> pending
    reserving: dict[str, int]  # queue -> holding quota (admitted ones included)
    admitted: dict[str, int]  # queue -> fully admitted


def counts_of(rows: Iterable[Sequence[Any]]) -> Counts:
    """``counts_sql`` rows as pending per queue and reason, reserving and admitted per
    queue."""
    out = Counts({}, {}, {})
    for kind, queue, code, _, count in rows:
        if kind == "pending":
            out.by_reason.setdefault(queue, {})[code] = int(count)
            continue
        out.reserving[queue] = out.reserving.get(queue, 0) + int(count)
        if kind == "admitted":
            out.admitted[queue] = int(count)
    return out


# --- arithmetic ------------------------------------------------------------------------


def _statuses(
    session: Session,
    queues: Mapping[str, ClusterQueue],
    cohorts: Mapping[str, Cohort],
    wanted: Sequence[str],
) -> list[QueueStatus]:
    if not wanted:
        return []
    usage = _usage(session, sorted(queues))
    return statuses_of(queues, cohorts, wanted, usage, queue_counts(session, wanted))


def statuses_of(
    queues: Mapping[str, ClusterQueue],
    cohorts: Mapping[str, Cohort],
    wanted: Sequence[str],
    usage: Mapping[str, Mapping[FlavorResource, int]],
    counts: Counts,
) -> list[QueueStatus]:
    """The status of each ``wanted`` queue from what ``queues`` (its pools) hold now and
    its pending counts per reason, reserving and admitted counts."""
    tree = QuotaTree(queues.values(), cohorts)
    for name, held in usage.items():
        if tree.has_queue(name):
            tree.add(name, held)
    lent = _lending(tree, queues, cohorts)
    out = []
    for name in wanted:
        figures = []
        for fr in tree.flavor_resources(name):
            limits = tree.limits(name, fr)
            figures.append(
                ResourceFigures(
                    flavor=fr[0],
                    resource=fr[1],
                    nominal=limits.nominal,
                    borrowing_limit=limits.borrowing_limit,
                    lending_limit=limits.lending_limit,
                    used=tree.usage(name, fr),
                    borrowed=tree.borrowed(name, fr),
                    lent=lent.get((name, fr), 0),
                )
            )
        reasons = counts.by_reason.get(name, {})
        out.append(
            QueueStatus(
                name=name,
                cohort=queues[name].cohort,
                resources=tuple(figures),
                pending=sum(reasons.values()),
                reserving=counts.reserving.get(name, 0),
                admitted=counts.admitted.get(name, 0),
                pending_by_reason=dict(sorted(reasons.items())),
                spec=queues[name],
            )
        )
    return out


def pool_of(
    names: Iterable[str], queues: Mapping[str, ClusterQueue], cohorts: Mapping[str, Cohort]
) -> dict[str, ClusterQueue]:
    """The named queues plus every queue sharing a quota pool with one of them."""
    named = [n for n in names if n in queues]
    pools: set[str] = set()
    for name in named:
        cohort = queues[name].cohort
        if cohort is not None:
            pools |= _subtree(_root(cohort, cohorts), cohorts)
    return {n: q for n, q in queues.items() if n in named or q.cohort in pools}


def _lending(
    tree: QuotaTree, queues: Mapping[str, ClusterQueue], cohorts: Mapping[str, Cohort]
) -> dict[tuple[str, FlavorResource], int]:
    """Per (queue, flavor/resource), how much of its idle quota its pool's borrowers use."""
    pools: dict[str, list[str]] = {}
    for name in queues:
        if tree.in_cohort(name):
            pools.setdefault(tree.root(name), []).append(name)
    out: dict[tuple[str, FlavorResource], int] = {}
    for members in pools.values():
        cohort_own: dict[FlavorResource, int] = {}
        for cohort_name in _subtree(_root(queues[members[0]].cohort or "", cohorts), cohorts):
            cohort = cohorts.get(cohort_name)
            for fr, amount in _nominals(cohort.resource_groups if cohort else ()).items():
                cohort_own[fr] = cohort_own.get(fr, 0) + amount
        frs = {fr for name in members for fr in tree.flavor_resources(name)}
        for fr in sorted(frs):
            borrowed = sum(tree.borrowed(name, fr) for name in members) - cohort_own.get(fr, 0)
            lenders = {}
            for name in members:
                limits = tree.limits(name, fr)
                idle = max(0, limits.nominal - tree.usage(name, fr))
                if limits.lending_limit is not None:
                    idle = min(idle, limits.lending_limit)
                if idle:
                    lenders[name] = idle
            for name, share in attribute_lending(borrowed, lenders).items():
                if share:
                    out[(name, fr)] = share
    return out


def _nominals(groups: Iterable[ResourceGroup]) -> dict[FlavorResource, int]:
    out: dict[FlavorResource, int] = {}
    for group in groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                out[(flavor.flavor, quota.resource)] = quota.nominal
    return out


def _root(name: str, cohorts: Mapping[str, Cohort]) -> str:
    seen = {name}
    while (cohort := cohorts.get(name)) is not None and cohort.parent is not None:
        if cohort.parent in seen:
            break  # a parent cycle: the engine reports it; here it just ends the climb
        name = cohort.parent
        seen.add(name)
    return name


def _subtree(name: str, cohorts: Mapping[str, Cohort]) -> set[str]:
    below = {name}
    changed = True
    while changed:
        changed = False
        for cohort in cohorts.values():
            if cohort.parent in below and cohort.name not in below:
                below.add(cohort.name)
                changed = True
    return below


def _add_limit(total: int | None, part: int | None) -> int | None:
    return None if total is None or part is None else total + part


def _sum_counts(parts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in parts:
        for code, count in part.items():
            out[code] = out.get(code, 0) + count
    return dict(sorted(out.items()))


@translated
def queue_names(session: Session, *, after: str | None, limit: int) -> list[str]:
    """ClusterQueue names in order, after ``after``, at most ``limit``."""
    table = _QUEUES.table
    query = select(table.c.name).order_by(table.c.name).limit(limit)
    if after is not None:
        query = query.where(table.c.name > after)
    return list(session.execute(query).scalars())
