"""Cohort tree arithmetic: nominal, lendable, available, borrowed, hierarchy, cycles, and
cohorts with no ClusterQueue below them."""

from __future__ import annotations

import pytest
from builders.engine import CPU, GPU, M, cohort, cq
from hypothesis import given, settings
from hypothesis import strategies as st

from quota.core.model import ClusterQueue, Cohort
from quota.core.tree import QuotaTree, find_cohort_cycles

FR = ("default", GPU)
C = ("default", CPU)


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


def cpu(amount: int) -> dict[str, dict[str, int]]:
    return {"default": {CPU: amount}}


# Kueue builds its cohort forest from every Cohort object, not only from those above a
# ClusterQueue (pkg/cache/hierarchy, resource_node.go): a cohort with no queue below it
# still lends its own quota to its parent, less what its lending limit keeps back.
@pytest.mark.parametrize(
    ("queues", "cohorts", "usage", "queue", "available", "potential"),
    [
        pytest.param([cq("q", cpu(0), cohort="root")], [cohort("z", "root", cpu(1))], {},
                     "q", 1, 1,
                     id="a queue borrows the quota of a queue-less sibling cohort via root"),
        pytest.param([cq("q", cpu(0), cohort="root")],
                     [cohort("root", None, cpu(2)), cohort("z", "root", cpu(1))], {}, "q", 3, 3,
                     id="a declared root adds its own quota to what the sibling lends"),
        pytest.param([cq("q", cpu(0), cohort="root")],
                     [cohort("z", "root", cpu(3), lending={C: 1})], {}, "q", 1, 1,
                     id="a queue-less cohort lends only up to its lending limit"),
        pytest.param([cq("q", cpu(0), cohort="root")],
                     [cohort("z", "root", cpu(3), lending={C: 0})], {}, "q", 0, 0,
                     id="a lending limit of zero keeps a queue-less cohort's quota to itself"),
        pytest.param([cq("q", cpu(2), cohort="root")],
                     [cohort("z", "root", cpu(2), borrowing={C: 0})], {}, "q", 4, 4,
                     id="a queue-less cohort's borrowing limit bounds what it takes, "
                        "not what it lends"),
        pytest.param([cq("q", cpu(1), cohort="root", borrowing={C: 2})],
                     [cohort("z", "root", cpu(5))], {}, "q", 3, 3,
                     id="the queue's own borrowing limit still caps what it takes from the "
                        "sibling"),
        pytest.param([cq("q", cpu(0), cohort="root"), cq("p", cpu(0), cohort="root")],
                     [cohort("z", "root", cpu(4))], {"p": 3}, "q", 1, 4,
                     id="what one queue draws from the sibling's quota is gone for the others"),
        pytest.param([cq("q", cpu(0), cohort="team")],
                     [cohort("root", None, cpu(1)), cohort("team", "root"),
                      cohort("a", "root"), cohort("b", "a", cpu(0), lending={C: 1}),
                      cohort("c", "b", cpu(2))], {}, "q", 2, 2,
                     id="quota deep in a queue-less branch reaches a queue in another branch, "
                        "within every lending limit on the way up"),
        pytest.param([cq("solo", cpu(2))], [cohort("lonely", None, cpu(5))], {}, "solo", 2, 2,
                     id="a queue-less cohort tree lends nothing to a queue outside it"),
        pytest.param([cq("q", cpu(0), cohort="root")],
                     [cohort("x", "y", cpu(3)), cohort("y", "x", cpu(3)),
                      cohort("z", "x", cpu(3))], {}, "q", 0, 0,
                     id="queue-less cohorts on or below a parent cycle are left out"),
    ],
)
def test_a_cohort_counts_without_a_queue_below(
    queues: list[ClusterQueue], cohorts: list[Cohort], usage: dict[str, int], queue: str,
    available: int, potential: int,
) -> None:
    t = tree(queues, cohorts)
    for name, amount in usage.items():
        t.add(name, {C: amount * M})
    assert (t.available(queue, C), t.potential(queue, C)) == (available * M, potential * M)


def test_a_queue_less_cohort_reports_its_quota_and_its_parent_what_it_lends() -> None:
    t = tree([cq("q", cpu(0), cohort="root")], [cohort("z", "root", cpu(3), lending={C: 2})])
    assert (t.cohort_quota("z", C), t.cohort_quota("root", C)) == (3 * M, 2 * M)
    t.add("q", {C: 2 * M})
    assert (t.cohort_usage("root", C), t.cohort_usage("z", C), t.borrowed("q", C)) == (
        2 * M, 0, 2 * M)
    assert (t.available("q", C), t.members("q")) == (0, ("q",))


