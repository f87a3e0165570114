"""Fast verdicts (PURE): how well a workload fits now, without building a ``Plan``.

The admission pass asks "fits / needs borrowing / could fit after preemption / never
fits" once per pending workload, and tens of thousands of them fail. ``Assigner.assign``
answers with a tree of small objects that only matter when the workload is admitted or
its reasons are written. A ``Verdict`` is compiled once per (ClusterQueue, shape): which
flavors each group may try (constraints already matched) and the amounts each tries, so
the per-state question is integer comparisons. It follows ``Assigner.assign`` step by
step (flavor order, fungibility, the request accumulated per (flavor, resource) across
pod sets), and ``tests/unit/engine`` checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from admission.engine.flavors import Mode
from quota.core.model import ClusterQueue, FlavorFungibility, WhenCanBorrow, WhenCanPreempt
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Admission, PodSet, PodSetAssignment, Workload

_FIT, _PREEMPT, _NO_FIT = Mode.FIT, Mode.PREEMPT, Mode.NO_FIT
_new = tuple.__new__



class _Try(NamedTuple):
    """One flavor a group may try."""

    flavor: str
    slots: tuple[tuple[FlavorResource, int], ...]  # the (slot, amount) it would take


# One flavor a group may try, as ``fungible`` reads a verdict.
VerdictTry = _Try
# A group: the flavors whose constraints match, in order (None: none matches).
_Group = tuple[_Try, ...] | None
# (flavor, pod set, workload priority) -> why the flavor cannot serve it, or None
Mismatch = Callable[[str, PodSet, int], str | None]


class Outcome(NamedTuple):
    """What assignment would decide now, without building a ``Plan``."""

    mode: Mode
    borrows: bool
    usage: dict[FlavorResource, int]  # the quota it would take per slot
    picks: tuple[_Try, ...]  # the flavor per group of each pod set (complete when FIT)


class Finding(NamedTuple):
    """Why a pod set waits, one reason's numbers (``kind``: "quota", "exceeds", "nomatch"
    with ``flavors`` {flavor: why}, or "uncovered" naming the ``resource``)."""

    kind: str
    pod_set: str
    flavor: str = ""
    resource: str = ""
    requested: int = 0
    maximum: int = 0
    flavors: Mapping[str, str] | None = None


class Explanation:
    """What ``Assigner.assign`` would say about a workload that does not fit now, in the
    numbers the reasons and hints print: built without a ``Plan`` per pending workload."""

    __slots__ = ("findings", "mode", "short", "usage")

    def __init__(self, mode: Mode, findings: list[Finding], short: set[FlavorResource],
                 usage: dict[FlavorResource, int]) -> None:
        self.mode = mode
        self.findings = findings
        self.short = short  # slots a chosen flavor is short of (the borrower hints)
        self.usage = usage


class Verdict:
    """A workload's flavor choices under one ClusterQueue layout (``layout``), ready to
    measure for any ClusterQueue of that layout in any state."""

    __slots__ = ("borrow_next", "details", "fungible", "pod_sets", "preempt_next",
                 "uncovered")

    def __init__(self, cq: ClusterQueue, workload: Workload, mismatch: Mismatch) -> None:
        fungibility: FlavorFungibility = cq.flavor_fungibility
        self.borrow_next = fungibility.when_can_borrow is WhenCanBorrow.TRY_NEXT_FLAVOR
        self.preempt_next = fungibility.when_can_preempt is WhenCanPreempt.TRY_NEXT_FLAVOR
        self.uncovered = False
        priority = workload.priority
        pod_sets: list[tuple[_Group, ...]] = []
        # Per pod set, for ``explain`` only: name, uncovered resources, and per group why
        # each flavor mismatches (all of them, in order) when none matches.
        details: list[tuple[str, tuple[str, ...], tuple[dict[str, str] | None, ...]]] = []
        for pod_set in workload.pod_sets:
            wanted = {r: a * pod_set.count for r, a in pod_set.requests.items() if a > 0}
            covered: set[str] = set()
            groups: list[_Group] = []
            why: list[dict[str, str] | None] = []
            for group in cq.resource_groups:
                resources = tuple(r for r in group.covered_resources if r in wanted)
                covered.update(group.covered_resources)
                if not resources:
                    continue
                tries = tuple(
                    _Try(quotas.flavor,
                         tuple(((quotas.flavor, r), wanted[r]) for r in resources))
                    for quotas in group.flavors
                    if mismatch(quotas.flavor, pod_set, priority) is None
                )
                groups.append(tries or None)
                why.append(None if tries else {
                    q.flavor: mismatch(q.flavor, pod_set, priority) or ""
                    for q in group.flavors})
            uncovered = tuple(sorted(r for r in wanted if r not in covered))
            if uncovered:
                self.uncovered = True
            pod_sets.append(tuple(groups))
            details.append((pod_set.name, uncovered, tuple(why)))
        self.pod_sets = tuple(pod_sets)
        self.details = tuple(details)
        # Some group may try more than one flavor: victims may decide which it takes.
        self.fungible = any(tries is not None and len(tries) > 1
                            for groups in pod_sets for tries in groups)

    def measure(self, tree: QuotaTree, cq: str) -> Outcome:
        """What ``Assigner.assign`` would decide for ``cq`` now: (mode, borrows, usage)."""
        read = tree.measure
        taken: dict[FlavorResource, int] = {}
        picks: list[_Try] = []
        mode, borrows = (_NO_FIT if self.uncovered else _FIT), False
        for groups in self.pod_sets:
            for tries in groups:
                if tries is None:
                    mode = _NO_FIT
                    continue
                best: _Try | None = None
                best_mode, best_lends = _NO_FIT, False
                for attempt in tries:
                    this_mode, lends = _FIT, False
                    for fr, amount in attempt.slots:
                        requested = taken.get(fr, 0) + amount
                        available, potential, used, nominal = read(cq, fr)
                        if requested > available:
                            if requested > potential:
                                this_mode = _NO_FIT
                            elif this_mode is _FIT:
                                this_mode = _PREEMPT
                        if used + requested > nominal:
                            lends = True
                    if this_mode is _NO_FIT:
                        continue
                    if best is None or (this_mode, not lends) > (best_mode, not best_lends):
                        best, best_mode, best_lends = attempt, this_mode, lends
                    if this_mode is _FIT:
                        if not (lends and self.borrow_next):
                            break
                    elif not self.preempt_next:
                        break
                if best is None:
                    mode = _NO_FIT
                    continue
                if best_mode < mode:
                    mode = best_mode
                borrows = borrows or best_lends
                picks.append(best)
                for fr, amount in best.slots:
                    taken[fr] = taken.get(fr, 0) + amount
        return _new(Outcome, (mode, borrows, taken, tuple(picks)))  # Outcome(...), faster

    def admission(self, cq: str, workload: Workload, picks: tuple[_Try, ...]) -> Admission:
        """The admission ``Assigner.assign`` would build from the flavors ``measure`` chose
        (``picks`` of a FIT outcome), when quota alone decides: no ``Plan`` for the
        thousands admitted per cycle."""
        chosen = iter(picks)
        pod_sets: list[PodSetAssignment] = []
        for pod_set, groups in zip(workload.pod_sets, self.pod_sets, strict=True):
            flavors: dict[str, str] = {}
            usage: dict[str, int] = {}
            for _ in groups:
                flavor, slots = next(chosen)
                for (_, resource), amount in slots:
                    flavors[resource] = flavor
                    usage[resource] = amount
            pod_sets.append(PodSetAssignment(pod_set.name, pod_set.count, flavors, usage))
        return Admission(cq, tuple(pod_sets))


    def explain(self, numbers: Mapping[FlavorResource, tuple[int, int, int]]) -> Explanation:
        """``measure`` with the numbers ``reasons.plan_reasons`` and ``plan_hints`` read
        from a ``Plan`` (same order, same choices); kept apart so the admission pass does
        not pay for them. ``numbers``: per slot of the queue (available, potential,
        nominal - used), read once per queue in the final state."""
        taken: dict[FlavorResource, int] = {}
        findings: list[Finding] = []
        short: set[FlavorResource] = set()
        mode = _FIT
        for groups, (name, uncovered, why) in zip(self.pod_sets, self.details, strict=True):
            own = [Finding("uncovered", name, resource=r) for r in uncovered]
            set_mode = _NO_FIT if uncovered else _FIT
            for tries, mismatches in zip(groups, why, strict=True):
                if tries is None:
                    own.append(Finding("nomatch", name, flavors=mismatches))
                    set_mode = _NO_FIT
                    continue
                best: list[tuple[FlavorResource, int, Mode]] | None = None
                best_flavor, best_mode, best_lends = "", _NO_FIT, False
                over: list[tuple[int, str, str, int, int]] = []
                for flavor, amounts in tries:
                    this_mode, lends = _FIT, False
                    checks: list[tuple[FlavorResource, int, Mode]] = []
                    for fr, amount in amounts:
                        requested = taken.get(fr, 0) + amount
                        available, maximum, headroom = numbers[fr]
                        check = _FIT
                        if requested > available:
                            if requested <= maximum:
                                check = _PREEMPT
                            else:
                                check = _NO_FIT
                                over.append((requested - maximum, flavor, fr[1], requested,
                                             maximum))
                            if check < this_mode:
                                this_mode = check
                        if requested > headroom:
                            lends = True
                        checks.append((fr, requested, check))
                    if this_mode is _NO_FIT:
                        continue
                    if best is None or (this_mode, not lends) > (best_mode, not best_lends):
                        best, best_flavor, best_mode, best_lends = (
                            checks, flavor, this_mode, lends)
                    if this_mode is _FIT:
                        if not (lends and self.borrow_next):
                            break
                    elif not self.preempt_next:
                        break
                if best is None:
                    # Every matched flavor was measured: name the one that comes closest.
                    _, flavor, resource, requested, maximum = min(over, key=lambda o: o[:3])
                    own.append(Finding("exceeds", name, flavor, resource, requested, maximum))
                    set_mode = _NO_FIT
                    continue
                if best_mode < set_mode:
                    set_mode = best_mode
                for fr, requested, check in best:
                    taken[fr] = requested
                    if check is not _FIT:
                        own.append(Finding("quota", name, best_flavor, fr[1], requested))
                        short.add(fr)
            if set_mode is not _FIT:
                findings.extend(own)
                if set_mode < mode:
                    mode = set_mode
        return Explanation(mode, findings, short, taken)


def layout(cq: ClusterQueue) -> tuple[object, ...]:
    """What a ``Verdict`` reads of a ClusterQueue: groups, flavor order, fungibility (not
    quotas). Queues cloned from one template share it, so verdicts compile once per shape."""
    return (
        tuple((group.covered_resources, tuple(q.flavor for q in group.flavors))
              for group in cq.resource_groups),
        cq.flavor_fungibility,
    )
