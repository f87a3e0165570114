"""The loop reads each waiting workload's primary code alone, and builds few statuses: both
must agree with the statuses the mapping itself gives."""

from __future__ import annotations

from builders.engine import GPU, T0, admitted, cq, snapshot, wl
from hypothesis import given, settings
from hypothesis import strategies as st

from admission.engine.cycle import run_cycle
from admission.engine.statuses import PendingStatuses
from quota.core.model import QueueingStrategy
from quota.core.workload import Workload

QUEUES = ("a", "b", "c")


@st.composite
def workloads(draw: st.DrawFn) -> list[Workload]:
    out = []
    for i in range(draw(st.integers(0, 14))):
        ns = draw(st.sampled_from(QUEUES))
        found = wl(f"w{i}", {GPU: draw(st.integers(1, 9))}, ns=ns,
                   priority=draw(st.integers(0, 3)), created=draw(st.integers(0, 5)),
                   active=draw(st.booleans()) or draw(st.booleans()),
                   queue=draw(st.sampled_from(["lq", "lq", "lq", "missing"])))
        if draw(st.integers(0, 4)) == 0:
            found = admitted(found, ns)
        out.append(found)
    return out


@settings(max_examples=150, deadline=None)
@given(
    quotas=st.lists(st.integers(0, 8), min_size=3, max_size=3),
    strict=st.lists(st.booleans(), min_size=3, max_size=3),
    pending=workloads(),
)
def test_code_and_build_agree_with_the_full_statuses(
    quotas: list[int], strict: list[bool], pending: list[Workload]
) -> None:
    queues = [
        cq(name, {"default": {GPU: amount}}, cohort="all",
           strategy=QueueingStrategy.STRICT_FIFO if fifo else None)
        for name, amount, fifo in zip(QUEUES, quotas, strict, strict=True)
    ]
    result = run_cycle(snapshot(*queues, *pending), T0)
    statuses = result.pending
    assert isinstance(statuses, PendingStatuses)
    codes = {key: statuses.code(key) for key in statuses}
    some = sorted(statuses)[::2]
    few = statuses.build(some)  # before the mapping built them all

    assert codes == {key: status.reason.code for key, status in statuses.items()}
    assert few == {key: statuses[key] for key in some}
