"""Decayed usage from the usage intervals: what fair sharing with memory and admission fair
sharing read (read-only; the loop passes it to the pure engine).

The SQL is ``quota.core.fairness.decayed`` summed per group: each interval held ``amount``
from ``started_at`` to ``ended_at`` (or now) contributes
``amount × (e^(−λ·age of its end) − e^(−λ·age of its start))``, λ = ln 2 / half-life,
plus the entry penalty ``α × amount × e^(−λ·age of its start)``. Intervals that ended more
than 40 half-lives ago weigh less than 10⁻¹² of what they held and are not read (the
``ended_at`` index keeps the scan to the recent ones).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.fairness import AdmissionFairSharing
from quota.core.tree import FlavorResource
from quota.ledger.errors import translated

_HORIZON = 40  # half-lives

_AGE = "GREATEST(EXTRACT(EPOCH FROM (CAST(:now AS timestamptz) - {t})), 0)"
_START, _END = _AGE.format(t="u.started_at"), _AGE.format(t="COALESCE(u.ended_at, :now)")
_DECAYED = (f"SUM(u.amount * (EXP(-:rate * {_END}) - EXP(-:rate * {_START})"
            f" + :penalty * EXP(-:rate * {_START})))")
_HELD_NOW = "SUM(u.amount)"  # a zero half-life: what is held now, as Kueue resets to it
_RECENT = "(u.ended_at IS NULL OR u.ended_at > :since) AND u.started_at <= :now"


def _params(now: datetime, half_life: timedelta, penalty: float) -> dict[str, object]:
    seconds = half_life.total_seconds()
    return {
        "now": now,
        "rate": math.log(2) / seconds if seconds > 0 else 0.0,
        "penalty": penalty,
        "since": now - half_life * _HORIZON,
    }


@translated
def decayed_queue_usage(session: Session, now: datetime,
                        half_life: timedelta) -> dict[str, dict[FlavorResource, int]]:
    """Per ClusterQueue and (flavor, resource), its decayed usage in milli-units."""
    total = _DECAYED if half_life > timedelta(0) else _HELD_NOW
    where = _RECENT if half_life > timedelta(0) else "u.ended_at IS NULL"
    sql = (f"SELECT u.cluster_queue, u.flavor, u.resource, {total} AS amount "
           f"FROM usage_intervals AS u WHERE {where} GROUP BY 1, 2, 3")
    rows = session.execute(text(sql), _params(now, half_life, 0.0)).all()
    out: dict[str, dict[FlavorResource, int]] = {}
    for cq, flavor, resource, amount in rows:
        out.setdefault(cq, {})[(flavor, resource)] = round(float(amount))
    return out


@translated
def local_queue_usage(session: Session, now: datetime, afs: AdmissionFairSharing,
                      weights: Mapping[str, int]) -> dict[str, float]:
    """Per LocalQueue (``namespace/name``), its weighted decayed usage (``weights``: the
    LocalQueues' own, milli-units)."""
    positive = afs.half_life > timedelta(0)
    total = _DECAYED if positive else _HELD_NOW
    where = _RECENT if positive else "u.ended_at IS NULL"
    sql = (f"SELECT w.namespace, w.queue_name, u.resource, {total} AS amount "
           f"FROM usage_intervals AS u JOIN workloads AS w ON w.id = u.workload_id "
           f"WHERE {where} GROUP BY 1, 2, 3")
    rows = session.execute(text(sql), _params(now, afs.half_life, afs.entry_penalty())).all()
    usage: dict[str, dict[str, float]] = {}
    for namespace, queue, resource, amount in rows:
        held = usage.setdefault(f"{namespace}/{queue}", {})
        held[resource] = held.get(resource, 0.0) + float(amount) / 1000
    return {lq: afs.weighted(held, weights.get(lq, 1000)) for lq, held in usage.items()}
