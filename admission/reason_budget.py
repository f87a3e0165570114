"""How many unchanged-code verdicts one cycle rewrites (PURE).

With thousands of workloads waiting, every admission or finish moves the details of every
waiting workload's verdict (who holds the quota, what is available, its position), so a
cycle would rewrite every pending row: at Kueue's baseline shape that cost more than all
the decisions. A new primary code is always written at once (it is what users and Jobs
see change); verdicts whose code stays the same are written at most ``budget`` per cycle,
in rotation by row id, so each is refreshed within a few cycles.
"""

from __future__ import annotations

from admission.cycle_plan import CyclePlan

REASON_BUDGET = 500


def spread_reasons(plan: CyclePlan, budget: int, after: int) -> int:
    """Keep in ``plan`` every code change and ``budget`` detail-only changes, starting past
    row id ``after``; drop the rest (the cache keeps their old verdict, so the next cycle
    finds them changed again). Returns where the next cycle should start."""
    minor = [c for c in plan.reasons if c.primary is None]
    if len(minor) <= budget:
        return after
    minor.sort(key=lambda c: (c.id <= after, c.id))
    dropped = {c.id for c in minor[budget:]}
    plan.reasons = [c for c in plan.reasons if c.id not in dropped]
    plan.records = {k: r for k, r in plan.records.items() if r.id not in dropped}
    return minor[budget - 1].id if budget > 0 else after
