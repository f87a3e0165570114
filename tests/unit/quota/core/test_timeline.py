"""The readable timeline: merging, ordering, totals per reason, evictions and preemptors;
a property that any history comes out ordered, merged and adding up."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota.core.timeline import Happening, Preemptor, format_duration, summarize

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
QUOTA, CAPACITY, FRESH = "WaitingForQuota", "InsufficientCapacity", "PendingEvaluation"


@dataclass(frozen=True, slots=True)
class Wait:
    code: str
    since: datetime
    until: datetime | None


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def wait(code: str, start: float, end: float | None) -> Wait:
    return Wait(code, at(start), None if end is None else at(end))


def evicted(minutes: float, by: str | None = "team-b/urgent", queue: str | None = "gpu-b",
            reason: str = "Preempted") -> Happening:  # fmt: skip
    preemptor = None if by is None else Preemptor(by, queue)
    return Happening(at(minutes), "Evicted", reason, preemptor, "gpu-a",
                     "InClusterQueue" if by else None)  # fmt: skip


def admitted(minutes: float) -> Happening:
    return Happening(at(minutes), "Admitted", None, None, "gpu-a")


NOW = at(600)


@pytest.mark.parametrize(
    ("waits", "events", "rows"),
    [
        pytest.param(
            [wait(QUOTA, 0, 30), wait(QUOTA, 30, 60)], [],
            ["WaitingForQuota for 1h"],
            id="two touching rows of one reason are one stretch",
        ),
        pytest.param(
            [wait(QUOTA, 0, 10), wait(CAPACITY, 10, 20), wait(QUOTA, 20, 30)], [],
            ["WaitingForQuota for 10m", "InsufficientCapacity for 10m", "WaitingForQuota for 10m"],
            id="a reason that comes back after another is a new stretch",
        ),
        pytest.param(
            [wait(QUOTA, 0, 10), wait(QUOTA, 20, 30)], [admitted(10), evicted(20)],
            ["WaitingForQuota for 10m", "Admitted to ClusterQueue gpu-a",
             "Evicted from ClusterQueue gpu-a (Preempted, InClusterQueue) by team-b/urgent of ClusterQueue gpu-b",
             "WaitingForQuota for 10m"],
            id="the same reason before and after a run is two waits",
        ),
        pytest.param(
            [wait(CAPACITY, 10, None), wait(QUOTA, 0, 10)], [],
            ["WaitingForQuota for 10m", "InsufficientCapacity for 9h 50m (still waiting)"],
            id="rows handed in out of order come out in time order",
        ),
        pytest.param(
            [wait(QUOTA, 0, 10), wait(QUOTA, 10, 20)], [admitted(20)],
            ["WaitingForQuota for 20m", "Admitted to ClusterQueue gpu-a"],
            id="a reason ending at an admission's instant is listed before it",
        ),
        pytest.param(
            [wait(QUOTA, 0, 10), wait(QUOTA, 20, None)], [evicted(20), admitted(10)],
            ["WaitingForQuota for 10m", "Admitted to ClusterQueue gpu-a",
             "Evicted from ClusterQueue gpu-a (Preempted, InClusterQueue) by team-b/urgent of ClusterQueue gpu-b",
             "WaitingForQuota for 9h 40m (still waiting)"],
            id="the wait an eviction starts is listed after the eviction",
        ),
        pytest.param(
            [wait(FRESH, 0, 0), wait(QUOTA, 0, None)], [admitted(0)],
            ["PendingEvaluation for 0s", "Admitted to ClusterQueue gpu-a", "WaitingForQuota for 10h (still waiting)"],
            id="a reason that began and ended at an event's instant comes first",
        ),
        pytest.param(
            [], [evicted(5, by=None, reason="NodeUnhealthy")],
            ["Evicted from ClusterQueue gpu-a (NodeUnhealthy)"],
            id="an eviction without a preemptor names none",
        ),
        pytest.param(
            [], [evicted(5, queue=None)],
            ["Evicted from ClusterQueue gpu-a (Preempted, InClusterQueue) by team-b/urgent of ClusterQueue unknown"],
            id="a preemptor the ledger no longer knows has an unknown ClusterQueue",
        ),
    ],
)
def test_rows(waits: list[Wait], events: list[Happening], rows: list[str]) -> None:
    timeline = summarize(waits, events, NOW)
    assert [r.describe() for r in timeline.rows] == rows
    times = [r.at for r in timeline.rows]
    assert times == sorted(times)
    assert sum(r.stretch.merged for r in timeline.rows if r.stretch) == len(waits)


@pytest.mark.parametrize(
    ("waits", "events", "summary"),
    [
        pytest.param(
            [wait(QUOTA, 0, 100), wait(CAPACITY, 100, 130)], [],
            "waited 2h 10m: 1h 40m WaitingForQuota, 30m InsufficientCapacity",
            id="a total per reason, longest first",
        ),
        pytest.param(
            [wait(CAPACITY, 0, 30), *(wait(QUOTA if i % 2 else FRESH, 30 + i, 31 + i) for i in range(30))], [],
            "waited 1h: 30m InsufficientCapacity, 15m PendingEvaluation, 15m WaitingForQuota",
            id="thirty alternating rows still read as one total per reason",
        ),
        pytest.param(
            [wait(FRESH, 0, 0.001), wait(QUOTA, 0.001, None)], [],
            "waited 10h: 10h WaitingForQuota (still waiting)",
            id="under a second of a reason is left out of the summary",
        ),
        pytest.param(
            [wait(FRESH, 0, 0.001)], [],
            "waited 0s: 0s PendingEvaluation",
            id="only noise still says what it was",
        ),
        pytest.param([], [], "no wait recorded", id="nothing recorded says so"),
        pytest.param(
            [wait(QUOTA, 0, 1)], [admitted(1), evicted(2), evicted(3, by=None, reason="NodeUnhealthy"), evicted(4)],
            "waited 1m: 1m WaitingForQuota; evicted 3 times (2 Preempted, 1 NodeUnhealthy)",
            id="evictions are counted per reason",
        ),
    ],
)
def test_summary(waits: list[Wait], events: list[Happening], summary: str) -> None:
    assert summarize(waits, events, NOW).summary() == summary


def test_a_workload_evicted_many_times_says_so_and_names_every_preemptor() -> None:
    # 83 runs of 3 minutes, each ended by a preemptor of its own; 4 seconds of waiting
    # after each (the wait before the first run included): 84 waits.
    waits, events = [], []
    start = 0.0
    for run in range(83):
        waits.append(wait(QUOTA, start, start + 4 / 60))
        events.append(admitted(start + 4 / 60))
        events.append(evicted(start + 4 / 60 + 3, by=f"team-b/p{run}"))
        start += 4 / 60 + 3
    waits.append(wait(QUOTA, start, start + 4 / 60))
    timeline = summarize(waits, events, NOW)
    assert timeline.summary() == "waited 5m 36s: 5m 36s WaitingForQuota; evicted 83 times (83 Preempted)"
    assert (timeline.admissions, len(timeline.evictions)) == (83, 83)
    named = [e.preemptor.workload for e in timeline.evictions if e.preemptor is not None]
    assert named == [f"team-b/p{run}" for run in range(83)]
    assert len(timeline.rows) == 84 + 2 * 83  # nothing merged across a run


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(0, "0s", id="nothing"),
        pytest.param(0.4, "0s", id="under half a second rounds down"),
        pytest.param(45, "45s", id="seconds alone"),
        pytest.param(65, "1m 5s", id="minutes and seconds"),
        pytest.param(7800, "2h 10m", id="hours and minutes"),
        pytest.param(7205, "2h", id="a unit of zero is not written, nor the one after it"),
        pytest.param(3 * 86400 + 4 * 3600 + 59, "3d 4h", id="only the two largest units"),
        pytest.param(-5, "0s", id="a negative span (clock skew) is none"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


_CODES = st.sampled_from([QUOTA, CAPACITY, FRESH])
_MINUTES = st.integers(min_value=0, max_value=500)


@st.composite
def _history(draw: st.DrawFn) -> tuple[list[Wait], list[Happening]]:
    """Reason rows that follow one another (each may start after a gap), the last maybe
    open, and events anywhere in that span; handed in shuffled."""
    waits, start = [], draw(_MINUTES)
    for _ in range(draw(st.integers(min_value=0, max_value=12))):
        end = start + draw(st.integers(min_value=0, max_value=30))
        waits.append(wait(draw(_CODES), start, end))
        start = end + draw(st.sampled_from([0, 0, 5]))
    if waits and draw(st.booleans()):
        waits[-1] = wait(waits[-1].code, (waits[-1].since - T0).total_seconds() / 60, None)
    events = [draw(st.sampled_from([admitted, evicted]))(draw(_MINUTES))
              for _ in range(draw(st.integers(min_value=0, max_value=8)))]  # fmt: skip
    return draw(st.permutations(waits)), draw(st.permutations(events))


@given(_history())
def test_rows_are_ordered_merged_and_add_up(history: tuple[list[Wait], list[Happening]]) -> None:
    waits, events = history
    timeline = summarize(waits, events, NOW)
    times = [r.at for r in timeline.rows]
    assert times == sorted(times)
    stretches = [r.stretch for r in timeline.rows]
    assert not any(a and b and a.code == b.code for a, b in pairwise(stretches))
    assert sum(s.merged for s in stretches if s) == len(waits)
    assert len(timeline.rows) - sum(1 for s in stretches if s) == len(events)
    assert sum(seconds for _, seconds in timeline.totals) == pytest.approx(timeline.waited_seconds)
    assert sum(s.seconds for s in stretches if s) == pytest.approx(timeline.waited_seconds)
    assert len(timeline.evictions) == sum(1 for e in events if e.type == "Evicted")
