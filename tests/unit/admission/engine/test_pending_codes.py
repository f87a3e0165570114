"""The loop reads each waiting workload's primary code alone, and builds few statuses: both
must agree with the statuses the mapping itself gives. Positions are each ClusterQueue's
pending order over the workloads that wait in it, whichever way they came to wait."""

from __future__ import annotations

from dataclasses import replace

from builders.engine import GPU, T0, admitted, at, cq, snapshot, wl
from hypothesis import given, settings
from hypothesis import strategies as st

from admission.engine.cycle import run_cycle
from admission.engine.statuses import PendingStatuses
from admission.engine.types import Snapshot
from quota.core.model import LocalQueue, QueueingStrategy
from quota.core.reasons import WaitReason
from quota.core.workload import Workload, WorkloadState, pending_order

QUEUES = ("a", "b", "c")


@st.composite
def workloads(draw: st.DrawFn) -> list[Workload]:
    out = []
    for i in range(draw(st.integers(0, 14))):
        ns = draw(st.sampled_from(QUEUES))
        found = wl(f"w{i}", {GPU: draw(st.integers(1, 9))}, ns=ns,
                   priority=draw(st.integers(0, 3)), created=draw(st.integers(0, 5)),
                   active=draw(st.booleans()) or draw(st.booleans()),
                   queue=draw(st.sampled_from(["lq", "lq", "lq2", "missing"])))
        kind = draw(st.integers(0, 9))
        if kind <= 1:
            found = admitted(found, ns)
        elif kind == 2:  # backing off after PodsReadyTimeout: waits outside the queue
            found = replace(found, evicted_at=at(draw(st.integers(0, 5))),
                            requeue_at=at(draw(st.sampled_from([-1, 30]))), requeue_count=1)
        out.append(found)
    return out


def _places(state: Snapshot, statuses: PendingStatuses) -> dict[str, int]:
    """The reference: number each ClusterQueue's waiting workloads in pending order (least
    used LocalQueue first under admission fair sharing), leaving out the deactivated and
    those holding quota for their checks."""
    by_queue: dict[str, list[tuple[float, tuple[int, object, str]]]] = {}
    used = state.queue_usage or {}
    for key, status in statuses.items():
        workload = state.workloads[key]
        queue = status.cluster_queue
        if (queue is None or queue not in state.cluster_queues
                or status.reason.code is WaitReason.DEACTIVATED
                or workload.state is WorkloadState.QUOTA_RESERVED):
            continue
        usage = used.get(f"{workload.namespace}/{workload.queue_name}", 0.0)
        if not state.cluster_queues[queue].usage_based_admission:
            usage = 0.0
        by_queue.setdefault(queue, []).append(
            (usage, pending_order(workload, state.pods_ready.timestamp, key)))
    return {order[2]: place for entries in by_queue.values()
            for place, (_, order) in enumerate(sorted(entries), start=1)}


@settings(max_examples=150, deadline=None)
@given(
    quotas=st.lists(st.integers(0, 8), min_size=3, max_size=3),
    strict=st.lists(st.booleans(), min_size=3, max_size=3),
    by_usage=st.lists(st.booleans(), min_size=3, max_size=3),
    usage=st.lists(st.floats(0, 3), min_size=6, max_size=6),
    pending=workloads(),
)
def test_codes_positions_and_build_agree_with_the_full_statuses(
    quotas: list[int], strict: list[bool], by_usage: list[bool], usage: list[float],
    pending: list[Workload],
) -> None:
    queues = [
        replace(cq(name, {"default": {GPU: amount}}, cohort="all",
                   strategy=QueueingStrategy.STRICT_FIFO if fifo else None),
                usage_based_admission=fair)
        for name, amount, fifo, fair in zip(QUEUES, quotas, strict, by_usage, strict=True)
    ]
    second = [LocalQueue(name, "lq2", name) for name in QUEUES]  # two LocalQueues a queue
    lqs = [f"{ns}/{lq}" for ns in QUEUES for lq in ("lq", "lq2")]
    state = replace(snapshot(*queues, *second, *pending),
                    queue_usage=dict(zip(lqs, usage, strict=True)))
    result = run_cycle(state, T0)
    statuses = result.pending
    assert isinstance(statuses, PendingStatuses)
    codes = statuses.codes()
    one_by_one = {key: statuses.code(key) for key in statuses}
    some = sorted(statuses)[::2]
    few = statuses.build(some)  # before the mapping built them all

    assert codes == one_by_one == {key: status.reason.code for key, status in statuses.items()}
    assert few == {key: statuses[key] for key in some}
    assert {k: s.position for k, s in statuses.items() if s.position} == _places(state, statuses)
