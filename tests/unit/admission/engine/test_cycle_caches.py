"""The cycle's shortcuts decide exactly what plain evaluation decides: fast verdicts in
place of plans, plans cached by the queue's quota view, reasons and hints from the verdict's
numbers, victim searches skipped in pools without open holders or ended by the
reachability bound, workloads parked by the quick quota filter, and the quota tree's
memoised answers."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime

import pytest
from builders.cycles import apply, pending, queues, summary
from builders.engine import GPU, T0, M, admitted, at, cq, snapshot, wl
from hypothesis import given, settings
from hypothesis import strategies as st

from admission.engine import cycle_victims, preemption, reasons
from admission.engine.candidates import FailedSearches
from admission.engine.cycle import _Cycle, run_cycle
from admission.engine.flavors import Assigner, Mode, Plan
from admission.engine.queues import Entry
from admission.engine.types import CycleResult, Reason, Snapshot
from admission.engine.verdict import Outcome, Verdict
from quota.core import tree as tree_module
from quota.core.model import ClusterQueue, Preemption, ReclaimWithinCohort, WithinClusterQueue
from quota.core.reasons import WaitReason
from quota.core.tree import QuotaTree
from quota.core.workload import Admission, Workload


class _NoMemo(dict[object, object]):
    """A memo that never remembers: every reason and hint is built afresh."""

    def __setitem__(self, key: object, value: object) -> None:
        pass


class _NoFailures(FailedSearches):
    """Remembers no failed victim search: every search runs."""

    def known(self, *args: object, **kwargs: object) -> bool:
        return False

    def known_amounts(self, *args: object, **kwargs: object) -> bool:
        return False

    def shape_failed(self, *args: object, **kwargs: object) -> bool:
        return False

    def known_at(self, *args: object, **kwargs: object) -> bool:
        return False

    def shape_failed_at(self, *args: object, **kwargs: object) -> bool:
        return False


class _Plain(_Cycle):
    """The cycle without its shortcuts: the reference the optimised one must equal."""

    def __init__(self, snap: Snapshot, now: datetime) -> None:
        super().__init__(snap, now)
        self.failed = _NoFailures(self.tree)
        self.reason_memo = _NoMemo()  # type: ignore[assignment]
        self.hint_memo = _NoMemo()  # type: ignore[assignment]

    def _may_search(self, root: str) -> bool:
        return True  # every victim search runs, even where no holder is left to find

    def _park_tail(self, cq: ClusterQueue, mine: list[Entry], at: int) -> int:
        return at  # no quick filter: every workload goes through flavor assignment

    def _plan(self, cq: ClusterQueue, workload: Workload, shape_: int) -> Plan:
        return Assigner(QuotaTreeView(self.tree), self.snapshot.flavors).assign(cq, workload)

    def _outcome(self, cq: ClusterQueue, workload: Workload, shape_: int) -> Outcome:
        plan = self._plan(cq, workload, shape_)  # a full plan instead of the fast verdict
        return plan.mode, plan.borrows, dict(plan.usage), ()

    def _admission(self, cq: ClusterQueue, workload: Workload, outcome: Outcome,
                   shape_: int) -> Admission:
        return self._plan(cq, workload, shape_).admission()  # the plan's, not the verdict's

    def _quota_reasons(
        self, name: str, key: str, workload: Workload
    ) -> tuple[list[Reason], list[str]]:
        # From a full plan in the final state, not from the verdict's numbers.
        cq_ = self.queues[name]
        plan = self._plan(cq_, workload, 0)
        if plan.mode is Mode.FIT:
            return [reasons.pending_evaluation()], []
        hints = reasons.plan_hints(plan, self.tree, self._reclaimable(cq_, plan.usage))
        return self._plan_reasons(plan), hints


class QuotaTreeView(QuotaTree):
    """The cycle's tree with its memoised reads bypassed."""

    def __init__(self, tree: QuotaTree) -> None:  # shares the tree's state, not a copy
        self.__dict__.update(tree.__dict__)

    def measure(self, cq: str, fr: tuple[str, str]) -> tuple[int, int, int, int]:
        node = self._queues[cq]
        limits = node.limits.get(fr)
        return (max(0, tree_module._available(node, fr)), tree_module._potential(node, fr),
                node.usage.get(fr, 0), limits.nominal if limits is not None else 0)


def plain_cycle(snap: Snapshot, now: datetime) -> CycleResult:
    # Every victim search runs in full: no reachability bound ends it early, no pass
    # is ended before its sort by the all-at-once proof, the passes that must fit
    # without borrowing run even where the queue's own holders could not make room for
    # them, and a search's trial removals leave the pool's versions bumped.
    bound, room, hopeless = preemption._unreachable, preemption._own_room, preemption.hopeless
    restore = QuotaTree.restore
    preemption._unreachable = lambda *args, **kwargs: False
    preemption._own_room = lambda *args, **kwargs: True
    preemption.hopeless = lambda *args, **kwargs: False
    QuotaTree.restore = lambda self, mark: None  # type: ignore[method-assign]
    try:
        result = _Plain(snap, now).run()
        dict(result.pending)  # statuses are built on first read: build them unpatched
        return result
    finally:
        preemption._unreachable, preemption._own_room = bound, room
        preemption.hopeless = hopeless
        QuotaTree.restore = restore  # type: ignore[method-assign]


@settings(max_examples=120, deadline=None)
@given(queues(preemption=True), pending(), pending("p"), st.randoms(use_true_random=False),
       st.booleans())
