"""Holdings: the unprotected holders victim searches list per ClusterQueue are kept, and
forgotten when the queue's holders change or one of them is protected."""

from __future__ import annotations

from builders.engine import GPU, M, admitted, wl

from admission.engine.workload import Holdings, held_usage
from quota.core.workload import Workload


def _holdings(*workloads: Workload) -> Holdings:
    holdings = Holdings()
    for workload in workloads:
        holdings.add("a", workload, held_usage(workload))
    return holdings


def _keys(holdings: Holdings, cq: str = "a") -> list[str]:
    return [w.key for w, queue in holdings.open_entries(cq) if queue == cq]


def test_open_entries_leave_out_a_holder_once_it_is_protected() -> None:
    one, two = admitted(wl("one", {GPU: 1}), "a"), admitted(wl("two", {GPU: 1}), "a")
    holdings = _holdings(one, two)
    assert _keys(holdings) == ["a/one", "a/two"]
    holdings.protect(["a/one"])
    assert _keys(holdings) == ["a/two"]
    assert "a/one" in holdings.protected


def test_open_entries_follow_holders_added_and_removed() -> None:
    one = admitted(wl("one", {GPU: 1}), "a")
    holdings = _holdings(one)
    assert _keys(holdings) == ["a/one"]
    holdings.add("a", admitted(wl("two", {GPU: 2}), "a"), {("default", GPU): 2 * M})
    assert _keys(holdings) == ["a/one", "a/two"]
    holdings.remove("a/one")
    assert _keys(holdings) == ["a/two"]


def test_protecting_a_key_of_another_queue_keeps_this_queues_answer() -> None:
    holdings = _holdings(admitted(wl("one", {GPU: 1}), "a"))
    holdings.add("b", admitted(wl("other", {GPU: 1}, ns="b"), "b"), {("default", GPU): M})
    assert _keys(holdings) == ["a/one"]
    holdings.protect(["b/other", "not/held"])
    assert _keys(holdings) == ["a/one"]
    assert _keys(holdings, "b") == []
