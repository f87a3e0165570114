"""RFC 3339 date-times as the REST API reads them: the grammar, and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone

import pytest

from quota.core.checkpoints import parse_grace, parse_time
from quota.core.times import parse_rfc3339


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2026-11-30T21:00:00Z", datetime(2026, 11, 30, 21, tzinfo=UTC), id="UTC"),
        pytest.param("2026-11-30t21:00:00z", datetime(2026, 11, 30, 21, tzinfo=UTC), id="lower-case t and z, as RFC 3339 allows"),
        pytest.param("2026-11-30T21:00:00.5+02:00", datetime(2026, 11, 30, 21, 0, 0, 500000, tzinfo=timezone(timedelta(hours=2))), id="a fraction and an offset"),
        pytest.param("0335-05-11T15:52:12.1597-12:12", datetime(335, 5, 11, 15, 52, 12, 159700, tzinfo=timezone(-timedelta(hours=12, minutes=12))), id="an odd offset in an early year"),
        pytest.param("2026-11-30T21:00:00.1234567Z", datetime(2026, 11, 30, 21, 0, 0, 123456, tzinfo=UTC), id="digits past microseconds are cut"),
        pytest.param("0001-01-01T00:00:00+23:59", datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=23, minutes=59))), id="the earliest local time with the largest offset"),
    ],
)
def test_reads_rfc3339_date_times(text: str, expected: datetime) -> None:
    parsed = parse_rfc3339(text)
    assert (parsed, parsed.utcoffset()) == (expected, expected.utcoffset())


@pytest.mark.parametrize(
    ("text", "why"),
    [
        pytest.param("0.5", "not an RFC 3339 date-time", id="a Unix timestamp, as pydantic would take it"),
        pytest.param("1700000000", "not an RFC 3339 date-time", id="whole seconds since 1970"),
        pytest.param("2026-11-30", "not an RFC 3339 date-time", id="a date alone"),
        pytest.param("2026-11-30T21:00:00", "not an RFC 3339 date-time", id="no zone"),
        pytest.param("2026-11-30 21:00:00Z", "not an RFC 3339 date-time", id="a space for the T"),
        pytest.param("2026-11-30T21:00:00+0100", "not an RFC 3339 date-time", id="an offset without its colon"),
        pytest.param("2026-W48-1T21:00:00Z", "not an RFC 3339 date-time", id="an ISO week date"),
        pytest.param(" 2026-11-30T21:00:00Z", "not an RFC 3339 date-time", id="a leading space"),
        pytest.param("٢٠٢٦-11-30T21:00:00Z", "not an RFC 3339 date-time", id="digits of another script"),
        pytest.param("2026-02-30T00:00:00Z", "day is out of range", id="February 30"),
        pytest.param("0000-01-01T00:00:00Z", "year 0 is out of range", id="year 0"),
        pytest.param("2026-11-30T24:00:00Z", "hour must be", id="hour 24"),
        pytest.param("2026-11-30T21:00:60Z", "leap seconds", id="a leap second"),
        pytest.param("2026-11-30T21:00:00+24:00", "offset must be within", id="an offset of a day"),
    ],
)
def test_refuses_anything_else_saying_why(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_rfc3339(text)


@pytest.mark.parametrize(
    ("parse", "text", "why"),
    [
        pytest.param(parse_time, "0001-01-01T00:00:00+01:00", "outside the years", id="an annotation time before year 1 in UTC"),
        pytest.param(parse_time, "9999-12-31T23:59:59-01:00", "outside the years", id="an annotation time after year 9999 in UTC"),
        pytest.param(parse_grace, "9" * 30 + "h", "longer than the 7 days", id="a grace of more hours than a timedelta holds"),
    ],
)
def test_annotation_values_out_of_range_are_errors_not_crashes(
    parse: Callable[[str], object], text: str, why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        parse(text)
