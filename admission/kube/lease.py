"""Leadership by a coordination.k8s.io/v1 Lease, the way Kubernetes controllers elect one.

The holder renews ``renewTime``; another replica takes over once it has watched the record
stay unchanged for a whole ``leaseDurationSeconds`` on its own clock (so clock skew between
nodes does not matter). Writes are PUTs carrying the read resourceVersion: of two
replicas racing for an expired lease, one gets 409 Conflict and stays a follower.

Leadership never fails silently: every failure to read, create or renew the Lease is
logged with the API server's reason (a missing namespace is ``not found``, a Role without
Leases ``forbidden``), once per cause per minute (``FailureLog``), and the sentence is
what ``view().why_not()`` says (``GET /api/v1/leader``, ``/readyz``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from admission.kube.client import LEASES, Kube, Obj
from admission.kube.failure_log import FailureLog
from admission.loop.leader import LeaderView
from quota.core.errors import BerthError, Conflict, NotFound

log = logging.getLogger(__name__)


def _micro_time(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(value: object) -> datetime | None:
    """A Lease's MicroTime (or a plain RFC 3339 time), ``None`` when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


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
        self.where = f"the Lease {namespace}/{name}"
        self.failures = FailureLog(log, monotonic=monotonic)
        self._since: datetime | None = None  # the holder's acquireTime, as last seen
        self._view = LeaderView(leading=False, lease=self.where)

    async def acquire(self) -> bool:
        """Try once: create the Lease, renew ours, or take over an expired one."""
        try:
            lease = await self.kube.get(LEASES, self.namespace, self.name)
        except NotFound:
            return await self._create()
        except BerthError as exc:
            return self._lost(self.failures.failed(f"read {self.where}", exc))
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        self._observe(holder, spec.get("renewTime"))
        self._since = _parse_time(spec.get("acquireTime"))
        if holder and holder != self.identity and not self._expired(spec):
            self._view = LeaderView(
                leading=False, holder=holder, live=True, seen_at=self.monotonic(),
                since=self._since, lease=self.where,
            )  # fmt: skip
            return self._lost()
        return await self._write(lease, taking_over=holder != self.identity)

    def view(self) -> LeaderView:
        """What this replica last saw of the Lease (``/readyz``, ``GET /api/v1/leader``)."""
        return self._view

    def leads(self) -> bool:
        """Whether this replica leads now, without asking the API server: it holds the Lease
        and its last write is younger than the Lease's duration (the loop renews it)."""
        return self._leading and self.monotonic() - self._renewed_at < self.duration

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
            self.failures.failed(f"release {self.where}", exc, level=logging.INFO)

    async def _create(self) -> bool:
        at = self.clock()
        now = _micro_time(at)
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
        except Conflict as exc:  # another replica created it first: it leads
            self.failures.failed(f"create {self.where}", exc, level=logging.INFO)
            return self._lost()
        except BerthError as exc:
            return self._lost(self.failures.failed(f"create {self.where}", exc))
        self._since = at
        return self._won()

    async def _write(self, lease: Obj, *, taking_over: bool) -> bool:
        now = _micro_time(self.clock())
        spec = dict(lease.get("spec") or {})
        if taking_over:
            spec["acquireTime"] = now
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        spec.update(holderIdentity=self.identity, leaseDurationSeconds=self.duration, renewTime=now)
        verb = "take over" if taking_over else "renew"
        try:
            await self.kube.replace(LEASES, self.namespace, self.name, {**lease, "spec": spec})
        except Conflict as exc:  # another replica wrote it in between
            self.failures.failed(f"{verb} {self.where}", exc, level=logging.INFO)
            return self._lost()
        except BerthError as exc:
            return self._lost(self.failures.failed(f"{verb} {self.where}", exc))
        self._since = _parse_time(spec.get("acquireTime"))
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
            leading=True, holder=self.identity, live=True, seen_at=self._renewed_at,
            since=self._since, lease=self.where,
        )  # fmt: skip
        return True

    def _lost(self, error: str | None = None) -> bool:
        if self._leading:
            log.warning("lost the lease %s/%s", self.namespace, self.name)
        self._leading = False
        if error is not None or self._view.leading:
            self._view = LeaderView(
                leading=False, seen_at=self.monotonic(), error=error, lease=self.where
            )
        return False
