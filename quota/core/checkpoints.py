"""Checkpoint annotations of a workload (PURE): the grace a victim gets, when it last saved.

A Job opts into checkpoint-aware preemption with ``berth.dev/checkpoint-grace``; when it is
chosen as a victim Berth sets ``berth.dev/checkpoint-requested`` (and the deadline), and the
job answers by setting ``berth.dev/checkpointed-at`` (optionally ``…/checkpoint-location``)
or Berth suspends it when the grace ends. The last checkpoint tells how much work an
eviction would lose, which victim choice and metering both read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from quota.core.workload import Workload

CHECKPOINT_GRACE = "berth.dev/checkpoint-grace"
CHECKPOINTED_AT = "berth.dev/checkpointed-at"
CHECKPOINT_LOCATION = "berth.dev/checkpoint-location"
CHECKPOINT_REQUESTED = "berth.dev/checkpoint-requested"
CHECKPOINT_DEADLINE = "berth.dev/checkpoint-deadline"
# What the job reports about its own checkpoints: kept across evictions and re-admissions.
REPORTED = (CHECKPOINTED_AT, CHECKPOINT_LOCATION)
# What a user may set on a Job among Berth's annotations (the rest are Berth's own).
USER_ANNOTATIONS = (CHECKPOINT_GRACE, *REPORTED, "berth.dev/runtime")

_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
MAX_GRACE = timedelta(days=7)


def parse_grace(text: str) -> timedelta:
    """``10m``, ``90s``, ``1h30m`` → a positive duration of at most 7 days; ValueError else."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.groups()):
        raise ValueError(f"{text!r} is not a duration (expected e.g. 90s, 10m, 1h30m)")
    hours, minutes, seconds = (int(group or 0) for group in match.groups())
    try:
        grace = timedelta(hours=hours, minutes=minutes, seconds=seconds)
    except OverflowError:
        grace = timedelta.max  # refused below as longer than 7 days
    if grace <= timedelta(0):
        raise ValueError(f"{text!r} must be longer than 0s")
    if grace > MAX_GRACE:
        raise ValueError(f"{text!r} is longer than the 7 days a victim may keep its quota")
    return grace


def parse_time(text: str) -> datetime:
    """An RFC 3339 time with a zone (``2026-11-30T21:00:00Z``); ValueError otherwise."""
    value = text.strip()
    if not re.match(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}", value):
        raise ValueError(f"{text!r} is not an RFC 3339 time (e.g. 2026-11-30T21:00:00Z)")
    try:
        parsed = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        raise ValueError(f"{text!r} is not an RFC 3339 time (e.g. 2026-11-30T21:00:00Z)") from None
    if parsed.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone (end it with Z or +00:00)")
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is a time before year 1 in UTC
        raise ValueError(f"{text!r} is outside the years 1 to 9999 in UTC") from None


def format_time(value: datetime) -> str:
    """RFC 3339 in UTC, to the second as Kubernetes writes times unless finer is given."""
    utc = value.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if utc.microsecond else "%Y-%m-%dT%H:%M:%SZ")


def reports_after(saved: datetime | None, evicted_at: datetime | None) -> bool:
    """Whether a checkpoint at ``saved`` answers a request made at ``evicted_at``. Jobs
    often stamp whole seconds, so the request's own second counts as after it."""
    if saved is None or evicted_at is None:
        return False
    return saved >= evicted_at.replace(microsecond=0)


def checkpoint_grace(workload: Workload) -> timedelta | None:
    """The grace a victim gets; None without one (an invalid value was refused at submit)."""
    text = workload.annotations.get(CHECKPOINT_GRACE)
    if not text:
        return None
    try:
        return parse_grace(text)
    except ValueError:
        return None


def checkpointed_at(workload: Workload) -> datetime | None:
    """When the workload last reported a checkpoint, if ever (and if readable)."""
    text = workload.annotations.get(CHECKPOINTED_AT)
    if not text:
        return None
    try:
        return parse_time(text)
    except ValueError:
        return None


def with_checkpoint(
    annotations: Mapping[str, str], at: datetime, location: str | None = None
) -> dict[str, str] | None:
    """``annotations`` recording a checkpoint made at ``at`` (and where it is kept); None
    when they already record one at least as new (a stale or repeated report)."""
    previous = annotations.get(CHECKPOINTED_AT)
    try:
        stored = None if previous is None else parse_time(previous)
    except ValueError:
        stored = None  # unreadable: the new report replaces it
    if stored is not None and stored >= at:
        return None
    recorded = {**annotations, CHECKPOINTED_AT: format_time(at)}
    if location is not None:
        recorded[CHECKPOINT_LOCATION] = location
    return recorded


def lost_since(workload: Workload) -> datetime | None:
    """Since when an eviction now would lose the work: the last checkpoint taken during
    this admission, else the admission itself (a checkpoint from an earlier run is where
    this run resumed from, so everything since admission is still unsaved)."""
    admitted = workload.admitted_at
    saved = checkpointed_at(workload)
    if admitted is None:
        return saved
    return saved if saved is not None and saved > admitted else admitted


def checkpoint_problem(annotations: dict[str, str] | object) -> tuple[str, str] | None:
    """``(annotation, why)`` for the first invalid checkpoint annotation, else None."""
    if not isinstance(annotations, dict):
        return None
    grace = annotations.get(CHECKPOINT_GRACE)
    if isinstance(grace, str):
        try:
            parse_grace(grace)
        except ValueError as exc:
            return CHECKPOINT_GRACE, str(exc)
    saved = annotations.get(CHECKPOINTED_AT)
    if isinstance(saved, str):
        try:
            parse_time(saved)
        except ValueError as exc:
            return CHECKPOINTED_AT, str(exc)
    return None
