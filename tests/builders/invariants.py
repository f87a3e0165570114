"""Checks over the ledger that must hold whatever happened to the loop (crash-safety)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

from builders.loop import Ledgered


def violations(ledgered: Ledgered, nominal: dict[str, int], submitted: set[str]) -> list[str]:
    """Every broken invariant, in words (empty when the ledger is sound).

    ``nominal``: GPU milli-units per ClusterQueue (no cohorts: nothing may be borrowed).
    """
    found: list[str] = []
    workloads = ledgered.rows(
        "SELECT id, namespace, name, state, admission, cluster_queue FROM workloads"
    )
    intervals = ledgered.rows(
        "SELECT workload_id, cluster_queue, amount, started_at, ended_at FROM usage_intervals"
    )
    events = ledgered.rows("SELECT workload_id, type FROM workload_events")
    found += _over_committed(workloads, intervals, nominal)
    found += _admitted_twice(workloads, intervals, events)
    present = {f"{w['namespace']}/{w['name']}" for w in workloads}
    found += [
        f"{key} was submitted but is not in the ledger" for key in sorted(submitted - present)
    ]
    return found


def _over_committed(
    workloads: list[dict[str, Any]], intervals: list[dict[str, Any]], nominal: dict[str, int]
) -> list[str]:
    found = []
    held: dict[str, int] = defaultdict(int)
    for w in workloads:
        if w["state"] in ("Admitted", "Evicting"):
            for assignment in w["admission"]["podSetAssignments"]:
                held[w["cluster_queue"]] += sum(assignment["usage"].values())
    metered: dict[str, int] = defaultdict(int)
    for u in intervals:
        if u["ended_at"] is None:
            metered[u["cluster_queue"]] += u["amount"]
    for cq, limit in nominal.items():
        if held[cq] > limit:
            found.append(f"{cq}: workloads hold {held[cq]} > nominal {limit}")
        if metered[cq] > limit:
            found.append(f"{cq}: open usage intervals sum to {metered[cq]} > nominal {limit}")
    return found


def _admitted_twice(
    workloads: list[dict[str, Any]], intervals: list[dict[str, Any]], events: list[dict[str, Any]]
) -> list[str]:
    found = []
    spans: dict[int, dict[Any, Any]] = defaultdict(dict)  # id -> started_at -> ended_at
    for u in intervals:
        spans[u["workload_id"]][u["started_at"]] = u["ended_at"]
    admitted_events: dict[int, int] = defaultdict(int)
    for e in events:
        if e["type"] == "Admitted":
            admitted_events[e["workload_id"]] += 1
    for w in workloads:
        key = f"{w['namespace']}/{w['name']}"
        ordered = sorted(spans[w["id"]].items())
        for (_, end), (start, _) in itertools.pairwise(ordered):
            if end is None or end > start:
                found.append(f"{key} holds two admissions at once (usage intervals overlap)")
        if len(ordered) != admitted_events[w["id"]]:
            found.append(
                f"{key}: {admitted_events[w['id']]} Admitted events for {len(ordered)} admissions"
            )
        open_spans = sum(1 for _, end in ordered if end is None)
        holding = w["state"] in ("Admitted", "Evicting")
        if open_spans != (1 if holding else 0):
            found.append(f"{key} is {w['state']} with {open_spans} open admissions")
    return found
