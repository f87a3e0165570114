"""Builders for the read-API tests: a ledger driven through the real submit path and the
real admission loop on a settable clock, and a Berth server (optionally with tokens)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import sqlalchemy as sa
from fastapi import FastAPI
from sqlalchemy.orm import sessionmaker

from admission.intake.workloads import finish_workload, submit_workload
from admission.loop.actuation import Actuation
from admission.loop.loop import AdmissionLoop
from api.auth import Grant
from api.deps import AppContext, Readiness
from builders.manifests import GPU, job
from builders.served import running, served
from quota.ledger.apply import apply_objects
from quota.ledger.connect import Transactions
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts


def pool(*queues: tuple[str, int], cohort: str | None = "all") -> str:
    """Flavor ``h100``; per (name, GPUs) a ClusterQueue and a LocalQueue ``main`` in the
    namespace of the same name."""
    docs = ["apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n"]
    for name, gpus in queues:
        extra = f"  cohort: {cohort}\n" if cohort else ""
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
            f"spec:\n{extra}  namespaceSelector: {{}}\n  resourceGroups:\n"
            f"    - coveredResources: [{GPU}]\n      flavors:\n        - name: h100\n"
            f"          resources:\n            - {{name: {GPU}, nominalQuota: {gpus}}}\n"
        )
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
            f"metadata: {{name: main, namespace: {name}}}\nspec: {{clusterQueue: {name}}}\n"
        )
    return "---\n".join(docs)


class _Quiet:
    async def actuate(self, actions: Sequence[Actuation]) -> None:
        return None


@dataclass
class World:
    """A ledger whose clock the test moves: submit, finish and run cycles at ``now``."""

    url: str
    now: datetime = field(default_factory=lambda: datetime.now(UTC) - timedelta(hours=6))

    def __post_init__(self) -> None:
        self.start = self.now
        self.engine = sa.create_engine(self.url, poolclass=sa.NullPool)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False).begin
        self.loop = AdmissionLoop(self.sessions, _Quiet(), clock=lambda: self.now)
        self._began = False

    def apply(self, text: str) -> None:
        with self.sessions() as session:
            apply_objects(Ledger(session), parse_texts([("test", text)]), actor="test")

    def submit(self, name: str, gpus: int, namespace: str, **options: Any) -> None:
        """Submit ``job(name, gpus, namespace=namespace, **options)`` at ``now``."""
        with self.sessions() as session:
            doc = job(name, gpus, namespace=namespace, **options)
            submit_workload(Ledger(session), doc, now=self.now, actor="test")

    def finish(self, namespace: str, name: str) -> None:
        with self.sessions() as session:
            finish_workload(Ledger(session), namespace, name, now=self.now, actor="test")

    def cycle(self) -> None:
        async def run() -> None:
            if not self._began:
                await self.loop.begin()
                self._began = True
            await self.loop.cycle()

        asyncio.run(run())

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)

    def close(self) -> None:
        self.engine.dispose()


def serve(
    url: str, tokens: Sequence[Grant] = (), **options: Any
) -> contextlib.AbstractContextManager[httpx.Client]:
    """Berth under uvicorn on a loopback port over ``url``; a client for it. ``options``
    go to ``create_app`` (e.g. ``simulation=SimulationLimits(...)``)."""
    return served(url, tokens, app_options=options)


def berth_context(engine: sa.Engine, tokens: Sequence[Grant] = ()) -> AppContext:
    """The context ``berth serve`` gives the app, over ``engine``."""
    return AppContext(
        session_scope=Transactions(engine),
        readiness=lambda: Readiness(True, "test"),
        tokens=tuple(tokens),
    )


@contextlib.contextmanager
def serving(app: FastAPI) -> Iterator[httpx.Client]:
    """``app`` under uvicorn on a loopback port; a client for it."""
    with running(app) as base, httpx.Client(base_url=base, timeout=30) as client:
        yield client
