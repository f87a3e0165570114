"""A simulation result as the JSON of docs/scenario.md, or as plain-text tables (PURE)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from admission.simulate.limits import result_too_large
from admission.simulate.run import QueueUsage, SimulationResult, StepOutcome, WorkloadView
from quota.core.quantity import format_quantity
from quota.core.workload import HOLDS_QUOTA, WorkloadState


def to_dict(result: SimulationResult) -> dict[str, object]:
    """The output document: ``{"name", "steps": [{at, workloads, preempted, clusterQueues}]}``."""
    return {"name": result.name, "steps": [_step(step) for step in result.steps]}


def render_json(result: SimulationResult) -> str:
    return json.dumps(to_dict(result), indent=2) + "\n"


def render_compact(result: SimulationResult, *, max_bytes: int | None = None) -> bytes:
    """``to_dict`` as compact UTF-8 JSON, one step at a time so that at most ``max_bytes``
    of it is ever held; ``ResultTooLarge`` at the step that passes the limit."""
    parts = [b'{"name":', _compact(result.name), b',"steps":[']
    size = sum(map(len, parts)) + 2  # and the closing "]}"
    for index, step in enumerate(result.steps):
        part = _compact(_step(step))
        size += len(part) + (1 if index else 0)
        if max_bytes is not None and size > max_bytes:
            raise result_too_large(max_bytes, index, len(result.steps))
        parts.extend((b",", part) if index else (part,))
    parts.append(b"]}")
    return b"".join(parts)


def _compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _step(step: StepOutcome) -> dict[str, object]:
    return {
        "at": step.at,
        "workloads": {view.workload.key: _workload(view) for view in step.workloads},
        "preempted": list(step.preempted),
        "clusterQueues": {name: _queue(usage) for name, usage in step.cluster_queues.items()},
    }


def _workload(view: WorkloadView) -> dict[str, object]:
    workload = view.workload
    body: dict[str, object] = {"state": str(workload.state)}
    if view.status is not None:
        status = view.status
        body["clusterQueue"] = status.cluster_queue
        body["reason"] = status.reason.to_dict()
        body["reasons"] = [reason.to_dict() for reason in status.reasons]
        if workload.state is WorkloadState.PENDING:
            body["position"] = status.position  # a deactivated workload is out of the queue
        if status.hints:
            body["hints"] = list(status.hints)
        if workload.state is not WorkloadState.QUOTA_RESERVED:
            return body
    if workload.admission is not None:
        body["clusterQueue"] = workload.admission.cluster_queue
        pod_sets: dict[str, dict[str, object]] = {
            assignment.name: {"count": assignment.count, "flavors": dict(assignment.flavors)}
            for assignment in workload.admission.pod_sets
        }
        body["podSets"] = pod_sets
        for placement in workload.admission.placement or ():
            # Where the pods went, when the flavor has nodes: pods per node, and the
            # topology domain they were kept in.
            shown = pod_sets.get(placement.name)
            if shown is not None:
                shown["nodes"] = dict(placement.nodes)
                if placement.level is not None:
                    shown["topology"] = {placement.level: placement.domain}
        if workload.state in HOLDS_QUOTA:
            body["borrowing"] = view.borrowing
    return body


def _queue(usage: QueueUsage) -> dict[str, object]:
    return {
        "usage": _quantities(usage.usage),
        "borrowed": _quantities(usage.borrowed),
        "pending": usage.pending,
        "admitted": usage.admitted,
    }


def _quantities(table: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, str]]:
    return {
        flavor: {resource: format_quantity(amount, resource) for resource, amount in row.items()}
        for flavor, row in table.items()
    }


def render_table(result: SimulationResult) -> str:
    """One block per step: workloads, what was preempted, ClusterQueue usage."""
    title = f"scenario {result.name}" if result.name else "scenario"
    blocks = [title]
    for step in result.steps:
        blocks.append(_step_table(step))
    return "\n\n".join(blocks) + "\n"


def _step_table(step: StepOutcome) -> str:
    lines = [f"== step {step.index} at {step.at} =="]
    rows = [_workload_row(view) for view in step.workloads]
    lines.extend(
        _columns(["WORKLOAD", "STATE", "CLUSTERQUEUE", "DETAIL"], rows)
        if rows
        else ["(no workloads)"]
    )
    lines.append("preempted: " + (", ".join(step.preempted) or "none"))
    queue_rows = [
        [name, str(usage.admitted), str(usage.pending), _usage_text(usage)]
        for name, usage in step.cluster_queues.items()
    ]
    if queue_rows:
        lines.extend(_columns(["CLUSTERQUEUE", "ADMITTED", "PENDING", "USAGE"], queue_rows))
    return "\n".join(lines)


def _workload_row(view: WorkloadView) -> list[str]:
    workload = view.workload
    if view.status is not None:
        status = view.status
        pending = workload.state is WorkloadState.PENDING and status.position is not None
        place = f"#{status.position} " if pending else ""
        detail = f"{place}{status.reason.code}: {status.reason.message}"
        return [workload.key, str(workload.state), status.cluster_queue or "-", detail]
    if workload.admission is None:
        return [workload.key, str(workload.state), "-", ""]
    parts = []
    for assignment in workload.admission.pod_sets:
        flavors = ",".join(sorted(set(assignment.flavors.values()))) or "-"
        parts.append(f"{assignment.name} x{assignment.count} on {flavors}")
    if view.borrowing and workload.state is not WorkloadState.FINISHED:
        parts.append("borrowing")
    return [workload.key, str(workload.state), workload.admission.cluster_queue, "; ".join(parts)]


def _usage_text(usage: QueueUsage) -> str:
    parts = []
    for flavor, row in usage.usage.items():
        amounts = []
        for resource, amount in row.items():
            text = f"{resource}={format_quantity(amount, resource)}"
            borrowed = usage.borrowed.get(flavor, {}).get(resource, 0)
            if borrowed:
                text += f" ({format_quantity(borrowed, resource)} borrowed)"
            amounts.append(text)
        parts.append(f"{flavor}: {', '.join(amounts)}")
    return "; ".join(parts) or "-"


def _columns(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
