"""How many unchanged-code verdicts one cycle rewrites, and which (PURE).

With thousands of workloads waiting, every admission or finish moves the details of every
waiting workload's verdict (who holds the quota, what is available, its position), so a
cycle would rewrite every pending row: at Kueue's baseline shape that cost more than all
the decisions. A new primary code is always written at once (it is what users and Jobs
see change); verdicts whose code stays the same are written a few per cycle, in rotation
by row id, enough that each is refreshed within about ``REFRESH_SECONDS`` (``cycle_share``;
``EXAMINING`` times as many are looked at, since some did not change). The choice is made
before any verdict is built: a cycle then costs what changed plus its share of the
refresh, however many wait.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection

REASON_BUDGET = 500  # most detail-only verdicts written in one cycle
REASON_FLOOR = 50  # written in any cycle (a small ledger is always current)
REFRESH_SECONDS = 30.0  # every waiting verdict rewritten about this often
EXAMINING = 2  # verdicts looked at per one written


def cycle_share(elapsed: float, waiting: int) -> tuple[int, int]:
    """(looked at, written) detail-only verdicts in a cycle ``elapsed`` seconds after the
    previous one with ``waiting`` workloads: ``REASON_FLOOR`` plus what refreshing all of
    them every ``REFRESH_SECONDS`` earned meanwhile, at most ``REASON_BUDGET``. Frequent
    cycles (a busy ledger) then each write a few instead of slowing every decision down,
    and the rotation still goes round."""
    written = min(REASON_BUDGET, REASON_FLOOR + int(max(0.0, elapsed) * waiting / REFRESH_SECONDS))
    return EXAMINING * written, written


def rotation(ids: Collection[int], count: int, after: int) -> list[int]:
    """Up to ``count`` of ``ids`` in rotation: ascending from past ``after``, then from the
    smallest again."""
    if count >= len(ids):
        return sorted(ids, key=lambda i: (i <= after, i))
    ahead = heapq.nsmallest(count, (i for i in ids if i > after))
    if len(ahead) < count:
        ahead += heapq.nsmallest(count - len(ahead), (i for i in ids if i <= after))
    return ahead
