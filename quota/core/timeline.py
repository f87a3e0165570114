"""A workload's history as people read it (PURE, standard library only).

The ledger keeps two lists per workload: its primary wait reasons (one row per code it had,
``since``/``until``) and its events (admitted, evicted, requeued, checkpointed, finished).
Read raw, they mislead: a workload that bounces between two reasons, or is evicted over and
over, has hundreds of rows, and the same reason comes back as a new row after every
requeue. ``summarize`` turns them into:

- **rows**: one list in time order (reasons and events interleaved; a reason starting at
  an event's instant follows it), where consecutive rows of the same reason with nothing
  between them are one stretch;
- **totals**: the time waited per reason, longest first, so "waited 2h 10m: 1h 40m
  WaitingForQuota, 30m InsufficientCapacity" stays one line however many rows there are;
- **evictions**, each with its preemptor (workload and ClusterQueue) when it was one.

Redaction is not done here: callers hand in the preemptor as the reader may see it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

EVICTED = "Evicted"
# Under a second is the moment between submission and the first evaluation: noise in the
# summary (the rows still list it).
NOISE_SECONDS = 1.0
UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
# The ClusterQueue an event names; a quota reservation waits in it for admission checks.
WHERE = {"Admitted": "to", "QuotaReserved": "in", EVICTED: "from"}


class WaitRow(Protocol):
    """One primary reason the workload had (the ledger's ``wait_reasons`` row)."""

    @property
    def code(self) -> str: ...
    @property
    def since(self) -> datetime: ...
    @property
    def until(self) -> datetime | None: ...  # None: still its reason


@dataclass(frozen=True, slots=True)
class Preemptor:
    workload: str  # namespace/name, as the reader may see it
    cluster_queue: str | None  # None: the ledger no longer knows the workload


@dataclass(frozen=True, slots=True)
class Happening:
    """One event of the workload: ``type`` Admitted | QuotaReserved | CheckChanged |
    Evicted | Requeued | ..., ``reason`` the event's reason (Preempted, NodeUnhealthy, a
    check's new state, ...); ``cause``: why further (a preemption's cause, the check)."""

    at: datetime
    type: str
    reason: str | None = None
    preemptor: Preemptor | None = None
    cluster_queue: str | None = None  # where it was admitted or evicted from
    cause: str | None = None  # a preemption's cause (InClusterQueue, InCohortReclamation, ...)
    # A requeue after PodsReadyTimeout: when its backoff ends (RFC 3339, as recorded).
    backoff_until: str | None = None


@dataclass(frozen=True, slots=True)
class Stretch:
    """One or more consecutive rows of the same reason."""

    code: str
    since: datetime
    until: datetime | None
    seconds: float
    merged: int  # how many ledger rows it stands for


@dataclass(frozen=True, slots=True)
class Row:
    """A line of the timeline: a stretch of waiting or an event."""

    at: datetime
    stretch: Stretch | None = None
    event: Happening | None = None

    def describe(self) -> str:
        """The line in words, e.g. ``WaitingForQuota for 1h 40m`` or ``Evicted from
        ClusterQueue gpu-a (Preempted, InClusterQueue) by team-b/train-7 of ClusterQueue
        gpu-b`` (how many ledger rows a stretch merges is ``merged``, not worded)."""
        if self.stretch is not None:
            s = self.stretch
            text = f"{s.code} for {format_duration(s.seconds)}"
            if s.until is None:
                text += " (still waiting)"
            return text
        assert self.event is not None
        return describe_event(self.event)


@dataclass(frozen=True, slots=True)
class Timeline:
    rows: tuple[Row, ...]
    totals: tuple[tuple[str, float], ...]  # (code, seconds), longest first
    waited_seconds: float
    still_waiting: bool
    admissions: int
    evictions: tuple[Happening, ...]

    @property
    def evictions_by_reason(self) -> Mapping[str, int]:
        """How many evictions each reason caused, most first (ties by name)."""
        counts = Counter(e.reason or "unknown" for e in self.evictions)
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def summary(self) -> str:
        """``waited 2h 10m: 1h 40m WaitingForQuota, 30m InsufficientCapacity; evicted 3
        times (2 Preempted, 1 NodeUnhealthy)``."""
        if not self.totals:
            text = "no wait recorded"
        else:
            shown = [(c, s) for c, s in self.totals if s >= NOISE_SECONDS] or list(
                self.totals[:1]
            )
            parts = ", ".join(f"{format_duration(s)} {code}" for code, s in shown)
            still = " (still waiting)" if self.still_waiting else ""
            text = f"waited {format_duration(self.waited_seconds)}: {parts}{still}"
        if self.evictions:
            n = len(self.evictions)
            reasons = ", ".join(f"{k} {r}" for r, k in self.evictions_by_reason.items())
            text += f"; evicted {n} time{'s' if n != 1 else ''} ({reasons})"
        return text


def summarize(
    waits: Sequence[WaitRow], events: Sequence[Happening], now: datetime
) -> Timeline:
    """The readable timeline of a workload from its reason rows and events (any order)."""
    # An event and a reason starting at the same instant: the reason is what the event
    # began (an eviction's requeue), so it follows; only a reason that also ended then
    # (a zero-length one) comes first. Rows of one instant keep the ledger's order.
    ordered_waits = sorted(waits, key=lambda w: w.since)
    ordered_events = sorted(events, key=lambda e: e.at)
    items: list[tuple[datetime, int, int, WaitRow | Happening]] = [
        (w.since, 0 if w.until == w.since else 2, i, w) for i, w in enumerate(ordered_waits)
    ] + [(e.at, 1, i, e) for i, e in enumerate(ordered_events)]
    items.sort(key=lambda item: item[:3])
    rows: list[Row] = []
    totals: dict[str, float] = {}
    for at, _, _, item in items:
        if isinstance(item, Happening):
            rows.append(Row(at, event=item))
            continue
        seconds = max(0.0, ((item.until or now) - item.since).total_seconds())
        totals[item.code] = totals.get(item.code, 0.0) + seconds
        last = rows[-1].stretch if rows else None
        if last is not None and last.code == item.code:
            merged = Stretch(last.code, last.since, item.until, last.seconds + seconds,
                             last.merged + 1)  # fmt: skip
            rows[-1] = Row(last.since, stretch=merged)
        else:
            rows.append(Row(at, stretch=Stretch(item.code, at, item.until, seconds, 1)))
    return Timeline(
        rows=tuple(rows),
        totals=tuple(sorted(totals.items(), key=lambda item: (-item[1], item[0]))),
        waited_seconds=sum(totals.values()),
        still_waiting=bool(ordered_waits) and ordered_waits[-1].until is None,
        admissions=sum(1 for e in ordered_events if e.type == "Admitted"),
        evictions=tuple(e for e in ordered_events if e.type == EVICTED),
    )


def describe_event(event: Happening) -> str:
    """An event in words; an eviction names its preemptor and the preemptor's ClusterQueue:
    ``Evicted from ClusterQueue gpu-a (Preempted, InClusterQueue) by team-b/train-7 of
    ClusterQueue gpu-b``; a requeue with a backoff says until when: ``Requeued
    (PodsReadyTimeout), backoff until 2026-12-01T10:06:00+00:00``."""
    text = event.type
    if event.cluster_queue and event.type in WHERE:
        text += f" {WHERE[event.type]} ClusterQueue {event.cluster_queue}"
    why = ", ".join(w for w in (event.reason, event.cause) if w)
    if why:
        text += f" ({why})"
    if event.preemptor is not None:
        queue = event.preemptor.cluster_queue or "unknown"
        text += f" by {event.preemptor.workload} of ClusterQueue {queue}"
    if event.backoff_until:
        text += f", backoff until {event.backoff_until}"
    return text


def format_duration(seconds: float) -> str:
    """The two largest units, e.g. ``2h 40m``, ``40m``, ``3d 4h``, ``1m 5s``, ``45s``."""
    total = max(0, round(seconds))
    for index, (unit, size) in enumerate(UNITS):
        if total >= size:
            text = f"{total // size}{unit}"
            if index + 1 < len(UNITS):
                next_unit, next_size = UNITS[index + 1]
                if second := (total % size) // next_size:
                    text += f" {second}{next_unit}"
            return text
    return "0s"
