"""Pending verdicts (PURE): each waiting workload's reasons, hints and queue position.

A full cycle leaves tens of thousands of workloads waiting, and their quota reasons cost
more than the decisions themselves (a dozen formatted quantities each). The cycle hands
out a mapping whose ``PendingStatus`` values are built from the cycle's final quota state
when the first one is read: a caller that needs only decisions (or only the keys, or the
count) does not pay for the verdicts. The durable loop needs, per workload, only whether
its primary code changed: ``codes`` answers that for all of them in one pass, without
formatting any message, and ``build`` makes the full statuses of the few it will write.
Positions come from the cycle's own queues, already in order: nothing is sorted again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from admission.engine import reasons
from admission.engine.collector import collector_paused
from admission.engine.queues import Entry, order_queue
from admission.engine.types import PendingStatus, Reason
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.reasons import WaitReason
from quota.core.workload import PendingOrder, Workload, WorkloadState, pending_order

_PENDING = WaitReason.PENDING_EVALUATION


def _precedence(code: WaitReason) -> int:
    return code.precedence


def _primary(found: Sequence[Reason]) -> WaitReason:
    """The highest-precedence code of ``found``; PendingEvaluation for none (as a status
    without reasons gets)."""
    return _least(found, None) or _PENDING


def _least(found: Sequence[Reason], ignore: WaitReason | None) -> WaitReason | None:
    codes = [r.code for r in found if r.code is not ignore]
    if len(codes) < 2:
        return codes[0] if codes else None
    return min(codes, key=_precedence)


# (ClusterQueue name, workload key, workload) -> its quota reasons and hints in the final state
QuotaReasons = Callable[[str, str, Workload], tuple[Sequence[Reason], Sequence[str]]]


@dataclass(slots=True)
class Waiting:
    """What the cycle decided about a workload that stays pending."""

    cluster_queue: str | None
    reasons: list[Reason]
    hints: list[str] = field(default_factory=list)
    blocked_by: str | None = None  # the StrictFIFO head it waits behind
    quota: bool = False  # its quota reasons are still to be written
    # Victims it would take but for their minimum runtime: key -> when that ends.
    held_back: Mapping[str, datetime] | None = None


class PendingStatuses(Mapping[str, PendingStatus]):
    """Workload key -> ``PendingStatus``, built when the first one is read (keys sorted)."""

    __slots__ = ("_built", "_codes", "_keys", "_least", "_outside", "_places", "_queued",
                 "_queues", "_quota", "_shape", "_timestamp", "_used", "_waiting",
                 "_workloads")

    def __init__(
        self,
        waiting: Mapping[str, Waiting],
        workloads: Mapping[str, Workload],
        queues: Mapping[str, object],
        quota: QuotaReasons,
        queue_usage: Mapping[str, float] | None = None,
        *,
        timestamp: RequeuingTimestamp,
        queued: Mapping[str, Sequence[Entry]],
        outside: Sequence[str],
        shape: Callable[[Workload, str], int],
    ) -> None:
        """``queued``: the cycle's queues, each in its order (admission fair sharing's
        included), as ``waiting``'s workloads were taken from them; ``outside``: the keys
        ``waiting`` held before the queues were worked (held back, backing off: in none of
        them). ``shape``: a workload's shape id (equal ids, equal quota reasons)."""
        self._timestamp = timestamp  # waitForPodsReady's: how requeued workloads order
        self._used = queue_usage  # admission fair sharing: LocalQueue usage orders first
        self._waiting = waiting
        self._workloads = workloads
        self._queues = queues
        self._quota = quota
        self._queued = queued
        self._outside = outside
        self._shape = shape
        self._codes: dict[str, WaitReason] | None = None
        self._keys = sorted(waiting)
        self._built: dict[str, PendingStatus] | None = None
        self._places: dict[str, int] | None = None
        # id of a shared quota-reason list -> its primary code (and without PendingEvaluation)
        self._least: dict[int, tuple[WaitReason | None, WaitReason | None]] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._waiting

    def __getitem__(self, key: str) -> PendingStatus:
        if self._built is None:
            self._built = self._build_all()
        return self._built[key]

    def __repr__(self) -> str:
        return f"PendingStatuses({len(self._keys)} workloads)"

    def code(self, key: str) -> WaitReason:
        """The primary code of ``key``'s status, as ``self[key].reason.code`` would give it,
        without building any message (quota reasons are shared per queue state anyway)."""
        entry = self._waiting[key]
        found = entry.reasons
        cq = entry.cluster_queue
        if cq is None or (not entry.quota and entry.blocked_by is None):
            return _primary(found)
        codes = [r.code for r in found]
        if entry.quota:
            more = self._quota(cq, key, self._workloads[key])[0]
            least = self._least.get(id(more))
            if least is None:
                least = self._least[id(more)] = (_least(more, None), _least(more, _PENDING))
            least_code = least[0] if entry.blocked_by is None else least[1]
            if least_code is not None:
                codes.append(least_code)
        if entry.blocked_by is not None:
            codes.append(WaitReason.BLOCKED_BY_QUEUE_HEAD)
        return min(codes, key=_precedence) if codes else _PENDING

    def codes(self) -> Mapping[str, WaitReason]:
        """Every waiting workload's primary code (``code``), in one pass: a workload
        parked on quota alone has the code of its (queue, shape), looked up once per pair."""
        if self._codes is None:
            self._codes = self._all_codes()
        return self._codes

    def _all_codes(self) -> dict[str, WaitReason]:
        out: dict[str, WaitReason] = {}
        by_state: dict[tuple[str | None, int], WaitReason] = {}
        code, shape, workloads = self.code, self._shape, self._workloads
        for key, entry in self._waiting.items():
            if entry.quota and entry.blocked_by is None and not entry.reasons:
                state = (entry.cluster_queue, shape(workloads[key], key))
                found = by_state.get(state)
                if found is None:
                    found = by_state[state] = code(key)
                out[key] = found
            else:
                out[key] = code(key)
        return out

    def build(self, keys: Iterable[str]) -> dict[str, PendingStatus]:
        """The statuses of ``keys`` only (equal to those ``self[key]`` gives)."""
        if self._built is not None:
            built = self._built
            return {key: built[key] for key in keys}
        with collector_paused():
            position = self._position()
            waiting = self._waiting
            return {key: self._build(key, waiting[key], position) for key in keys}

    def _build_all(self) -> dict[str, PendingStatus]:
        # All at once, with the collector off as in the cycle: built one by one between
        # the caller's reads, each batch of small values would start a collection that
        # walks the whole snapshot again (it tripled the cost of reading every verdict).
        return self.build(self._keys)

    def _position(self) -> dict[str, int]:
        """1-based places in each ClusterQueue's pending order (computed once)."""
        if self._places is None:
            self._places = self._positions()
        return self._places

    def _positions(self) -> dict[str, int]:
        """Each queue's waiting workloads keep the order the cycle took them in; the few
        held outside the queues (held back, backing off) are merged in by that order."""
        waiting, workloads, queues = self._waiting, self._workloads, self._queues
        extra: dict[str, list[PendingOrder]] = {}
        deactivated, timestamp = WaitReason.DEACTIVATED, self._timestamp
        for key in self._outside:
            entry = waiting[key]
            cq = entry.cluster_queue
            if cq is None or cq not in queues:
                continue
            if any(r.code is deactivated for r in entry.reasons):
                continue  # a deactivated workload is out of the queue: it takes no place
            workload = workloads[key]
            if workload.state is WorkloadState.QUOTA_RESERVED:
                continue  # past the queue: it holds quota and waits for its checks
            extra.setdefault(cq, []).append(pending_order(workload, timestamp, key))
        positions: dict[str, int] = {}
        for cq in {*self._queued, *extra}:
            order: list[tuple[Any, ...]] = [e for e in self._queued.get(cq, ())
                                            if e.key in waiting]
            more = extra.get(cq)
            if more:
                order += more
                self._sort(cq, order)
            for place, found in enumerate(order, start=1):
                positions[found[2]] = place
        return positions

    def _sort(self, cq: str, order: list[tuple[Any, ...]]) -> None:
        """``order`` as the cycle orders a queue (admission fair sharing's least used
        LocalQueue first, else priority and age)."""
        used, workloads = self._used, self._workloads
        fair = used is not None and getattr(self._queues[cq], "usage_based_admission", False)
        order_queue(order, used if fair else None, lambda o: workloads[o[2]])

    def _build(self, key: str, entry: Waiting, position: Mapping[str, int]) -> PendingStatus:
        # The parked reasons and hints are shared by every workload in the same state:
        # combined into new sequences, never changed in place.
        found: Sequence[Reason] = entry.reasons
        hints: Sequence[str] = entry.hints
        cq = entry.cluster_queue
        if entry.quota and cq is not None:
            more, hints = self._quota(cq, key, self._workloads[key])
            if entry.blocked_by is not None:
                more = [r for r in more if r.code is not WaitReason.PENDING_EVALUATION]
            found = [*found, *more] if found else more
            if entry.held_back:
                found, hints = reasons.held_back(found, hints, entry.held_back)
        if entry.blocked_by is not None and cq is not None:
            found = [*found, reasons.blocked_by_queue_head(cq, entry.blocked_by, position[key])]
        if not found:  # pragma: no cover - every parked workload has a reason
            found = [reasons.pending_evaluation()]
        return PendingStatus(
            key=key,
            cluster_queue=cq,
            reasons=(found[0],) if len(found) == 1 else reasons.sort_reasons(found),
            hints=tuple(hints),
            position=position.get(key),
        )
