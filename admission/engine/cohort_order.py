"""The order of ClusterQueue heads across a cohort (PURE), as Kueue's iterator has it.

Non-borrowing heads first; then the borrowers, those borrowing from nearer up the cohort
tree first (KEP-79: how far up, not the priority, decides first), or with fair sharing
those with the lower share after admission; then the pending order. A reservation
(``reservations``) takes effect where Kueue would have decided its holder: before the
borrowers of its priority, after those of higher priority.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from admission.engine.fairshare import dominant_share
from admission.engine.queues import Entry
from admission.engine.verdict import Outcome
from quota.core.model import ClusterQueue
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload

# (borrowing height, fair share after admission, -priority, queue-order time, key)
CohortKey = tuple[int, int, int, datetime, str]

# A reservation goes before the borrowers of its holder's priority, whenever they came.
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def optimistic(head: Entry) -> CohortKey:
    """The cohort key a queue's head enters the heap with: as if it did not borrow."""
    return (0, 0, head.neg_priority, head.queued_at, head.key)


def cohort_key(tree: QuotaTree, cq: ClusterQueue, outcome: Outcome, queued: CohortKey,
               *, fair_sharing: bool,
               memory: Mapping[FlavorResource, int] | None = None) -> CohortKey:
    """Where a head goes once its ``outcome`` is known (``queued``: its key so far, its
    pending order last); ``memory``: the queue's decayed past usage, for fair sharing
    with memory."""
    if not outcome.borrows:
        return queued  # (0, 0, ...): the key it was queued with
    share, height = 0, 1
    if fair_sharing:
        share = dominant_share(tree, cq.name, cq.fair_sharing_weight, outcome.usage, memory)
    else:
        height = borrowing_height(tree, cq, outcome)
    return (height, share, *queued[2:])


def reservation_key(tree: QuotaTree, cq: ClusterQueue, workload: Workload,
                    outcome: Outcome) -> CohortKey:
    """Where the reservation of ``workload`` (decided with ``outcome``) is made."""
    return (borrowing_height(tree, cq, outcome), 0, -workload.priority, _EARLIEST, "")


def borrowing_height(tree: QuotaTree, cq: ClusterQueue, outcome: Outcome) -> int:
    """How far up the cohort tree ``outcome`` borrows, at least 1."""
    if not outcome.borrows or tree.pool_height(cq.name) < 2:
        return 1
    name = cq.name
    return max((tree.borrowing_height(name, fr, amount)[0]
                for fr, amount in outcome.usage.items()), default=1) or 1