_LIMIT = st.none() | st.integers(0, 6)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), _LIMIT), min_size=1, max_size=4),
       st.integers(0, 6), _LIMIT, st.integers(0, 6), _LIMIT, st.integers(0, 12))
def test_a_queue_less_cohort_under_the_root_adds_what_it_lends_to_every_queue(
    chain: list[tuple[int, int | None]], nominal: int, lending: int | None,
    spare: int, spare_lending: int | None, used: int,
) -> None:
    """q sits at the bottom of a chain of cohorts (own quota, optional lending limit each);
    a cohort with no queue below it, hung under the root, raises what q could ever hold, and
    what it can take now, by exactly what that cohort lends: its quota, at most its
    lending limit."""
    names = [f"c{i}" for i in range(len(chain))]
    cohorts = [cohort(name, names[i - 1] if i else None, cpu(quota),
                      lending=None if limit is None else {C: limit})
               for i, (name, (quota, limit)) in enumerate(zip(names, chain, strict=True))]
    queue = cq("q", cpu(nominal), cohort=names[-1],
               lending=None if lending is None else {C: lending})
    extra = cohort("spare", names[0], cpu(spare),
                   lending=None if spare_lending is None else {C: spare_lending})
    lent = spare if spare_lending is None else min(spare, spare_lending)
    without, with_spare = tree([queue], cohorts), tree([queue], [*cohorts, extra])
    for t in (without, with_spare):
        t.add("q", {C: used * M})
    assert with_spare.potential("q", C) == without.potential("q", C) + lent * M
    assert with_spare.available("q", C) == max(
        0, with_spare.potential("q", C) - used * M)


# Cohort "near" (4 GPUs) below root "r" holds queue "mine" (1 GPU); queue "far" sits under r.
NESTED = ([cq("mine", {"default": {GPU: 1}}, cohort="near"),
           cq("far", {"default": {GPU: 0}}, cohort="r")],
          [cohort("r"), cohort("near", "r", {"default": {GPU: 4}})])


@pytest.mark.parametrize(
    ("usage", "amount", "height", "below_root"),
    [
        pytest.param({}, 1, 0, True, id="within its nominal quota it borrows nothing"),
        pytest.param({}, 5, 1, True, id="what its own cohort holds it borrows one level up"),
        pytest.param({"far": 4}, 5, 1, True,
                     id="its cohort's quota lent further up still counts: it may reclaim it"),
        pytest.param({"mine": 1, "far": 0}, 5, 2, False,
                     id="past what its cohort holds it borrows from the root"),
        pytest.param({}, 9, 2, False, id="more than any subtree holds: the whole tree"),
    ],
)
def test_borrowing_height(usage: dict[str, int], amount: int, height: int,
                          below_root: bool) -> None:
    quota = tree(*NESTED)
    for name, used in usage.items():
        quota.add(name, {FR: used * M})
    assert quota.borrowing_height("mine", FR, amount * M) == (height, below_root)
    assert quota.pool_height("mine") == 2


def _pair() -> QuotaTree:
    return tree([cq("a", {"default": {GPU: 4}}, cohort="c"),
                 cq("b", {"default": {GPU: 4}}, cohort="c")])


@pytest.mark.parametrize("trial", [
    pytest.param([("remove", "a", 2), ("add", "a", 2)], id="a victim taken out and put back"),
    pytest.param([("add", "b", 3), ("remove", "b", 3)], id="usage tried in another queue"),
    pytest.param([], id="a trial that changed nothing"),
])
def test_a_restored_trial_hands_the_pool_back_its_versions(
        trial: list[tuple[str, str, int]]) -> None:
    t = _pair()
    t.add("a", {FR: 3 * M})
    before = (t.version("a"), t.slot_versions("a", [FR]))
    mark = t.mark("a")
    for op, name, amount in trial:
        getattr(t, op)(name, {FR: amount * M})
    t.restore(mark)
    assert (t.version("a"), t.slot_versions("a", [FR])) == before
    assert t.available("b", FR) == 5 * M


def test_a_change_after_a_restored_trial_never_reuses_a_version_seen_during_it() -> None:
    # A cache filled during the trial (available quota, say) must not be read as current
    # after a later real change: every version is a fresh value of one clock.
    t = _pair()
    mark = t.mark("a")
    t.add("a", {FR: 6 * M})
    assert t.available("b", FR) == 2 * M  # cached against the trial's version
    during = t.slot_versions("a", [FR])
    t.remove("a", {FR: 6 * M})
    t.restore(mark)
    t.add("a", {FR: 1 * M})
    assert t.slot_versions("a", [FR]) != during
    assert t.available("b", FR) == 7 * M


