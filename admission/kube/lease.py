"""Leadership by a coordination.k8s.io/v1 Lease, the way Kubernetes controllers elect one.

The holder renews ``renewTime``; another replica takes over once it has watched the record
stay unchanged for a whole ``leaseDurationSeconds`` on its own clock (so clock skew between
nodes does not matter). Writes are PUTs carrying the read resourceVersion: of two
replicas racing for an expired lease, one gets 409 Conflict and stays a follower.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from admission.kube.client import LEASES, Kube, Obj
from admission.loop.leader import LeaderView
from quota.core.errors import BerthError, Conflict, NotFound

log = logging.getLogger(__name__)


def _micro_time(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class KubeLease:
    """The loop's ``Leadership`` over a Lease object."""

    def __init__(
        self,
        kube: Kube,
        *,
        namespace: str,
        name: str,
        identity: str,
        duration_seconds: int,
        renew_seconds: float | None = None,  # None: a third of the duration, as the ledger's
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.duration = duration_seconds
        self.renew_seconds = duration_seconds / 3 if renew_seconds is None else renew_seconds
        self.clock = clock
        self.monotonic = monotonic
        self._leading = False
        self._renewed_at = 0.0  # monotonic time of our last successful write
        self._observed: tuple[Any, ...] | None = None  # (holder, renewTime) last seen
        self._observed_at = 0.0
        self._view = LeaderView(leading=False)

    async def acquire(self) -> bool:
        """Try once: create the Lease, renew ours, or take over an expired one."""
        try:
            lease = await self.kube.get(LEASES, self.namespace, self.name)
        except NotFound:
            return await self._create()
        except BerthError as exc:
            log.warning("lease %s/%s unreadable: %s", self.namespace, self.name, exc.message)
            return self._lost(exc.message)
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        self._observe(holder, spec.get("renewTime"))
        if holder and holder != self.identity and not self._expired(spec):
            self._view = LeaderView(
                leading=False, holder=holder, live=True, seen_at=self.monotonic()
            )
            return self._lost()
        return await self._write(lease, taking_over=holder != self.identity)

    def view(self) -> LeaderView:
        """What this replica last saw of the Lease (for ``/readyz``)."""
        return self._view

    async def held(self) -> bool:
        """Whether this replica leads; renews the Lease when a renewal is due."""
        if not self._leading:
            return False
        if self.monotonic() - self._renewed_at < self.renew_seconds:
            return True
        return await self.acquire()

    async def release(self) -> None:
        """Give the Lease up so a follower need not wait for it to expire."""
        if not self._leading:
            return
        self._leading = False
        try:
            lease = await self.kube.get(LEASES, self.namespace, self.name)
            if (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                lease["spec"]["holderIdentity"] = None
                await self.kube.replace(LEASES, self.namespace, self.name, lease)
        except BerthError as exc:
            log.info("lease %s/%s not released: %s", self.namespace, self.name, exc.message)

    async def _create(self) -> bool:
        now = _micro_time(self.clock())
        body: Obj = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self.duration,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            },
        }
        try:
            await self.kube.create(LEASES, self.namespace, body)
        except Conflict:  # another replica created it first
            return self._lost()
        except BerthError as exc:
            log.warning("lease %s/%s not created: %s", self.namespace, self.name, exc.message)
            return self._lost(exc.message)
        return self._won()

    async def _write(self, lease: Obj, *, taking_over: bool) -> bool:
        now = _micro_time(self.clock())
        spec = dict(lease.get("spec") or {})
        if taking_over:
            spec["acquireTime"] = now
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        spec.update(holderIdentity=self.identity, leaseDurationSeconds=self.duration, renewTime=now)
        try:
            await self.kube.replace(LEASES, self.namespace, self.name, {**lease, "spec": spec})
        except Conflict:
            return self._lost()
        except BerthError as exc:
            log.warning("lease %s/%s not renewed: %s", self.namespace, self.name, exc.message)
            return self._lost(exc.message)
        if taking_over:
            log.info("leading as %s (lease %s/%s)", self.identity, self.namespace, self.name)
        return self._won()

    def _observe(self, holder: str, renew_time: object) -> None:
        record = (holder, renew_time)
        if record != self._observed:
            self._observed, self._observed_at = record, self.monotonic()

    def _expired(self, spec: Obj) -> bool:
        duration = int(spec.get("leaseDurationSeconds") or self.duration)
        return self.monotonic() - self._observed_at >= duration

    def _won(self) -> bool:
        self._leading, self._renewed_at = True, self.monotonic()
        self._view = LeaderView(
            leading=True, holder=self.identity, live=True, seen_at=self._renewed_at
        )
        return True

    def _lost(self, error: str | None = None) -> bool:
        if self._leading:
            log.warning("lost the lease %s/%s", self.namespace, self.name)
        self._leading = False
        if error is not None or self._view.leading:
            self._view = LeaderView(leading=False, seen_at=self.monotonic(), error=error)
        return False
