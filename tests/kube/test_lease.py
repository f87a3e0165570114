"""Lease leadership against the fake apiserver: one leader, handover on release and expiry;
failures logged with the API server's reason, once per cause per minute; where the Lease goes."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml
from builders.fakeapi import FakeKubectl

from admission.kube.client import Kube
from admission.kube.lease import KubeLease
from admission.kube.runtime import lease_namespace
from berth.serve import kube_settings
from berth.settings import ClusterSettings, Settings

LEASE = "/apis/coordination.k8s.io/v1/namespaces/berth-system/leases/berth-leader"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def berth_system(kubectl: FakeKubectl) -> None:
    kubectl.namespace("berth-system")


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


async def test_a_leader_that_stops_renewing_no_longer_says_it_leads(kube: Kube) -> None:
    clock = Clock()
    leader, follower = replica(kube, "a", clock), replica(kube, "b", clock)
    assert not leader.leads()  # before it has tried
    assert await leader.acquire() and not await follower.acquire()
    assert leader.leads() and not follower.leads()
    clock.now = 14.9  # inside the duration since its last write
    assert leader.leads()
    clock.now = 15.0  # a follower may take the Lease now: the old leader must stop
    assert not leader.leads()
    assert await leader.held() and leader.leads()  # renewing makes it lead again


def lease_failures(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "admission.kube.lease"]


async def test_each_failure_cause_is_logged_at_once_then_at_most_once_a_minute(
    kube: Kube, kubectl: FakeKubectl, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    lease = KubeLease(kube, namespace="nowhere", name="berth-leader", identity="a",
                      duration_seconds=15, monotonic=clock)  # fmt: skip
    caplog.set_level(logging.INFO, logger="admission.kube.lease")
    for clock.now in (0.0, 1.0, 59.0):
        assert await lease.acquire() is False
    (missing,) = lease_failures(caplog)
    assert missing == (
        "cannot create the Lease nowhere/berth-leader: not found: "
        'Lease nowhere/berth-leader: namespaces "nowhere" not found'
    )
    assert lease.view().why_not() == missing
    kubectl.forbid("coordination.k8s.io", "leases")
    clock.now = 59.5  # a new cause: logged although the last line is not a minute old
    assert await lease.acquire() is False
    clock.now = 61.0  # the first cause, were it still failing, would be due again
    assert await lease.acquire() is False
    assert len(lease_failures(caplog)) == 2
    assert lease_failures(caplog)[1].startswith(
        "cannot read the Lease nowhere/berth-leader: forbidden: "
    )
    clock.now = 119.5  # a minute after the forbidden line: logged again
    assert await lease.acquire() is False
    assert len(lease_failures(caplog)) == 3


async def test_a_follower_says_who_leads_and_since_when(kube: Kube, kubectl: FakeKubectl) -> None:
    clock = Clock()
    first, second = replica(kube, "a", clock), replica(kube, "b", clock)
    assert await first.acquire() and not await second.acquire()
    acquired = kubectl.get(LEASE)["spec"]["acquireTime"]
    view = second.view()
    assert (view.leading, view.holder, view.live) == (False, "a", True)
    assert view.since is not None and view.since.isoformat().startswith(acquired[:19])
    assert view.why_not() == "a leads: it holds the Lease berth-system/berth-leader and renews it"
    assert first.view().why_not() is None and first.view().since == view.since


@pytest.mark.parametrize(
    ("setting", "context", "expected"),
    [
        pytest.param(None, None, "team-ops", id="the current context's namespace"),
        pytest.param(None, "bare", "default", id="a context without a namespace: default"),
        pytest.param("berth", None, "berth", id="the setting wins over the kubeconfig"),
    ],
)
def test_out_of_the_cluster_the_lease_goes_to_the_kubeconfig_contexts_namespace(
    tmp_path: Path, setting: str | None, context: str | None, expected: str
) -> None:
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "ops",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [
            {"name": "ops", "context": {"cluster": "c", "user": "u", "namespace": "team-ops"}},
            {"name": "bare", "context": {"cluster": "c", "user": "u"}},
        ],
    }  # fmt: skip
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    tree = Settings(kube=ClusterSettings(kubeconfig=str(path), context=context,
                                         lease_namespace=setting))  # fmt: skip
    assert lease_namespace(kube_settings(tree)) == expected


def test_a_plain_api_url_puts_the_lease_in_default() -> None:
    assert lease_namespace(kube_settings(Settings(), host="http://127.0.0.1:1")) == "default"
