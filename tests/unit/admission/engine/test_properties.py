"""Hypothesis properties of the engine: quota holds, order does not matter, release is exact,
protected workloads are never preempted."""

from __future__ import annotations

import random
from dataclasses import replace

from builders.cycles import FLAVORS, QUEUES, apply, assert_within_quota, pending, queues, summary
from builders.engine import GPU, T0, M, at, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from admission.engine.cycle import run_cycle
from quota.core.model import (
    BorrowWithinCohortPolicy,
    ClusterQueue,
    ReclaimWithinCohort,
    WithinClusterQueue,
)
from quota.core.tree import QuotaTree
from quota.core.workload import Workload


@settings(max_examples=150, deadline=None)
@given(queues(), pending())
def test_admitted_usage_never_exceeds_quota(cqs: list[ClusterQueue],
                                            work: list[Workload]) -> None:
    snap = snapshot(*cqs, *work)
    assert_within_quota(apply(snap, run_cycle(snap, T0)))


@settings(max_examples=100, deadline=None)
@given(queues(preemption=True), pending(), pending("p"), st.randoms(use_true_random=False))
def test_preemption_keeps_quota_and_spares_protected(
    cqs: list[ClusterQueue], first: list[Workload], second: list[Workload], rnd: random.Random,
) -> None:
    snap = snapshot(*cqs, *first)
    snap = apply(snap, run_cycle(snap, T0))
    # Give the admitted workloads priorities and ages, then bring new work.
    workloads = {k: replace(w, priority=rnd.randint(0, 3), admitted_at=at(rnd.randint(0, 9)))
                 for k, w in snap.workloads.items()}
    workloads.update({w.key: replace(w, created_at=at(10 + rnd.randint(0, 5))) for w in second})
    snap = replace(snap, workloads=workloads)
    result = run_cycle(snap, at(20))
    assert_within_quota(apply(snap, result))
    for eviction in result.evicted:
        victim, preemptor = workloads[eviction.key], workloads[eviction.preemptor]
        queue = snap.cluster_queues[eviction.cluster_queue]
        owner = snap.cluster_queues[preemptor.admission.cluster_queue if preemptor.admission
                                    else preemptor.namespace]
        if eviction.cause == "InClusterQueue":
            policy = owner.preemption.within_cluster_queue
            assert policy is not WithinClusterQueue.NEVER
            assert victim.priority < preemptor.priority or (
                policy is WithinClusterQueue.LOWER_OR_NEWER_EQUAL_PRIORITY
                and victim.priority == preemptor.priority
                and victim.created_at > preemptor.created_at)
        elif eviction.cause == "InCohortReclamation":
            reclaim = owner.preemption.reclaim_within_cohort
            assert reclaim is not ReclaimWithinCohort.NEVER
            if reclaim is ReclaimWithinCohort.LOWER_PRIORITY:
                assert victim.priority < preemptor.priority
        elif eviction.cause == "InCohortReclaimWhileBorrowing":
            bwc = owner.preemption.borrow_within_cohort
            assert bwc.policy is BorrowWithinCohortPolicy.LOWER_PRIORITY
            assert victim.priority < preemptor.priority
            assert bwc.max_priority_threshold is None or (
                victim.priority <= bwc.max_priority_threshold)
        assert queue.name == victim.admission.cluster_queue  # type: ignore[union-attr]




@settings(max_examples=100, deadline=None)
@given(queues(preemption=True), pending(), st.randoms(use_true_random=False))
def test_result_does_not_depend_on_listing_order(
    cqs: list[ClusterQueue], work: list[Workload], rnd: random.Random
) -> None:
    shuffled = list(work)
    rnd.shuffle(shuffled)
    queues_shuffled = list(cqs)
    rnd.shuffle(queues_shuffled)
    one = run_cycle(snapshot(*cqs, *work), T0)
    two = run_cycle(snapshot(*queues_shuffled, *shuffled), T0)
    assert summary(one) == summary(two)


@settings(max_examples=150, deadline=None)
@given(queues(), st.lists(st.tuples(st.sampled_from(QUEUES), st.sampled_from(FLAVORS),
                                    st.integers(1, 9)), max_size=12), st.data())
def test_finishing_releases_exactly_what_was_held(
    cqs: list[ClusterQueue], holds: list[tuple[str, str, int]], data: st.DataObject
) -> None:
    tree = QuotaTree(cqs, {})
    before = {(q, f): (tree.available(q, (f, GPU)), tree.usage(q, (f, GPU)))
              for q in QUEUES for f in FLAVORS}
    for queue, flavor, amount in holds:
        tree.add(queue, {(flavor, GPU): amount * M})
    finishing = data.draw(st.permutations(holds))
    for queue, flavor, amount in finishing:
        tree.remove(queue, {(flavor, GPU): amount * M})
    after = {(q, f): (tree.available(q, (f, GPU)), tree.usage(q, (f, GPU)))
             for q in QUEUES for f in FLAVORS}
    assert after == before
    assert all(tree.cohort_usage("all", (f, GPU)) == 0 for f in FLAVORS)
