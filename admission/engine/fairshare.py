"""Fair sharing (PURE): a ClusterQueue's dominant-resource share of its cohort.

share = max over resources of (usage above nominal / what the cohort can lend), divided by
the fair-sharing weight. Integers throughout: the share is in thousandths of the pool for
weight 1, so 1000 means "borrows as much as the whole pool lends".

With memory (``berth.fairSharingHalfLife``) the usage is the queue's decayed usage over
time rather than this instant's: the caller (the loop from the ledger's usage intervals,
the simulator from its own history) passes it in, and ``memory_offsets`` turns it into a
per-queue offset from the tree's current usage, so what a cycle admits or evicts moves the
share by just as much as without memory.
"""

from __future__ import annotations

from collections.abc import Mapping

from quota.core.tree import FlavorResource, QuotaTree

UNBOUNDED = 10**18  # the share of a borrower whose weight is zero


Offsets = Mapping[str, Mapping[FlavorResource, int]]


def memory_offsets(tree: QuotaTree, decayed: Offsets) -> dict[str, dict[FlavorResource, int]]:
    """Per queue of ``decayed`` (its decayed usage), what to add to the tree's usage."""
    return {cq: {fr: amount - tree.usage(cq, fr) for fr, amount in usage.items()}
            for cq, usage in decayed.items() if tree.has_queue(cq)}


def dominant_share(
    tree: QuotaTree,
    cq: str,
    weight: int,
    delta: Mapping[FlavorResource, int] | None = None,
    offset: Mapping[FlavorResource, int] | None = None,
) -> int:
    """The ClusterQueue's dominant-resource share, after adding ``delta`` to its usage
    (and ``offset``, with memory: its decayed usage less its current one)."""
    delta = delta or {}
    offset = offset or {}
    borrowed: dict[str, int] = {}
    lendable: dict[str, int] = {}
    for fr in set(tree.flavor_resources(cq)) | set(delta) | set(offset):
        resource = fr[1]
        used = tree.usage(cq, fr) + delta.get(fr, 0) + offset.get(fr, 0)
        borrowed[resource] = borrowed.get(resource, 0) + max(0, used - tree.nominal(cq, fr))
        lendable[resource] = lendable.get(resource, 0) + tree.lendable(cq, fr)
    ratio = 0
    for resource, amount in borrowed.items():
        if amount <= 0:
            continue
        pool = lendable[resource]
        ratio = max(ratio, UNBOUNDED if pool <= 0 else amount * 1000 // pool)
    if ratio == 0:
        return 0
    if weight <= 0 or ratio >= UNBOUNDED:
        return UNBOUNDED
    return ratio * 1000 // weight
