"""Failed victim searches remembered within a cycle: which later searches they answer."""

from __future__ import annotations

import pytest
from builders.engine import GPU, M, cq, wl

from admission.engine.candidates import FailedSearches
from quota.core.model import Preemption, WithinClusterQueue
from quota.core.tree import QuotaTree

LOWER = Preemption(within_cluster_queue=WithinClusterQueue.LOWER_PRIORITY)
NEWER = Preemption(within_cluster_queue=WithinClusterQueue.LOWER_OR_NEWER_EQUAL_PRIORITY)
SLOT = ("default", GPU)


@pytest.mark.parametrize("shape", [7, None], ids=["by shape", "by needed amounts"])
@pytest.mark.parametrize("policy, priority, created, gpus, known", [
    pytest.param(LOWER, 5, 3, 4, True, id="same priority and need"),
    pytest.param(LOWER, 4, 3, 4, True, id="lower priority: fewer candidates"),
    pytest.param(LOWER, 6, 3, 4, False, id="higher priority: more candidates"),
    pytest.param(LOWER, 5, 1, 4, True, id="older at equal priority under LowerPriority"),
    pytest.param(NEWER, 5, 1, 4, False,
                 id="older at equal priority under LowerOrNewerEqualPriority"),
    pytest.param(NEWER, 5, 5, 4, True,
                 id="newer at equal priority under LowerOrNewerEqualPriority"),
])
def test_a_failure_answers_searches_with_no_more_candidates(
    shape: int | None, policy: Preemption, priority: int, created: int, gpus: int,
    known: bool,
) -> None:
    queue = cq("a", {"default": {GPU: 8}}, preemption=policy)
    failed = FailedSearches(QuotaTree([queue], {}))
    failed.add(queue, wl("first", {GPU: 4}, priority=5, created=3), {SLOT: 4 * M}, shape)
    later = wl("later", {GPU: gpus}, priority=priority, created=created)
    assert failed.known(queue, later, {SLOT: gpus * M}, shape) is known


def test_a_failure_says_nothing_once_the_pool_changes_or_of_a_smaller_need() -> None:
    queue = cq("a", {"default": {GPU: 8}}, preemption=LOWER)
    tree = QuotaTree([queue], {})
    failed = FailedSearches(tree)
    failed.add(queue, wl("first", {GPU: 4}, priority=5), {SLOT: 4 * M}, 7)
    # A larger need fails too (found through the amounts even for another shape) ...
    assert failed.known(queue, wl("big", {GPU: 6}), {SLOT: 6 * M}, 8)
    # ... a smaller one might not, whatever shape id it is given.
    assert not failed.known(queue, wl("small", {GPU: 2}), {SLOT: 2 * M}, 9)
    tree.add("a", {SLOT: M})  # the pool changed: every failure is stale
    assert not failed.known(queue, wl("same", {GPU: 4}, priority=5), {SLOT: 4 * M}, 7)