def test_a_memoised_read_follows_usage_changed_by_another_queue_of_the_pool() -> None:
    # ``available`` and ``measure`` are kept per queue against the pool's slot versions:
    # another queue's admission, and a new slot's first use, must be seen.
    t = _pair()
    assert t.measure("a", FR) == (8 * M, 8 * M, 0, 4 * M)
    t.add("b", {FR: 3 * M})
    assert t.measure("a", FR) == (5 * M, 8 * M, 0, 4 * M)
    assert t.available("a", C) == 0  # a slot no queue has quota for
    t.add("b", {C: 0, FR: 1 * M})
    assert t.available("a", FR) == 4 * M
    t.remove("b", {FR: 4 * M})
    assert t.available("a", FR) == 8 * M


def test_borrowing_sets_name_per_slot_the_queues_above_their_nominal_quota() -> None:
    t = _pair()
    t.add("a", {FR: 6 * M})
    assert [set(names) for names in t.borrowing_sets("b", [FR, C])] == [{"a"}, set()]
    t.remove("a", {FR: 2 * M})  # back at its nominal quota: no longer borrowing
    assert [set(names) for names in t.borrowing_sets("b", [FR])] == [set()]


@pytest.mark.parametrize(
    ("used", "more", "borrows"),
    [
        pytest.param({FR: 3 * M}, {FR: 5 * M}, False, id="up to nominal exactly is not borrowing"),
        pytest.param({FR: 3 * M}, {FR: 6 * M}, True, id="one unit over nominal borrows"),
        pytest.param({}, {FR: 1 * M, C: 5 * M}, True,
                     id="any slot over its nominal quota borrows"),
        pytest.param({}, {}, False, id="nothing more borrows nothing"),
    ],
)
def test_borrows_for_tells_whether_more_usage_takes_a_queue_over_nominal(
        used: dict[tuple[str, str], int], more: dict[tuple[str, str], int], borrows: bool) -> None:
    quota = tree([cq("a", {"default": {GPU: 8, CPU: 4}}, cohort="c"),
                  cq("b", {"default": {GPU: 8, CPU: 8}}, cohort="c")])
    quota.add("a", used)
    assert quota.borrows_for("a", more) is borrows


# Three queues in a two-level tree: "a" and "b" under cohort "team" (below "root"), "c"
# under "root"; each with its own nominal, lending and borrowing limit of one slot.
_QUEUE = st.tuples(st.integers(0, 6), _LIMIT, _LIMIT)


@settings(max_examples=200, deadline=None)
@given(st.lists(_QUEUE, min_size=3, max_size=3), st.integers(0, 6), _LIMIT,
       st.lists(st.integers(0, 8), min_size=3, max_size=3),
       st.lists(st.integers(0, 8), min_size=3, max_size=3), st.sampled_from("abc"))
def test_after_removal_reads_what_removing_would_leave_without_touching_the_tree(
    limits: list[tuple[int, int | None, int | None]], team: int, team_lending: int | None,
    used: list[int], removed: list[int], asker: str,
) -> None:
    """Victim searches prove "no set can make room" with ``after_removal``: it must give
    exactly the available quota and usage that removing the usage for real would leave
    (lending and borrowing limits, two levels of cohorts), and leave the tree as it was."""
    parents = {"a": "team", "b": "team", "c": "root"}
    queues = [cq(name, cpu(nominal), cohort=parents[name],
                 lending=None if lend is None else {C: lend},
                 borrowing=None if borrow is None else {C: borrow})
              for name, (nominal, lend, borrow) in zip("abc", limits, strict=True)]
    cohorts = [cohort("root"), cohort("team", "root", cpu(team),
                                      lending=None if team_lending is None else {C: team_lending})]
    trial, real = tree(queues, cohorts), tree(queues, cohorts)
    for t in (trial, real):
        for name, amount in zip("abc", used, strict=True):
            t.add(name, {C: amount * M})
    removals = {name: {C: min(amount, have) * M}
                for name, amount, have in zip("abc", removed, used, strict=True)}
    before = (trial.version(asker), trial.available(asker, C), trial.usage(asker, C))
    for name, amounts in removals.items():
        real.remove(name, amounts)
    assert trial.after_removal(asker, removals, [C, FR]) == [
        (real.available(asker, C), real.usage(asker, C)),
        (real.available(asker, FR), real.usage(asker, FR))]
    assert (trial.version(asker), trial.available(asker, C), trial.usage(asker, C)) == before
