"""Fixtures for the Kubernetes tests: a fake apiserver per test, a sync client for it,
Berth's kubernetes-asyncio client pointed at it, and a ledger session scope."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from builders.crds import CRD_DIR
from builders.fakeapi import FakeApiServer, FakeKubectl
from sqlalchemy.orm import sessionmaker

from admission.kube.client import Kube
from admission.kube.jobs import SessionScope
from admission.kube.runtime import api_client
from berth.serve import kube_settings
from berth.settings import Settings

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
_DB_TESTS = (
    "test_end_to_end.py", "test_job_lifecycle.py", "test_kinds.py", "test_mirror.py"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(item.path).name in _DB_TESTS:
            item.add_marker(pytest.mark.db)


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    server = FakeApiServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def kubectl(fake_api: FakeApiServer) -> Iterator[FakeKubectl]:
    client = fake_api.client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def with_crds(kubectl: FakeKubectl) -> FakeKubectl:
    """The fake cluster with Berth's CRDs from deploy/base/crds installed."""
    for path in sorted(CRD_DIR.glob("*.yaml")):
        kubectl.create(CRDS, yaml.safe_load(path.read_text()))
    return kubectl


@pytest.fixture
async def kube(fake_api: FakeApiServer) -> AsyncIterator[Kube]:
    client = Kube(await api_client(kube_settings(Settings(), host=fake_api.url)))
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
def sessions(db_url: str) -> Iterator[SessionScope]:
    """One transaction per call, committed at the end of the block (as ``berth serve``)."""
    engine = sa.create_engine(db_url, poolclass=sa.NullPool)
    try:
        yield sessionmaker(engine, expire_on_commit=False).begin
    finally:
        engine.dispose()
