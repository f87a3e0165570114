"""``berth audit``'s text: what each kind of change reads as, and ``--since`` durations."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from berth.cli.audit import VALUE_WIDTH, change, since, table

NOW = datetime(2026, 11, 30, 21, 0, tzinfo=UTC)


def entry(action: str = "update", before: Any = None, after: Any = None, **more: Any) -> dict[str, Any]:
    changed = sorted(k for k in {*(before or {}), *(after or {})} - {"version"} if (before or {}).get(k) != (after or {}).get(k))
    return {"at": "2026-11-30T21:00:00.123456Z", "actor": "ops", "action": action, "kind": "Node",
            "namespace": None, "name": "gpu-1", "version": None, "changed": changed,
            "before": before, "after": after, **more}  # fmt: skip


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        pytest.param(entry("create", None, {"name": "q", "version": 1}), "created", id="a create"),
        pytest.param(entry("delete", {"name": "q", "version": 3}, None), "deleted", id="a delete"),
        pytest.param(entry(before={"health": "Healthy"}, after={"health": "Cordoned", "why": "fan"}), "health: Healthy -> Cordoned, why: fan", id="plain values, old and new"),
        pytest.param(entry(before={"state": "Pending", "version": 1}, after={"state": "Admitted", "version": 2, "admission": {"clusterQueue": "a"}}), "admission, state: Pending -> Admitted", id="a structure by its name"),
        pytest.param(entry(before={"cohort": "all"}, after={"cohort": None}), "cohort: all -> -", id="a value taken away"),
        pytest.param(entry(before={"why": "x"}, after={"why": "y" * 100}), f"why: x -> {'y' * (VALUE_WIDTH - 1)}…", id="a long value cut short"),
        pytest.param(entry(before={}, after={}), "-", id="an update that changed nothing recorded"),
    ],
)
def test_change_reads_as(given: dict[str, Any], shown: str) -> None:
    assert change(given) == shown


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        pytest.param("90s", "2026-11-30T20:58:30Z", id="seconds ago"),
        pytest.param("1h30m", "2026-11-30T19:30:00Z", id="hours and minutes ago"),
        pytest.param("2026-11-01T00:00:00+01:00", "2026-11-01T00:00:00+01:00", id="a time goes as given"),
        pytest.param("yesterday", "yesterday", id="neither goes as given: the server says what is wrong"),
    ],
)
def test_since(text: str, sent: str) -> None:
    assert since(text, NOW) == sent


def test_table_lines_up_a_row_per_entry_to_the_second() -> None:
    text = table([entry(before={"health": "Healthy"}, after={"health": "Cordoned"}),
                  entry("create", None, {"version": 1}, kind="LocalQueue", namespace="team-a", name="main", version=1, actor="test")])  # fmt: skip
    assert text.splitlines() == [
        "AT                    ACTOR  ACTION  KIND        NAME         VERSION  CHANGE",
        "2026-11-30T21:00:00Z  ops    update  Node        gpu-1        -        health: Healthy -> Cordoned",
        "2026-11-30T21:00:00Z  test   create  LocalQueue  team-a/main  1        created",
    ]


def test_an_empty_log_says_so() -> None:
    assert table([]) == "No audit entries found.\n"
