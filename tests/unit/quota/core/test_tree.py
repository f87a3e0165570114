"""Cohort tree arithmetic: nominal, lendable, available, borrowed, hierarchy, cycles."""

from __future__ import annotations

import pytest
from builders.engine import GPU, M, cohort, cq

from quota.core.model import ClusterQueue, Cohort
from quota.core.tree import QuotaTree, find_cohort_cycles

FR = ("default", GPU)


def tree(queues: list[ClusterQueue], cohorts: list[Cohort] = ()) -> QuotaTree:  # type: ignore[assignment]
    return QuotaTree(queues, {c.name: c for c in cohorts})


@pytest.mark.parametrize(
    ("queues", "cohorts", "usage", "queue", "available", "potential"),
    [
        pytest.param([cq("a", {"default": {GPU: 8}})], [], {"a": 3}, "a", 5, 8,
                     id="a lone queue has its nominal quota minus its usage"),
        pytest.param([cq("a", {"default": {GPU: 8}}, cohort="c"),
                      cq("b", {"default": {GPU: 4}}, cohort="c")], [], {"b": 1}, "a", 11, 12,
                     id="a cohort pools its members' unused quota"),
        pytest.param([cq("a", {"default": {GPU: 8}}, cohort="c", borrowing={FR: 2}),
                      cq("b", {"default": {GPU: 4}}, cohort="c")], [], {}, "a", 10, 10,
                     id="borrowing limit caps what a queue borrows"),
        pytest.param([cq("a", {"default": {GPU: 8}}, cohort="c"),
                      cq("b", {"default": {GPU: 4}}, cohort="c", lending={FR: 1})], [], {},
                     "a", 9, 9, id="lending limit keeps quota reserved for its owner"),
        pytest.param([cq("a", {"default": {GPU: 8}}, cohort="c"),
                      cq("b", {"default": {GPU: 4}}, cohort="c", lending={FR: 1})], [],
                     {"a": 8}, "b", 4, 12,
                     id="the owner still reaches its reserved quota when the pool is used up"),
        pytest.param([cq("a", {"default": {GPU: 2}}, cohort="child"),
                      cq("b", {"default": {GPU: 2}}, cohort="other")],
                     [cohort("child", "root"), cohort("other", "root"),
                      cohort("root", None, {"default": {GPU: 10}})], {"b": 4}, "a", 10, 14,
                     id="hierarchical cohort quota is shared by grandchildren"),
        pytest.param([cq("a", {"default": {GPU: 2}}, cohort="child"),
                      cq("b", {"default": {GPU: 0}}, cohort="root")],
                     [cohort("child", "root", {"default": {GPU: 3}}, lending={FR: 1}),
                      cohort("root", None, {"default": {GPU: 10}})], {}, "b", 11, 11,
                     id="a cohort's lending limit bounds what it lends up the tree"),
        pytest.param([cq("a", {"default": {GPU: 2}}, cohort="child"),
                      cq("b", {"default": {GPU: 0}}, cohort="root")],
                     [cohort("child", "root", {"default": {GPU: 3}}, lending={FR: 1}),
                      cohort("root", None, {"default": {GPU: 10}})], {"b": 11}, "a", 4, 15,
                     id="a cohort's own quota stays with its members beyond its lending limit"),
    ],
)
def test_available_and_potential(
    queues: list[ClusterQueue], cohorts: list[Cohort], usage: dict[str, int], queue: str,
    available: int, potential: int,
) -> None:
    t = tree(queues, cohorts)
    for name, amount in usage.items():
        t.add(name, {FR: amount * M})
    assert (t.available(queue, FR), t.potential(queue, FR)) == (available * M, potential * M)


def test_borrowed_counts_usage_above_nominal_and_release_restores() -> None:
    t = tree([cq("a", {"default": {GPU: 4}}, cohort="c"), cq("b", {"default": {GPU: 4}},
                                                                cohort="c")])
    t.add("a", {FR: 6 * M})
    assert (t.borrowed("a", FR), t.cohort_usage("c", FR), t.available("b", FR)) == (
        2 * M, 6 * M, 2 * M)
    t.remove("a", {FR: 6 * M})
    assert (t.borrowed("a", FR), t.cohort_usage("c", FR), t.available("b", FR)) == (0, 0, 8 * M)


def test_guaranteed_usage_does_not_reach_the_cohort() -> None:
    t = tree([cq("a", {"default": {GPU: 4}}, cohort="c", lending={FR: 1}),
              cq("b", {"default": {GPU: 4}}, cohort="c")])
    t.add("a", {FR: 3 * M})
    assert (t.cohort_usage("c", FR), t.cohort_quota("c", FR)) == (0, 5 * M)
    t.add("a", {FR: 1 * M})
    assert t.cohort_usage("c", FR) == 1 * M


@pytest.mark.parametrize(
    ("cohorts", "broken"),
    [
        pytest.param([cohort("x", "y"), cohort("y", "x")], {"x", "y"},
                     id="two cohorts naming each other form a cycle"),
        pytest.param([cohort("x", "x")], {"x"}, id="a cohort that is its own parent"),
        pytest.param([cohort("leaf", "x"), cohort("x", "y"), cohort("y", "x"), cohort("ok")],
                     {"leaf", "x", "y"}, id="a cohort hanging below a cycle is broken too"),
        pytest.param([cohort("a", "b"), cohort("b", "c")], set(),
                     id="a chain to an undeclared parent is fine"),
    ],
)
def test_find_cohort_cycles(cohorts: list[Cohort], broken: set[str]) -> None:
    assert find_cohort_cycles({c.name: c for c in cohorts}) == broken


def test_members_lists_the_whole_root_pool() -> None:
    t = tree([cq("a", cohort="l"), cq("b", cohort="r"), cq("c")],
             [cohort("l", "root"), cohort("r", "root")])
    assert (t.members("a"), t.members("c")) == (("a", "b"), ("c",))
