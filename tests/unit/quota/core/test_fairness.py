"""Decayed usage: what fair sharing with memory and admission fair sharing count."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from quota.core.fairness import AdmissionFairSharing, Held, alpha, decayed

NOW = datetime(2026, 1, 8, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.mark.parametrize(
    ("stretches", "half_life", "expected"),
    [
        pytest.param([Held(8000, NOW - 100 * DAY, None)], DAY, 8000, id="held steadily for long, it counts what is held"),
        pytest.param([Held(8000, NOW - DAY, None)], DAY, 4000, id="held for one half-life: half of it"),
        pytest.param([Held(8000, NOW - 7 * DAY, NOW - 6 * DAY)], DAY, 8000 / 128, id="idle for six days: 1/64 of a half"),
        pytest.param([Held(8000, NOW - 2 * DAY, NOW - DAY)], DAY, 2000, id="busy yesterday: a quarter"),
        pytest.param([Held(8000, NOW - DAY, NOW)], timedelta(0), 0, id="a zero half-life forgets what ended"),
        pytest.param([Held(8000, NOW - DAY, None)], timedelta(0), 8000, id="a zero half-life counts what is held now"),
        pytest.param([Held(8000, NOW + DAY, None)], DAY, 0, id="nothing held yet"),
    ],
)  # fmt: skip
def test_decayed(stretches: list[Held], half_life: timedelta, expected: float) -> None:
    assert math.isclose(decayed(stretches, NOW, half_life), expected, abs_tol=1e-6)


def test_the_entry_penalty_counts_a_new_admission_at_once() -> None:
    afs = AdmissionFairSharing(timedelta(hours=1), timedelta(minutes=5))
    assert math.isclose(afs.entry_penalty(), 1 - 0.5 ** (5 / 60))
    assert math.isclose(decayed([Held(1000, NOW, None)], NOW, afs.half_life, afs.entry_penalty()),
                        1000 * alpha(timedelta(minutes=5), timedelta(hours=1)))


@pytest.mark.parametrize(
    ("weights", "queue_weight", "expected"),
    [
        pytest.param({}, 1000, 6.0, id="every resource weighs 1"),
        pytest.param({"cpu": 2000}, 1000, 10.0, id="cpu weighs twice"),
        pytest.param({}, 2000, 3.0, id="a LocalQueue of weight 2 counts half"),
        pytest.param({}, 0, math.inf, id="a LocalQueue of weight 0 goes last"),
    ],
)  # fmt: skip
def test_local_queue_usage_is_weighted(weights: dict[str, int], queue_weight: int,
                                       expected: float) -> None:
    afs = AdmissionFairSharing(DAY, resource_weights=weights)
    assert afs.weighted({"cpu": 4.0, "memory": 2.0}, queue_weight) == expected