def test_optimised_cycle_equals_plain_evaluation(
    cqs: list[ClusterQueue], first: list[Workload], second: list[Workload],
    rnd: random.Random, fair: bool,
) -> None:
    snap = replace(snapshot(*cqs, *first), fair_sharing=fair)
    assert summary(run_cycle(snap, T0)) == summary(plain_cycle(snap, T0))
    # A second cycle with holders of mixed priority and age, so victim searches run.
    snap = apply(snap, run_cycle(snap, T0))
    workloads = {k: replace(w, priority=rnd.randint(0, 3), admitted_at=at(rnd.randint(0, 9)))
                 for k, w in snap.workloads.items()}
    workloads.update({w.key: replace(w, created_at=at(10 + rnd.randint(0, 5))) for w in second})
    snap = replace(snap, workloads=workloads)
    assert summary(run_cycle(snap, at(20))) == summary(plain_cycle(snap, at(20)))


def _quota_reason(result: CycleResult, key: str) -> dict[str, object]:
    (reason,) = [r for r in result.pending[key].reasons
                 if r.code is WaitReason.WAITING_FOR_QUOTA]
    return dict(reason.details)


def test_a_larger_workload_behind_a_failed_one_gets_its_own_request_in_the_reason() -> None:
    snap = snapshot(cq("a", {"f1": {GPU: 8}}),
                    admitted(wl("holder", {GPU: 4}, ns="a"), "a", "f1"),
                    wl("small", {GPU: 6}, ns="a", created=1),
                    wl("twin", {GPU: 6}, ns="a", created=2),
                    wl("large", {GPU: 1}, ns="a", count=7, created=3))
    result = run_cycle(snap, T0)
    small, twin, large = (_quota_reason(result, f"a/{k}") for k in ("small", "twin", "large"))
    assert small == twin  # one evaluation serves an equal request in the same state
    assert (small["requested"], small["shortfall"]) == ("6", "2")
    assert (large["requested"], large["available"], large["shortfall"]) == ("7", "4", "3")


@pytest.mark.parametrize("old_holder", [
    pytest.param(False, id="skips the victim search when every holder was admitted this cycle"),
    pytest.param(True, id="searches and preempts when an older holder can be reclaimed"),
])
def test_victim_search_runs_only_with_open_holders(
    old_holder: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = cycle_victims.find_victims

    def counting(*args: object, **kwargs: object) -> object:
        calls.append("search")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cycle_victims, "find_victims", counting)
    policy = Preemption(WithinClusterQueue.LOWER_PRIORITY, ReclaimWithinCohort.ANY)
    queue = cq("a", {"f1": {GPU: 4}}, preemption=policy)
    low = wl("low", {GPU: 4}, ns="a", priority=0, created=1)
    if old_holder:  # admitted in an earlier cycle: a victim the search may pick
        snap = snapshot(queue, admitted(low, "a", "f1"), wl("urgent", {GPU: 4}, ns="a",
                                                             priority=5, created=2))
    else:  # both pending: the urgent one is admitted first and protects itself
        snap = snapshot(queue, low, wl("urgent", {GPU: 4}, ns="a", priority=5, created=2))
    result = run_cycle(snap, at(5))
    if old_holder:
        assert calls and [e.key for e in result.evicted] == ["a/low"]
    else:
        assert not calls and not result.evicted
        assert [d.key for d in result.admitted] == ["a/urgent"]
        assert result.pending["a/low"].reason.code is WaitReason.WAITING_FOR_QUOTA

def test_tree_memoised_answers_follow_usage_changes() -> None:
    queues_ = [cq(name, {"f1": {GPU: 4}}, cohort="all") for name in ("a", "b", "c")]
    tree = QuotaTree(queues_, {})
    fr = ("f1", GPU)
    assert tree.available("a", fr) == 12 * M
    tree.add("b", {fr: 6 * M})
    tree.add("c", {fr: 5 * M})
    assert tree.available("a", fr) == 1 * M  # the cached 12 was dropped with the change
    assert tree.borrowers("a", [fr]) == ["b", "c"]
    assert tree.borrowers("b", [fr]) == ["c"]  # the pool's list, without the asker
    assert tree.borrowed_ranking("a", fr) == [(-2 * M, "b"), (-1 * M, "c")]
    tree.remove("b", {fr: 6 * M})
    assert (tree.available("a", fr), tree.borrowers("a", [fr])) == (7 * M, ["c"])
    assert tree.borrowed_ranking("a", fr) == [(-1 * M, "c")]
    assert tree.measure("a", fr) == (7 * M, 12 * M, 0, 4 * M)


@settings(max_examples=150, deadline=None)
@given(queues(preemption=True), pending(), st.randoms(use_true_random=False))
def test_fast_verdict_equals_flavor_assignment(
    cqs: list[ClusterQueue], work: list[Workload], rnd: random.Random
) -> None:
    snap = snapshot(*cqs, *work)
    tree = QuotaTree(list(snap.cluster_queues.values()), snap.cohorts)
    assigner = Assigner(tree, snap.flavors)
    names = sorted(snap.cluster_queues)
    for workload in work:  # usage grows as they are added, so every mode shows up
        cq_ = snap.cluster_queues[rnd.choice(names)]
        plan = assigner.assign(cq_, workload)
        verdict = Verdict(cq_, workload, assigner.mismatch)
        outcome = verdict.measure(tree, cq_.name)
        assert outcome[:3] == (plan.mode, plan.borrows, dict(plan.usage))
        if plan.mode is Mode.FIT:  # the admission built from its picks is the plan's
            assert verdict.admission(cq_.name, workload, outcome[3]) == plan.admission()
        if plan.mode > 0:
            tree.add(cq_.name, plan.usage)
