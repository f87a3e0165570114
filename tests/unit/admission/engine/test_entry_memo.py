"""Queue entries kept across cycles (``EntryMemo``): the entry of the very workload object
seen before comes back, a changed workload or setting gets a new one, and cycles that keep
the memo decide exactly as cycles that build every entry afresh."""

from __future__ import annotations

from dataclasses import replace

from builders.cycles import apply, pending, queues, summary
from builders.engine import GPU, T0, at, snapshot, wl
from hypothesis import given, settings
from hypothesis import strategies as st

from admission.engine.cycle import run_cycle
from admission.engine.queues import EntryMemo, entry
from quota.core.model import ClusterQueue
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.reasons import EvictionReason
from quota.core.workload import Workload

EVICTION, CREATION = RequeuingTimestamp.EVICTION, RequeuingTimestamp.CREATION


def test_the_same_workload_object_gets_its_entry_back_without_building_it() -> None:
    memo = EntryMemo()
    job = wl("a", {GPU: 2})
    first = memo.entry(job.key, job, EVICTION)
    assert first == entry(job.key, job, EVICTION)
    assert memo.entry(job.key, job, EVICTION) is first


def test_a_changed_workload_under_the_same_key_gets_a_new_entry() -> None:
    memo = EntryMemo()
    job = wl("a", {GPU: 2}, priority=1)
    memo.entry(job.key, job, EVICTION)
    raised = replace(job, priority=7)  # an equal key, another object
    assert memo.entry(raised.key, raised, EVICTION) == entry(raised.key, raised, EVICTION)
    assert memo.entry(raised.key, raised, EVICTION).neg_priority == -7


def test_the_timestamp_setting_is_part_of_what_an_entry_depends_on() -> None:
    memo = EntryMemo()
    timed_out = replace(wl("a", {GPU: 2}), evicted_at=at(600),
                        eviction_reason=str(EvictionReason.PODS_READY_TIMEOUT))
    by_eviction = memo.entry(timed_out.key, timed_out, EVICTION)
    by_creation = memo.entry(timed_out.key, timed_out, CREATION)
    assert by_eviction is not None and by_creation is not None
    assert (by_eviction.queued_at, by_creation.queued_at) == (at(600), T0)


def test_an_invalid_request_is_remembered_as_none() -> None:
    memo = EntryMemo()
    broken = wl("a", {GPU: 2}, count=0)
    assert memo.entry(broken.key, broken, EVICTION) is None
    assert memo.entry(broken.key, broken, EVICTION) is None


def test_prune_forgets_workloads_that_are_gone() -> None:
    memo = EntryMemo()
    many = [wl(f"w{i}", {GPU: 1}) for i in range(3000)]
    for job in many:
        memo.entry(job.key, job, EVICTION)
    memo.prune({many[0].key: many[0]})
    assert len(memo) <= 1


@settings(max_examples=80, deadline=None)
@given(queues(preemption=True), pending(), pending("p"), st.sets(st.integers(0, 11)))
def test_cycles_with_a_kept_memo_decide_as_cycles_without(
    cqs: list[ClusterQueue], first: list[Workload], second: list[Workload], raised: set[int]
) -> None:
    memo = EntryMemo()
    snap = snapshot(*cqs, *first)
    assert summary(run_cycle(replace(snap, entries=memo), T0)) == summary(run_cycle(snap, T0))
    # The next cycle reuses the memo: the admitted are holders now (new objects), the rest
    # the very objects of the first cycle but those whose priority was raised, and
    # newcomers arrive.
    snap = apply(snap, run_cycle(snap, T0))
    moved = {w.key: replace(w, priority=w.priority + 5)
             for i, w in enumerate(first) if i in raised and snap.workloads[w.key].admission is None}
    snap = replace(snap, workloads={**snap.workloads, **moved, **{w.key: w for w in second}})
    later = at(30)
    assert summary(run_cycle(replace(snap, entries=memo), later)) == summary(
        run_cycle(snap, later))
