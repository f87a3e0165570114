"""The smallest victim set (PURE): candidates tried in order, removed from the quota tree
until the preemptor fits, then those not needed put back; and the order-free proof that
no order can succeed, which most failing searches end with before any sort.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from quota.core.tree import FlavorResource
from quota.core.workload import WorkloadState

if TYPE_CHECKING:  # preemption owns these values and imports this module
    from admission.engine.preemption import Search, Victim, Wanted

_EVICTING = WorkloadState.EVICTING


def fits(search: Search, plan: Wanted, removed: Sequence[Victim], *, borrow: bool) -> bool:
    """Whether the preemptor fits the quota now (the ``removed`` victims are out of the
    tree) and, with nodes, its pods fit the nodes once ``removed`` gave theirs back."""
    tree, cq = search.tree, plan.cluster_queue
    for fr, amount in plan.usage.items():
        if amount > tree.available(cq, fr):
            return False
        if not borrow and tree.usage(cq, fr) + amount > tree.nominal(cq, fr):
            return False
    return plan.placeable is None or plan.placeable(v.workload.key for v in removed)


def borrows_needed(search: Search, victim: Victim, plan: Wanted) -> bool:
    usage = search.holdings.usage[victim.workload.key]
    return any(
        search.tree.borrowed(victim.cluster_queue, fr) > 0 for fr in plan.usage if fr in usage
    )


def hopeless(search: Search, plan: Wanted, candidates: Sequence[Victim], *,
             borrow: bool) -> bool:
    """Whether the preemptor does not fit even with every candidate ``minimal`` could
    take removed at once: then no order of them finds a set, and the sort is not paid
    for. Only where the answer is order-free: quota alone (no placement), every
    candidate allowed, no minimum runtime (whose held-back victims a reason lists).
    ``minimal`` takes a candidate holding a needed slot, of another queue only if that
    queue borrows such a slot; removing others only lowers what a queue borrows, so one
    not takeable now never is. The removals are summed per queue (usage is a function of
    each queue's total, whatever the order)."""
    if plan.placeable is not None or search.min_runtimes is not None:
        return False
    tree, usage, needed, own = search.tree, search.holdings.usage, plan.usage, plan.cluster_queue
    everything = tuple(needed)
    # queue -> the needed slots a candidate of it must hold to be taken (another queue's:
    # those it borrows; the own queue's and any evicting one's: all)
    slots_of: dict[str, tuple[FlavorResource, ...]] = {own: everything}
    borrowing = tuple(zip(everything, tree.borrowing_sets(own, everything), strict=True))
    freed: dict[str, dict[FlavorResource, int]] = {}
    for victim in candidates:
        workload, queue = victim.workload, victim.cluster_queue
        held = usage[workload.key]
        if workload.state is _EVICTING:
            slots = everything
        else:
            found = slots_of.get(queue)
            if found is None:
                found = slots_of[queue] = tuple([fr for fr, names in borrowing
                                                 if queue in names])
            slots = found
        for fr in slots:
            if fr in held:
                break
        else:
            continue
        total = freed.get(queue)
        if total is None:
            total = freed[queue] = dict.fromkeys(needed, 0)
        for fr in needed:
            if fr in held:
                total[fr] += held[fr]
    if not freed:
        return True
    # ``fits`` of the tree with every removal made, computed aside: the tree is not touched.
    for (fr, amount), (available, used) in zip(needed.items(),
                                               tree.after_removal(own, freed, needed),
                                               strict=True):
        if amount > available or (not borrow and used + amount > tree.nominal(own, fr)):
            return True
    return False


def minimal(
    search: Search,
    plan: Wanted,
    candidates: Sequence[Victim],
    *,
    borrow: bool,
    allowed: Callable[[Victim], bool] | None = None,
) -> tuple[Victim, ...] | None:
    tree, holdings = search.tree, search.holdings
    needed = plan.usage
    removed: list[Victim] = []
    found = False
    mark = tree.mark(plan.cluster_queue)  # every victim is put back: so are the versions
    for victim in candidates:
        usage = holdings.usage[victim.workload.key]
        if not any(fr in usage for fr in needed):
            continue
        other_queue = victim.cluster_queue != plan.cluster_queue
        if other_queue and not victim.evicting and not borrows_needed(search, victim, plan):
            continue  # reclaim only what a queue borrows; its nominal quota is its own
        if allowed is not None and not allowed(victim):
            continue
        if search.min_runtimes is not None and not victim.evicting:
            until = search.min_runtimes.protected_until(victim.workload, victim.cluster_queue)
            if until is not None:
                search.held_back[victim.workload.key] = until
                continue
        tree.remove(victim.cluster_queue, usage)
        removed.append(victim)
        if fits(search, plan, removed, borrow=borrow):
            found = True
            break
    if found:
        kept = list(removed)
        for victim in reversed(removed[:-1]):
            tree.add(victim.cluster_queue, holdings.usage[victim.workload.key])
            without = [v for v in kept if v is not victim]
            if fits(search, plan, without, borrow=borrow):
                kept = without
            else:
                tree.remove(victim.cluster_queue, holdings.usage[victim.workload.key])
        removed = kept
    for victim in removed:
        tree.add(victim.cluster_queue, holdings.usage[victim.workload.key])
    tree.restore(mark)
    return tuple(removed) if found else None
