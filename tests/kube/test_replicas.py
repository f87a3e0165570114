"""Two replicas of Berth (two Kubernetes runtimes, no loop) over one fake API server and
one PostgreSQL ledger: every replica runs the intake watchers, which write the ledger, so
they must agree. Each object becomes exactly one workload, ended once, and neither replica
reports a Conflict (or any other handler error)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa
from builders import frameworks
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import NS, setup_queues
from builders.waiting import eventually

from admission.kube.jobs import SessionScope
from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.job import JOB
from admission.kube.kinds.jobset import JOBSET
from admission.kube.runtime import KubeRuntime, start_kubernetes
from berth.serve import kube_settings
from berth.settings import Settings

pytestmark = pytest.mark.db

# Enough objects that both replicas' first lists and watch events overlap.
OBJECTS: list[tuple[Adapter, str]] = [
    *((JOB, f"job-{i}") for i in range(12)),
    *((JOBSET, f"set-{i}") for i in range(4)),
]
PODS = f"/api/v1/namespaces/{NS}/pods"
GROUPS = [f"solo-{i}" for i in range(4)]  # Pods naming a queue: groups of one


@contextlib.asynccontextmanager
async def replicas(fake_api: FakeApiServer, sessions: SessionScope,
                   count: int) -> AsyncIterator[list[KubeRuntime]]:  # fmt: skip
    settings = kube_settings(Settings(), host=fake_api.url, nodes=False, status_seconds=0.2)
    runtimes = [await start_kubernetes(settings, sessions, lambda: None) for _ in range(count)]
    try:
        async with asyncio.timeout(10):
            for runtime in runtimes:
                await runtime.wait_synced()
        yield runtimes
    finally:
        for runtime in runtimes:
            await runtime.stop()


def rows(sessions: SessionScope) -> dict[str, list[str]]:
    """name -> the states of every workload row of that name."""
    with sessions() as session:
        found = session.execute(sa.text(
            "SELECT name, state FROM workloads WHERE namespace = :ns ORDER BY id"), {"ns": NS})
        out: dict[str, list[str]] = {}
        for name, state in found:
            out.setdefault(name, []).append(state)
    return out


def create_all(kubectl: FakeKubectl) -> None:
    for adapter, name in OBJECTS:
        kubectl.create(frameworks.collection(adapter), frameworks.workload(adapter, name))
    for name in GROUPS:
        kubectl.create(PODS, frameworks.pod(name))


async def test_two_replicas_record_each_object_once_and_end_it_once(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    frameworks.install(with_crds)
    setup_queues(with_crds)
    names = [name for _, name in OBJECTS] + GROUPS
    with caplog.at_level(logging.WARNING, logger="admission.kube"):
        create_all(with_crds)  # before the replicas start: both list them at once
        async with replicas(fake_api, sessions, 2):
            more = [(a, f"{n}-late") for a, n in OBJECTS]  # and watched by both
            for adapter, name in more:
                with_crds.create(frameworks.collection(adapter), frameworks.workload(adapter, name))
            names += [name for _, name in more]
            await eventually(lambda: set(rows(sessions)) == set(names), what="all recorded")
            for adapter, name in OBJECTS + more:
                frameworks.finish(with_crds, adapter, name)
            for name in GROUPS:
                with_crds.delete(f"{PODS}/{name}")
            await eventually(lambda: all(s == ["Finished"] for s in rows(sessions).values()),
                             what="all ended")  # fmt: skip
            await asyncio.sleep(0.5)  # let the slower replica's events land too
    assert rows(sessions) == {name: ["Finished"] for name in names}
    problems = [r.getMessage() for r in caplog.records if r.name.startswith("admission.kube")]
    assert problems == []
