"""Plain-text tables: aligned columns under a header (``columns``), and the cells of an
object's row in ``berth get`` (``row``; the columns per kind are ``berth.cli.get``'s)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quota.core.checks import AdmissionCheck, ProvisioningRequestConfig
from quota.core.model import (
    ClusterQueue,
    Cohort,
    LocalQueue,
    Namespace,
    Node,
    PriorityClass,
    ResourceFlavor,
    Topology,
)
from quota.core.quantity import format_resources


def _pairs(values: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in values.items()) or "<none>"


def _quota(queue: ClusterQueue | Cohort) -> str:
    parts = []
    for group in queue.resource_groups:
        for flavor in group.flavors:
            amounts = format_resources({q.resource: q.nominal for q in flavor.resources})
            parts.append(f"{flavor.flavor}({_pairs(amounts)})")
    return " ".join(parts) or "<none>"


def row(item: object) -> tuple[str, ...]:
    """The table cells of one object."""
    match item:
        case ResourceFlavor():
            return (item.name, _pairs(item.node_labels), item.topology_name or "-")
        case ClusterQueue():
            return (item.name, item.cohort or "-", str(item.queueing_strategy), _quota(item))
        case Cohort():
            return (item.name, item.parent or "-", _quota(item))
        case LocalQueue():
            return (item.namespace, item.name, item.cluster_queue)
        case PriorityClass():
            return (item.name, str(item.value))
        case Namespace():
            return (item.name, _pairs(item.labels))
        case Topology():
            return (item.name, ",".join(item.levels))
        case AdmissionCheck():
            ref = item.parameters
            return (item.name, item.controller_name, f"{ref.kind}/{ref.name}" if ref else "-")
        case ProvisioningRequestConfig():
            retry = item.retry_strategy
            return (item.name, item.provisioning_class_name,
                    ",".join(item.managed_resources) or "-",
                    f"{retry.backoff_limit_count}x {retry.backoff_base_seconds}s"
                    f"..{retry.backoff_max_seconds}s")
        case Node():
            schedulable = "no" if item.unschedulable or not item.ready else "yes"
            allocatable = _pairs(format_resources(dict(item.allocatable)))
            return (item.name, str(item.health), schedulable, allocatable)
    raise TypeError(f"no table row for {type(item).__name__}")


def columns(header: Sequence[str], rows: Sequence[Sequence[str]], *, gap: int = 2) -> str:
    """``rows`` under ``header``, each column as wide as its widest cell, one line each."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        (" " * gap).join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]
    return "\n".join(lines) + "\n"
