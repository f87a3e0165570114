"""Classical preemption's candidates, as Kueue's: the cohort's borrowers only while the
queue is under its nominal quota (then the preemptor fits without borrowing, unless
``borrowWithinCohort`` allows it), otherwise the own queue's work only, borrowing allowed;
no preemption for a request over the queue's nominal quota; no needless victim."""

from __future__ import annotations

import pytest
from builders.engine import CPU, GPU, T0, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    Preemption,
    ReclaimWithinCohort,
    WithinClusterQueue,
)

LOWER = WithinClusterQueue.LOWER_PRIORITY


def policy(reclaim: ReclaimWithinCohort = ReclaimWithinCohort.LOWER_PRIORITY,
           borrow: BorrowWithinCohort | None = None) -> Preemption:
    return Preemption(within_cluster_queue=LOWER, reclaim_within_cohort=reclaim,
                      borrow_within_cohort=borrow or BorrowWithinCohort())


def outcome(*objects: object) -> tuple[list[str], list[tuple[str, str | None]]]:
    result = run_cycle(snapshot(*objects), T0)
    return ([d.key for d in result.admitted],
            sorted((e.key, None if e.cause is None else str(e.cause)) for e in result.evicted))


@pytest.mark.parametrize(("objects", "admitted_keys", "evicted"), [
    # "a" uses 8 of its nominal 6 (borrowing 2 from "d"); x needs 4 more. Evicting "low"
    # alone lets x in while "a" borrows; evicting "med" too (to fit without borrowing)
    # would only see "med" re-admitted on the freed quota.
    pytest.param([cq("a", {"default": {GPU: 6}}, cohort="c", preemption=policy()),
                  cq("d", {"default": {GPU: 6}}, cohort="c"),
                  admitted(wl("med", {GPU: 4}), "a"),
                  admitted(wl("low", {GPU: 4}, priority=-1), "a"),
                  admitted(wl("d1", {GPU: 4}, ns="d", priority=-1), "d"),
                  wl("x", {GPU: 4}, priority=1)],
                 ["a/x"], [("a/low", "InClusterQueue")],
                 id="over its nominal quota it evicts only the own victim it needs and borrows"),
    # "a" is over its nominal 4 and "b" borrows; "a"'s own holder outranks x, and the
    # borrower is no candidate for a queue that is not under its nominal quota.
    pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c",
                     preemption=policy(ReclaimWithinCohort.ANY)),
                  cq("b", {"default": {GPU: 0}}, cohort="c"),
                  cq("d", {"default": {GPU: 4}}, cohort="c"),
                  admitted(wl("mine", {GPU: 5}, priority=9), "a"),
                  admitted(wl("borrowed", {GPU: 3}, ns="b"), "b"),
                  wl("x", {GPU: 2}, priority=5)],
                 [], [], id="a queue over its nominal quota takes nothing from the cohort"),
    # x fits "a"'s nominal CPU but must borrow GPU (5 of nominal 3): the cohort's CPU
    # borrowers could only be taken for a preemptor fitting without borrowing.
    pytest.param([cq("a", {"default": {CPU: 6, GPU: 3}}, cohort="c", preemption=policy()),
                  cq("d", {"default": {CPU: 6, GPU: 3}}, cohort="c"),
                  admitted(wl("med", {CPU: 4}), "a"),
                  admitted(wl("d1", {CPU: 5}, ns="d", priority=-1), "d"),
                  admitted(wl("d2", {CPU: 1}, ns="d", priority=-1), "d"),
                  admitted(wl("d3", {CPU: 1}, ns="d", priority=-1), "d"),
                  wl("x", {CPU: 2, GPU: 5}, priority=1)],
                 ["a/x"], [("a/med", "InClusterQueue")],
                 id="a preemptor borrowing another resource takes only its own queue's work"),
    # x asks 3 of "a"'s nominal 2: it could only get in by borrowing, and only
    # borrowWithinCohort lets a preemptor borrow.
    pytest.param([cq("a", {"default": {GPU: 2}}, cohort="c",
                     preemption=policy(ReclaimWithinCohort.ANY)),
                  cq("b", {"default": {GPU: 2}}, cohort="c"),
                  admitted(wl("a1", {GPU: 1}, priority=-1), "a"),
                  admitted(wl("b1", {GPU: 1}, ns="b", priority=-1), "b"),
                  wl("x", {GPU: 3}, priority=1)],
                 [], [], id="a request over its queue's nominal quota preempts nobody"),
    pytest.param([cq("a", {"default": {GPU: 2}}, cohort="c", preemption=policy(
                     borrow=BorrowWithinCohort(BorrowWithinCohortPolicy.LOWER_PRIORITY))),
                  cq("b", {"default": {GPU: 2}}, cohort="c"),
                  admitted(wl("a1", {GPU: 1}, priority=-1), "a"),
                  admitted(wl("b1", {GPU: 1}, ns="b", priority=-1), "b"),
                  wl("x", {GPU: 3}, priority=1)],
                 ["a/x"], [("a/a1", "InClusterQueue")],
                 id="with borrowWithinCohort a request over nominal may preempt and borrow"),
    # borrowWithinCohort picks among reclaim candidates; reclaimWithinCohort Never has none.
    pytest.param([cq("a", {"default": {GPU: 2}}, cohort="c", preemption=Preemption(
                     borrow_within_cohort=BorrowWithinCohort(
                         BorrowWithinCohortPolicy.LOWER_PRIORITY))),
                  cq("b", {"default": {GPU: 0}}, cohort="c"),
                  cq("d", {"default": {GPU: 6}}, cohort="c"),
                  admitted(wl("p1", {GPU: 4}, ns="b", priority=1), "b"),
                  admitted(wl("d1", {GPU: 4}, ns="d"), "d"),
                  wl("x", {GPU: 4}, priority=10)],
                 [], [], id="borrowWithinCohort without reclaimWithinCohort takes no borrower"),
    # Under its nominal quota "a" may take "b"'s borrower, but x must then fit without
    # borrowing: 1 + 4 exceeds the nominal 4, and its own holder outranks it. With 3
    # asked, evicting the borrower lets it in within nominal.
    pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c",
                     preemption=policy(ReclaimWithinCohort.ANY)),
                  cq("b", {"default": {GPU: 0}}, cohort="c"),
                  cq("d", {"default": {GPU: 4}}, cohort="c"),
                  admitted(wl("mine", {GPU: 1}, priority=9), "a"),
                  admitted(wl("borrowed", {GPU: 7}, ns="b"), "b"),
                  wl("x", {GPU: 4}, priority=5)],
                 [], [], id="reclaiming from the cohort needs a fit without borrowing"),
    pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c",
                     preemption=policy(ReclaimWithinCohort.ANY)),
                  cq("b", {"default": {GPU: 0}}, cohort="c"),
                  cq("d", {"default": {GPU: 4}}, cohort="c"),
                  admitted(wl("mine", {GPU: 1}, priority=9), "a"),
                  admitted(wl("borrowed", {GPU: 7}, ns="b"), "b"),
                  wl("x", {GPU: 3}, priority=5)],
                 ["a/x"], [("b/borrowed", "InCohortReclamation")],
                 id="under nominal it reclaims a borrower and fits without borrowing"),
])
def test_candidates(objects: list[object], admitted_keys: list[str],
                    evicted: list[tuple[str, str | None]]) -> None:
    assert outcome(*objects) == (admitted_keys, evicted)
