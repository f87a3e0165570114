"""RFC 3339 date-times as the REST API takes them (PURE, standard library only).

``parse_rfc3339`` accepts exactly the ``date-time`` of RFC 3339 section 5.6 (what the
OpenAPI document's ``format: date-time`` promises) and nothing else. ``datetime`` alone is
not that: pydantic also reads ``0.5`` as a Unix timestamp and ``2026-01-02`` as midnight,
and ``datetime.fromisoformat`` takes ISO 8601 shapes RFC 3339 does not (week dates,
``+0100``, a space for the ``T``). ``quota.checkpoints.parse_time`` stays the lenient reader
of annotations that jobs write; API input is held to the grammar.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

EXAMPLE = "2026-11-30T21:00:00Z"
_DATE_TIME = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})[Tt]"
    r"(?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2})(?:\.(?P<fraction>\d+))?"
    r"(?:(?P<utc>[Zz])|(?P<sign>[+-])(?P<off_hour>\d{2}):(?P<off_minute>\d{2}))",
    re.ASCII,  # \d is 0-9 only, not every script's digits
)


def parse_rfc3339(text: str) -> datetime:
    """An RFC 3339 ``date-time`` (a zone is part of it) as an aware datetime; ``ValueError``
    saying why for anything else. Fractions past microseconds are cut; a leap second
    (``:60``) is refused, as Python's datetime cannot hold one."""
    match = _DATE_TIME.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not an RFC 3339 date-time (e.g. {EXAMPLE})")
    fields = ("year", "month", "day", "hour", "minute", "second")
    year, month, day, hour, minute, second = (int(match[name]) for name in fields)
    if second == 60:
        raise ValueError(f"{text!r}: leap seconds are not supported")
    zone = UTC
    if match["sign"] is not None:
        hours, minutes = int(match["off_hour"]), int(match["off_minute"])
        if hours > 23 or minutes > 59:
            raise ValueError(f"{text!r}: the zone offset must be within ±23:59")
        offset = timedelta(hours=hours, minutes=minutes)
        zone = timezone(-offset if match["sign"] == "-" else offset)
    micro = int((match["fraction"] or "")[:6].ljust(6, "0"))
    try:
        return datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
    except ValueError as exc:  # day 31 of a 30-day month, hour 24, year 0000, ...
        raise ValueError(f"{text!r} is not a valid date-time: {exc}") from None
