"""The quick quota filter: a workload's least request and what its queue could give."""

from __future__ import annotations

from dataclasses import replace

import pytest
from builders.cycles import pending, queues
from builders.engine import CPU, GPU, T0, M, cq, snapshot, wl
from hypothesis import given, settings
from hypothesis import strategies as st

from admission.engine.flavors import Assigner, Mode, partial_plan
from admission.engine.queues import caps, entry, least_need
from admission.engine.workload import request_problem
from quota.core.model import ClusterQueue
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.tree import QuotaTree
from quota.core.workload import PodSet, Workload


def _two_sets(first: PodSet, second: PodSet) -> Workload:
    return Workload("a", "w", "lq", (first, second), created_at=T0)


@pytest.mark.parametrize("workload, expected", [
    pytest.param(wl("w", {CPU: 2, GPU: 1}, count=4), {CPU: 8 * M, GPU: 4 * M},
                 id="every pod when the pod set cannot shrink"),
    pytest.param(wl("w", {CPU: 2, GPU: 1}, count=4, min_count=1), {CPU: 2 * M, GPU: M},
                 id="the minimum count when partial admission is allowed"),
    pytest.param(wl("w", {CPU: 2, GPU: 0}), {CPU: 2 * M},
                 id="resources requested at zero need nothing"),
    pytest.param(_two_sets(PodSet("driver", 1, {CPU: 4 * M}),
                           PodSet("workers", 3, {CPU: M, GPU: 2 * M}, min_count=2)),
                 {CPU: 4 * M, GPU: 4 * M},
                 id="across pod sets, the most any one of them needs"),
])
def test_least_need(workload: Workload, expected: dict[str, int]) -> None:
    assert dict(least_need(workload)) == expected


_pod_sets = st.lists(
    st.builds(
        PodSet,
        name=st.sampled_from(("main", "workers")),
        count=st.integers(-1, 4),
        requests=st.dictionaries(st.sampled_from((CPU, GPU)), st.integers(-M, 4 * M)),
        min_count=st.none() | st.integers(-1, 5),
    ),
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(_pod_sets)
def test_entry_refuses_exactly_the_invalid_requests(pod_sets: list[PodSet]) -> None:
    # The one-pass check of a single pod set must agree with request_problem, and the
    # need it measures with least_need; multi-pod-set workloads take the general path.
    workload = Workload("a", "w", "lq", tuple(pod_sets), created_at=T0, priority=3)
    found = entry(workload.key, workload, RequeuingTimestamp.EVICTION)
    if request_problem(workload) is not None:
        assert found is None
    else:
        assert found is not None
        assert found[:4] == (-3, T0, workload.key, workload)
        assert dict(found[4]) == dict(least_need(workload))


def test_caps_take_the_best_flavor_per_resource() -> None:
    queue = cq("a", {"h100": {GPU: 2, CPU: 64}, "a100": {GPU: 8, CPU: 16}})
    tree = QuotaTree([queue], {})
    slots = [(f, r) for f in ("h100", "a100") for r in (GPU, CPU)]
    assert caps(tree, "a", slots) == {GPU: 8 * M, CPU: 64 * M}
    tree.add("a", {("a100", GPU): 7 * M})
    assert caps(tree, "a", slots) == {GPU: 2 * M, CPU: 64 * M}


@st.composite
def _flexible(draw: st.DrawFn) -> list[Workload]:
    """Pending workloads, some of which accept fewer pods (partial admission)."""
    out = []
    for workload in draw(pending()):
        pod_set = workload.pod_sets[0]
        count = draw(st.integers(1, 4))
        low = draw(st.one_of(st.none(), st.integers(1, count)))
        out.append(replace(workload, pod_sets=(replace(pod_set, count=count, min_count=low),)))
    return out


@settings(max_examples=150, deadline=None)
@given(queues(), _flexible(), st.integers(0, 2))
def test_filter_never_parks_a_workload_that_fits(
    cqs: list[ClusterQueue], work: list[Workload], skew: int
) -> None:
    """Whenever the filter says a workload cannot fit, neither a full nor a partial flavor
    assignment fits it: the filter is a necessary condition, never a guess."""
    snap = snapshot(*cqs, *work)
    tree = QuotaTree(list(snap.cluster_queues.values()), snap.cohorts)
    assigner = Assigner(tree, snap.flavors)
    names = sorted(snap.cluster_queues)
    for index, workload in enumerate(work):
        queue = snap.cluster_queues[names[(index + skew) % len(names)]]
        slots = [(q.flavor, r) for g in queue.resource_groups for q in g.flavors
                 for r in g.covered_resources]
        limit = caps(tree, queue.name, slots)
        parked = any(amount > limit.get(r, -1) for r, amount in least_need(workload))
        plan = assigner.assign(queue, workload)
        if parked:
            assert plan.mode is not Mode.FIT
            assert partial_plan(assigner, queue, workload) is None
        if plan.mode is Mode.FIT:  # fill the pool so later workloads meet scarcity
            tree.add(queue.name, plan.usage)
