"""Flavor fungibility with preemption (PURE): which flavor a workload short of quota takes
when whether a flavor has victims decides it, as Kueue's flavor assigner does.

``Verdict.measure`` judges a flavor that needs preemption by quota alone. Kueue asks its
preemption oracle as well, and ranks the flavor by what the victims would be:

- no victim set exists ("no candidates"): the flavor cannot be had in this cycle, so the
  next one is tried whatever ``whenCanPreempt`` says;
- every victim is in another ClusterQueue ("reclaim": taking back quota lent out) ranks
  above a victim set inside the own queue ("preempt");
- within a kind, a flavor that needs no borrowing once its victims are gone (their freed
  quota credited) ranks above one that still borrows; the first flavor wins a tie.

A fitting flavor ranks above all of these. The search is paid for only where the answer
depends on it: ``walk`` returns None (nothing to add to the verdict) unless a flavor
needing preemption has a rival, i.e. under ``MayStopSearch`` a later viable flavor, under
``TryNextFlavor`` another flavor needing preemption and none that fits. Victims found
for the flavor taken are handed back, so the cycle does not search again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum
from typing import NamedTuple

from admission.engine.candidates import FailedSearches
from admission.engine.flavors import Mode
from admission.engine.preemption import Search, Victim, Wanted, find_victims
from admission.engine.verdict import Outcome, Verdict, VerdictTry
from quota.core.model import ClusterQueue
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload

# The victims that let the workload take these slots, or None when no allowed set does.
Oracle = Callable[[Mapping[FlavorResource, int]], tuple[Victim, ...] | None]


_FIT, _PREEMPT, _NO_FIT = Mode.FIT, Mode.PREEMPT, Mode.NO_FIT


class Kind(IntEnum):
    """How a flavor could be had, Kueue's order; higher is better."""

    NO_CANDIDATES = 1  # needs preemption, no victim set exists
    PREEMPT = 2  # some victim is in the own ClusterQueue
    RECLAIM = 3  # every victim is in another ClusterQueue: quota lent out comes back
    FIT = 4


class Walked(NamedTuple):
    """The verdict's outcome with victims known where they decided the flavor."""

    outcome: Outcome
    known: bool  # ``victims`` is the search's answer for ``outcome.usage``
    victims: tuple[Victim, ...] | None
    searched: bool = True  # False: known from an earlier failure, not searched now


class _Pick(NamedTuple):
    attempt: VerdictTry
    mode: Mode
    kind: Kind
    borrows: bool
    victims: tuple[Victim, ...] | None
    judged: bool

    @property
    def rank(self) -> tuple[int, bool]:
        return (self.kind, not self.borrows)


def walk_outcome(verdict: Verdict, outcome: Outcome, search: Search, failed: FailedSearches,
                 cq: ClusterQueue, workload: Workload, shape: int,
                 searchable: Callable[[], bool]) -> Walked | None:
    """A cycle's ``walk`` of a PREEMPT ``outcome``: None when the verdict stands (no rival
    flavor, or none has victims alike), known-without-victims when an equal shape in this
    pool state already found none; ``searchable``: whether any victim could be found."""
    if not verdict.fungible:
        return None
    if failed.shape_failed(cq, workload, shape):
        return Walked(outcome, True, None, searched=False)  # its like found none
    can = searchable()
    if not can and verdict.preempt_next:
        return None  # every flavor lacks victims alike: the verdict's ranking stands
    oracle = searcher(search, failed, cq, workload, can)
    return walk(verdict, search.tree, cq.name, oracle, search.holdings.usage)


def slots_stamp(search: Search, cq: str, frs: Sequence[FlavorResource]) -> object:
    """The state a quota-only victim search for the (sorted) slots ``frs`` reads, without
    fair sharing: their versions (their usage, holders, borrowers); another flavor's
    admissions leave its answer standing. (A holder turns evicting in a cycle only as a victim, and
    victims are protected: fewer candidates, the failure stands.) None (the pool
    version) otherwise."""
    if search.fair_sharing:
        return None
    return search.tree.slot_versions(cq, frs)


