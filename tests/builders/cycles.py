"""Random pools and pending workloads for the engine's properties, and a cycle's result applied to its snapshot."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from admission.engine.types import CycleResult, Snapshot
from builders.engine import GPU, cq, wl
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    ClusterQueue,
    Preemption,
    ReclaimWithinCohort,
    WithinClusterQueue,
)
from quota.core.workload import Workload, WorkloadState

FLAVORS = ("f1", "f2")


QUEUES = ("a", "b", "c")


@st.composite
def queues(draw: st.DrawFn, preemption: bool = False) -> list[ClusterQueue]:
    out = []
    for name in QUEUES:
        quotas = {f: {GPU: draw(st.integers(0, 8))} for f in FLAVORS}
        borrowing = {(f, GPU): draw(st.integers(0, 6)) for f in FLAVORS
                     if draw(st.booleans())}
        lending = {(f, GPU): draw(st.integers(0, quotas[f][GPU])) for f in FLAVORS
                   if draw(st.booleans())}
        policy = Preemption()
        if preemption:
            policy = Preemption(
                draw(st.sampled_from(list(WithinClusterQueue))),
                draw(st.sampled_from(list(ReclaimWithinCohort))),
                BorrowWithinCohort(draw(st.sampled_from(list(BorrowWithinCohortPolicy))),
                                   draw(st.none() | st.integers(0, 3))),
            )
        out.append(cq(name, quotas, cohort="all", borrowing=borrowing, lending=lending,
                      preemption=policy))
    return out


@st.composite
def pending(draw: st.DrawFn, prefix: str = "w") -> list[Workload]:
    count = draw(st.integers(0, 12))
    return [
        wl(f"{prefix}{i}", {GPU: draw(st.integers(1, 6))}, ns=draw(st.sampled_from(QUEUES)),
           count=draw(st.integers(1, 2)), priority=draw(st.integers(0, 3)),
           created=draw(st.integers(0, 5)))
        for i in range(count)
    ]


def apply(snap: Snapshot, result: CycleResult) -> Snapshot:
    """The snapshot after the cycle: admissions held, victims requeued."""
    workloads = dict(snap.workloads)
    for decision in result.admitted:
        workloads[decision.key] = replace(workloads[decision.key], state=WorkloadState.ADMITTED,
                                          admission=decision.admission, admitted_at=result.now)
    for eviction in result.evicted:
        workloads[eviction.key] = replace(workloads[eviction.key], state=WorkloadState.PENDING,
                                          admission=None, admitted_at=None)
    return replace(snap, workloads=workloads)


def assert_within_quota(snap: Snapshot) -> None:
    usage: dict[tuple[str, tuple[str, str]], int] = {}
    for workload in snap.workloads.values():
        if workload.admission is not None and workload.state is WorkloadState.ADMITTED:
            for fr, amount in workload.admission.usage().items():
                key = (workload.admission.cluster_queue, fr)
                usage[key] = usage.get(key, 0) + amount
    for flavor in FLAVORS:
        fr = (flavor, GPU)
        lent = drawn = 0
        for queue in snap.cluster_queues.values():
            (quota,) = (q for f in queue.resource_groups[0].flavors if f.flavor == flavor
                        for q in f.resources)
            used = usage.get((queue.name, fr), 0)
            if quota.borrowing_limit is not None:
                assert used <= quota.nominal + quota.borrowing_limit
            kept = quota.nominal - (quota.lending_limit if quota.lending_limit is not None
                                    else quota.nominal)
            lent += quota.nominal - kept
            drawn += max(0, used - kept)
        assert drawn <= lent  # the cohort never hands out more than its members lend


def summary(result: CycleResult) -> object:
    return (
        sorted((d.key, d.admission, d.borrowing) for d in result.admitted),
        sorted((e.key, e.preemptor, e.cause) for e in result.evicted),
        {k: (p.reasons, p.hints, p.position) for k, p in result.pending.items()},
    )
