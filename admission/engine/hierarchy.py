"""Preemption in a hierarchical cohort tree (PURE): Kueue's hierarchical reclaim.

In a tree of cohorts, quota lent from far away is weaker than quota lent nearby. Walking
up from the preemptor's ClusterQueue, the first subtree whose quota holds the request
(after what each node keeps for itself) gives the preemptor an *advantage* over every
workload using that subtree's quota from outside it: those may be reclaimed whatever
their priority, even while the preemptor borrows (KEP-79). Workloads borrowing from
further up, where the preemptor has no advantage, are reclaimed by priority as in a flat
cohort (``reclaimWithinCohort``, ``borrowWithinCohort``). Subtrees within their own quota
are skipped: nothing in them is lent from elsewhere.

Candidates are tried in Kueue's order: already evicting first; then those the preemptor
has the advantage over, then those it may take by priority, then its own queue's; within
each group the flat search's order (lower priority, least work lost). A candidate is
valid only while its queue, and every cohort between it and the subtree it was found
from, still uses more than its own quota. The smallest victim set is chosen as in the
flat search. Flat cohorts and fair sharing keep ``preemption.find_victims``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum

from admission.engine.preemption import (
    Search,
    Victim,
    Wanted,
    _ordered,
    reclaim_allows,
    within_allows,
)
from admission.engine.victim_sets import minimal
from quota.core.model import BorrowWithinCohortPolicy, ClusterQueue, ReclaimWithinCohort
from quota.core.reasons import PreemptionCause
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload, WorkloadState


class Variant(Enum):
    """How a candidate of another ClusterQueue may be taken."""

    ADVANTAGE = "advantage"  # the preemptor is nearer the quota it uses: always
    WITHOUT_BORROWING = "without-borrowing"  # only if the preemptor then does not borrow
    WHILE_BORROWING = "while-borrowing"  # borrowWithinCohort lets it borrow past it


class _Candidate:
    __slots__ = ("lca", "variant", "victim")

    def __init__(self, victim: Victim, lca: str | None, variant: Variant | None) -> None:
        self.victim = victim
        self.lca = lca  # the subtree it was found from (None: the preemptor's own queue)
        self.variant = variant


def hierarchical_victims(search: Search, cq: ClusterQueue, preemptor: Workload,
                         plan: Wanted) -> tuple[Victim, ...] | None:
    """The minimal victims that let ``plan`` fit in a hierarchical cohort, or None."""
    tree, name, needed = search.tree, cq.name, plan.usage
    frs = [fr for fr, a in needed.items() if a > tree.available(name, fr)] or list(needed)
    own = [_Candidate(v, None, None) for v in _own(search, cq, preemptor, frs)]
    advantage: list[_Candidate] = []
    by_priority: list[_Candidate] = []
    if cq.preemption.reclaim_within_cohort is not ReclaimWithinCohort.NEVER:
        ahead, left = tree.fits_in(name, needed, cohort=False)
        previous: str | None = None
        for cohort in tree.parents(name):
            _collect(search, cq, preemptor, frs, cohort, cohort, previous, ahead,
                     advantage if ahead else by_priority)
            fits, left = tree.fits_in(cohort, left, cohort=True)
            ahead = ahead or fits
            previous = cohort
    groups = [_sorted(search, plan, g) for g in (advantage, by_priority, own)]
    ordered = [c for g in groups for c in g if c.victim.evicting]
    ordered += [c for g in groups for c in g if not c.victim.evicting]
    forbidden = cq.preemption.borrow_within_cohort.policy is BorrowWithinCohortPolicy.NEVER
    under = all(tree.usage(name, fr) < tree.nominal(name, fr) for fr in frs)
    passes: tuple[bool, ...]
    if not (advantage or by_priority) or (forbidden and not under):
        passes = (True,)
    elif forbidden and not advantage:
        passes = (False, True)
    else:
        passes = (True, False)
    by_key = {c.victim.workload.key: c for c in ordered}
    victims = [c.victim for c in ordered]
    for borrow in passes:
        def valid(victim: Victim, borrow: bool = borrow) -> bool:
            return _valid(tree, by_key[victim.workload.key], frs, name, borrow=borrow)

        found = minimal(search, plan, victims, borrow=borrow, allowed=valid)
        if found is not None:
            return found
    return None


def _own(search: Search, cq: ClusterQueue, preemptor: Workload,
         frs: Sequence[FlavorResource]) -> list[Victim]:
    policy = cq.preemption.within_cluster_queue
    holdings = search.holdings
    return [Victim(w, cq.name, PreemptionCause.IN_CLUSTER_QUEUE)
            for key, w in holdings.entries(cq.name)
            if key not in search.protected and _uses(holdings.usage[key], frs)
            and (w.state is WorkloadState.EVICTING
                 or within_allows(policy, preemptor, w, search.timestamp))]


def _uses(usage: Mapping[FlavorResource, int], frs: Sequence[FlavorResource]) -> bool:
    return any(fr in usage for fr in frs)


def _collect(search: Search, cq: ClusterQueue, preemptor: Workload,
             frs: Sequence[FlavorResource], current: str, subtree: str, skip: str | None,
             ahead: bool, out: list[_Candidate]) -> None:
    """Candidates below ``current`` outside ``skip`` (the subtree already searched), in
    nodes using more than their own quota of what the preemptor needs."""
    tree = search.tree
    cohorts, queues = tree.children(current)
    for child in cohorts:
        if child != skip and tree.over_quota(child, frs, cohort=True):
            _collect(search, cq, preemptor, frs, child, subtree, skip, ahead, out)
    for other in queues:
        if other != cq.name and tree.over_quota(other, frs, cohort=False):
            out.extend(_Candidate(victim, subtree, variant)
                       for victim, variant in _of_queue(search, cq, preemptor, frs, other,
                                                        ahead))


def _of_queue(search: Search, cq: ClusterQueue, preemptor: Workload,
              frs: Sequence[FlavorResource], other: str,
              ahead: bool) -> list[tuple[Victim, Variant]]:
    policy = cq.preemption
    bwc = policy.borrow_within_cohort
    threshold = bwc.max_priority_threshold
    holdings = search.holdings
    out: list[tuple[Victim, Variant]] = []
    for key, w in holdings.entries(other):
        if key in search.protected or not _uses(holdings.usage[key], frs):
            continue
        evicting = w.state is WorkloadState.EVICTING
        if not evicting and not reclaim_allows(policy.reclaim_within_cohort, preemptor, w):
            continue
        if ahead or evicting:
            variant = Variant.ADVANTAGE
        elif bwc.policy is BorrowWithinCohortPolicy.NEVER or w.priority >= preemptor.priority \
                or (threshold is not None and w.priority > threshold):
            variant = Variant.WITHOUT_BORROWING
        else:
            variant = Variant.WHILE_BORROWING
        cause = (PreemptionCause.IN_COHORT_RECLAIM_WHILE_BORROWING
                 if variant is Variant.WHILE_BORROWING
                 else PreemptionCause.IN_COHORT_RECLAMATION)
        out.append((Victim(w, other, cause), variant))
    return out


def _sorted(search: Search, plan: Wanted, group: list[_Candidate]) -> list[_Candidate]:
    by_key = {c.victim.workload.key: c for c in group}
    return [by_key[v.workload.key] for v in _ordered(search, plan, [c.victim for c in group])]


def _valid(tree: QuotaTree, candidate: _Candidate, frs: Sequence[FlavorResource],
           preemptor_cq: str, *, borrow: bool) -> bool:
    """Whether the candidate may still be taken: its queue, and every cohort between it
    and the subtree it was found from, still use more than their own quota."""
    queue = candidate.victim.cluster_queue
    if queue == preemptor_cq or candidate.victim.evicting:
        return True
    if borrow and candidate.variant is Variant.WITHOUT_BORROWING:
        return False
    if not tree.over_quota(queue, frs, cohort=False):
        return False
    for cohort in tree.parents(queue):
        if cohort == candidate.lca:
            break
        if not tree.over_quota(cohort, frs, cohort=True):
            return False
    return True