def searcher(search: Search, failed: FailedSearches, cq: ClusterQueue, workload: Workload,
             searchable: bool) -> Oracle:
    """The oracle a cycle walks with: failures remembered per flavor slots by amount, so
    an equal or harder search in the same state of those slots is not run again
    (``FailedSearches.known_amounts`` and ``add``, with what they read of the workload
    read once per walk). An equal shape's failure is one of these too (same slots, same
    amounts), so no lookup by shape is needed here."""
    name, tree, fair = cq.name, search.tree, search.fair_sharing
    priority, age, newer = failed.preemptor(cq, workload)

    def oracle(usage: Mapping[FlavorResource, int]) -> tuple[Victim, ...] | None:
        if not searchable:
            return None
        frs = tuple(sorted(usage))
        # ``slots_stamp`` inline: the slots' versions, or with fair sharing the pool's
        state = tree.version(name) if fair else tree.slot_versions(name, frs)
        amounts = tuple([usage[fr] for fr in frs])
        if failed.known_at(name, state, frs, amounts, priority, age, newer):
            return None
        victims = find_victims(search, cq, workload, Wanted(name, usage))
        if not victims:
            failed.add_at(name, state, frs, amounts, priority, age)
        return victims

    return oracle


def kind_of(victims: tuple[Victim, ...] | None, cq: str) -> Kind:
    """Reclaim when every victim is another queue's, preempt when one is the own queue's."""
    if not victims:
        return Kind.NO_CANDIDATES
    if any(v.cluster_queue == cq for v in victims):
        return Kind.PREEMPT
    return Kind.RECLAIM


def borrows_after(tree: QuotaTree, cq: str, requested: Mapping[FlavorResource, int],
                  victims: tuple[Victim, ...], held: Mapping[str, Mapping[FlavorResource, int]],
                  ) -> bool:
    """Whether ``cq`` still borrows to take ``requested`` once the victims of its own
    queue gave back what they hold (reclaimed quota is another queue's usage)."""
    for fr, amount in requested.items():
        freed = sum(held[v.workload.key].get(fr, 0) for v in victims if v.cluster_queue == cq)
        if tree.usage(cq, fr) - freed + amount > tree.nominal(cq, fr):
            return True
    return False


def walk(verdict: Verdict, tree: QuotaTree, cq: str, oracle: Oracle,
         held: Mapping[str, Mapping[FlavorResource, int]]) -> Walked | None:
    """``verdict.measure`` for ``cq`` with flavors needing preemption judged by ``oracle``
    where that decides the flavor; None when no flavor was judged (the verdict stands).
    ``held``: each holder's usage, to credit what own-queue victims free."""
    read = tree.measure
    asked = 0

    def ask(requested: Mapping[FlavorResource, int]) -> tuple[Victim, ...] | None:
        nonlocal asked
        asked += 1
        return oracle(requested)

    fit, preempt, no_fit = _FIT, _PREEMPT, _NO_FIT
    taken: dict[FlavorResource, int] = {}
    picks: list[VerdictTry] = []
    chosen: list[_Pick] = []
    mode, borrows = (no_fit if verdict.uncovered else fit), False
    for groups in verdict.pod_sets:
        for tries in groups:
            if tries is None:
                mode = no_fit
                continue
            measured: list[tuple[VerdictTry, Mode, bool]] = []
            for attempt in tries:
                this_mode, lends = fit, False
                for fr, amount in attempt.slots:
                    requested = taken.get(fr, 0) + amount
                    available, potential, used, nominal = read(cq, fr)
                    if requested > available:
                        if requested > potential:
                            this_mode = no_fit
                        elif this_mode is fit:
                            this_mode = preempt
                    if used + requested > nominal:
                        lends = True
                measured.append((attempt, this_mode, lends))
            best = _choose(verdict, measured, taken, tree, cq, ask, held)
            if best is None:
                mode = no_fit
                continue
            if best.mode < mode:
                mode = best.mode
            borrows = borrows or best.borrows
            picks.append(best.attempt)
            chosen.append(best)
            for fr, amount in best.attempt.slots:
                taken[fr] = taken.get(fr, 0) + amount
    if not asked:
        return None
    outcome = Outcome(mode, borrows, taken, tuple(picks))
    if mode is not Mode.PREEMPT:
        return Walked(outcome, True, None)
    if any(p.kind is Kind.NO_CANDIDATES for p in chosen):
        return Walked(outcome, True, None)  # that flavor's slots alone find no victims
    if len(chosen) == 1 and chosen[0].judged:
        return Walked(outcome, True, chosen[0].victims)
    return Walked(outcome, False, None)


