"""Reclaim what the ledger holds for workload objects that no longer exist.

The watches report deletions while Berth runs; an object deleted while no Berth was running
(or whose deletion was missed) would keep its quota for ever. When a leader starts, each
watched kind is listed once and every workload of an object of that kind that is not in
the list is finished as ``Reclaimed``: its quota is released and its usage closed with
that reason.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime

from admission.engine.types import Snapshot
from admission.kube import templates
from admission.kube.client import Kube, Obj
from admission.kube.jobs import ACTOR, Finish, SessionScope
from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.job import JOB
from quota.core.errors import BerthError
from quota.core.metering import IntervalEnd
from quota.core.workload import Workload, WorkloadState
from quota.ledger.repository import Ledger

log = logging.getLogger(__name__)


def orphaned(
    workloads: Iterable[Workload],
    live: Mapping[str, str | None],
    listed_at: datetime,
    kind: str = "Job",
) -> list[str]:
    """Keys of the unfinished workloads whose object is gone (PURE): they came from an
    object of ``kind`` (they carry its uid), were recorded before the list was taken (a
    newer one may belong to an object created after it), and no listed object has their
    key with their uid."""
    out = []
    for workload in workloads:
        uid = workload.annotations.get(templates.JOB_UID)
        if workload.kind != kind or uid is None or workload.state is WorkloadState.FINISHED:
            continue
        if workload.created_at >= listed_at:
            continue
        if workload.key not in live or live[workload.key] not in (None, uid):
            out.append(workload.key)
    return sorted(out)


def live_jobs(listing: Obj) -> dict[str, str | None]:
    """``namespace/name`` → uid of every object in a list response."""
    out: dict[str, str | None] = {}
    for item in listing.get("items") or []:
        meta = item.get("metadata") or {}
        out[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = meta.get("uid")
    return out


class JobReclaimer:
    """Finishes, as Reclaimed, the workloads of objects missing from a fresh list of their
    kind (``adapters``: the kinds watched)."""

    def __init__(
        self,
        kube: Kube,
        sessions: SessionScope,
        finish: Finish,
        *,
        label_selector: str | None,
        notify: Callable[[], None] = lambda: None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        adapters: Sequence[Adapter] = (JOB,),
    ) -> None:
        self.adapters = tuple(adapters)
        self.kube = kube
        self.sessions = sessions
        self.finish = finish
        self.label_selector = label_selector
        self.notify = notify
        self.clock = clock

    async def reconcile(self, ledger_view: Snapshot) -> list[str]:
        """One pass; the keys reclaimed."""
        reclaimed: list[str] = []
        for adapter in self.adapters:
            reclaimed.extend(await self._reconcile(adapter, ledger_view))
        return reclaimed

    async def _reconcile(self, adapter: Adapter, ledger_view: Snapshot) -> list[str]:
        listed_at = self.clock()
        kind = adapter.kind
        try:
            listing = await self.kube.list(adapter.ref, label_selector=self.label_selector)
        except BerthError as exc:
            log.warning("reclaim: %ss not listed, nothing reclaimed: %s", kind, exc.message)
            return []
        workloads = ledger_view.workloads.values()
        keys = orphaned(workloads, live_jobs(listing), listed_at, kind=kind)
        if keys:
            await asyncio.to_thread(self._finish, keys, self.clock())
            log.warning("reclaim: quota of %d workloads without a %s released: %s",
                        len(keys), kind, ", ".join(keys))  # fmt: skip
            self.notify()
        return keys

    def _finish(self, keys: list[str], now: datetime) -> None:
        for key in keys:
            namespace, _, name = key.partition("/")
            with self.sessions() as session:
                self.finish(Ledger(session), namespace, name, now=now, actor=ACTOR,
                            end=IntervalEnd.RECLAIMED)
