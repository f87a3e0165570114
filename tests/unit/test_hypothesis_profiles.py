"""The Hypothesis profiles of tests/conftest.py: CI replays the same examples every run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st


def _examples(profile: str) -> list[list[int]]:
    """The examples one property draws in two runs under ``profile`` (with its own count,
    as most properties here set one)."""
    runs: list[list[int]] = []

    @settings(settings.get_profile(profile), max_examples=25)
    @given(st.lists(st.integers()))
    def prop(values: list[int]) -> None:
        runs[-1].append(sum(values))

    for _ in range(2):
        runs.append([])
        prop()
    return runs


def test_the_ci_profile_draws_the_same_examples_on_every_run() -> None:
    first, second = _examples("ci")
    assert len(first) == 25 and first == second


def test_no_profile_has_a_deadline() -> None:
    # A deadline is a timed assertion: speed is for benchmarks to report.
    assert [settings.get_profile(p).deadline for p in ("dev", "ci")] == [None, None]