def _choose(verdict: Verdict, measured: list[tuple[VerdictTry, Mode, bool]],
            taken: Mapping[FlavorResource, int], tree: QuotaTree, cq: str, oracle: Oracle,
            held: Mapping[str, Mapping[FlavorResource, int]]) -> _Pick | None:
    """One group's flavor: the verdict's rules, flavors needing preemption judged where
    a rival makes their victims decide."""
    def judge(attempt: VerdictTry, this_mode: Mode, lends: bool) -> _Pick:
        requested = {fr: taken.get(fr, 0) + amount for fr, amount in attempt.slots}
        victims = oracle(requested)
        kind = kind_of(victims, cq)
        after = lends if not victims else borrows_after(tree, cq, requested, victims, held)
        return _Pick(attempt, this_mode, kind, after, victims, True)

    viable = [m for m in measured if m[1] is not _NO_FIT]
    if verdict.preempt_next:
        considered: list[tuple[VerdictTry, Mode, bool]] = []
        for item in viable:
            considered.append(item)
            if item[1] is _FIT and not (item[2] and verdict.borrow_next):
                break
        fits = [m for m in considered if m[1] is _FIT]
        if fits:
            return _best([_Pick(a, m, Kind.FIT, lends, None, False) for a, m, lends in fits])
        if len(considered) < 2:
            return _unjudged(considered)
        best: _Pick | None = None
        for attempt, this_mode, lends in considered:
            pick = judge(attempt, this_mode, lends)
            if best is None or pick.rank > best.rank:
                best = pick
            if best.rank == (Kind.RECLAIM, True):
                break  # nothing needing preemption ranks higher, and nothing here fits
        return best
    best = None
    for at, (attempt, this_mode, lends) in enumerate(viable):
        if this_mode is _FIT:
            pick = _Pick(attempt, this_mode, Kind.FIT, lends, None, False)
            if best is None or pick.rank > best.rank:
                best = pick
            if not (lends and verdict.borrow_next):
                break
            continue
        if best is not None and best.kind is Kind.FIT:
            break  # a fitting flavor came first: the verdict's choice, no search needed
        if at == len(viable) - 1:
            pick = _Pick(attempt, this_mode, Kind.PREEMPT, lends, None, False)
            if best is None or pick.rank > best.rank:
                best = pick
            break  # no rival after it: its victims decide nothing here
        pick = judge(attempt, this_mode, lends)
        if best is None or pick.rank > best.rank:
            best = pick
        if pick.kind is not Kind.NO_CANDIDATES:
            break  # MayStopSearch: a flavor with victims is taken
    return best


def _unjudged(considered: list[tuple[VerdictTry, Mode, bool]]) -> _Pick | None:
    if not considered:
        return None
    attempt, this_mode, lends = considered[0]
    return _Pick(attempt, this_mode, Kind.PREEMPT, lends, None, False)


def _best(picks: list[_Pick]) -> _Pick:
    best = picks[0]
    for pick in picks[1:]:
        if pick.rank > best.rank:
            best = pick
    return best
