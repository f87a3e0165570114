"""Lease leadership against the fake apiserver: one leader, handover on release and expiry."""

from __future__ import annotations

from builders.fakeapi import FakeKubectl

from admission.kube.client import Kube
from admission.kube.lease import KubeLease

LEASE = "/apis/coordination.k8s.io/v1/namespaces/berth-system/leases/berth-leader"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def replica(kube: Kube, identity: str, clock: Clock) -> KubeLease:
    return KubeLease(
        kube,
        namespace="berth-system",
        name="berth-leader",
        identity=identity,
        duration_seconds=15,
        renew_seconds=5,
        monotonic=clock,
    )


async def test_one_replica_leads_and_hands_over_on_release(
    kube: Kube, kubectl: FakeKubectl
) -> None:
    clock = Clock()
    first, second = replica(kube, "a", clock), replica(kube, "b", clock)
    assert await first.acquire() is True
    assert await second.acquire() is False
    assert kubectl.get(LEASE)["spec"]["holderIdentity"] == "a"
    await first.release()
    assert await first.held() is False
    assert await second.acquire() is True
    lease = kubectl.get(LEASE)["spec"]
    assert (lease["holderIdentity"], lease["leaseTransitions"]) == ("b", 1)


async def test_a_silent_leader_is_replaced_after_the_lease_duration(
    kube: Kube, kubectl: FakeKubectl
) -> None:
    clock = Clock()
    first, second = replica(kube, "a", clock), replica(kube, "b", clock)
    assert await first.acquire()
    assert not await second.acquire()
    clock.now = 14.0
    assert not await second.acquire()  # not yet a whole duration since it saw the record
    clock.now = 15.0
    assert await second.acquire()
    clock.now = 21.0  # the old leader's renewal is due: it finds the lease taken
    assert await first.held() is False


async def test_renewal_keeps_the_lease(kube: Kube, kubectl: FakeKubectl) -> None:
    clock = Clock()
    first, second = replica(kube, "a", clock), replica(kube, "b", clock)
    assert await first.acquire()
    assert not await second.acquire()
    for step in range(1, 8):
        clock.now = step * 5.0
        assert await first.held()
        assert not await second.acquire()
    assert kubectl.get(LEASE)["spec"]["holderIdentity"] == "a"
