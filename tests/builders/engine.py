"""Small builders for engine tests: quotas in whole units, times in seconds after T0."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from admission.engine.types import Snapshot
from quota.core.model import (
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    LabelSelector,
    LocalQueue,
    Namespace,
    Preemption,
    PriorityClass,
    QueueingStrategy,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    StopPolicy,
)
from quota.core.workload import Admission, PodSet, PodSetAssignment, Workload, WorkloadState

GPU = "nvidia.com/gpu"
CPU = "cpu"
T0 = datetime(2025, 1, 1, tzinfo=UTC)
M = 1000  # milli-units per unit
ALL = LabelSelector()  # selects every namespace

Quotas = Mapping[str, Mapping[str, int]]  # flavor -> resource -> whole units
Limits = Mapping[tuple[str, str], int]  # (flavor, resource) -> whole units


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def groups(quotas: Quotas, borrowing: Limits | None = None,
           lending: Limits | None = None) -> tuple[ResourceGroup, ...]:
    """One resource group covering every resource named, flavors in the given order."""
    borrowing, lending = borrowing or {}, lending or {}
    resources = tuple(dict.fromkeys(r for per in quotas.values() for r in per))
    flavors = tuple(
        FlavorQuotas(flavor, tuple(
            ResourceQuota(
                r,
                per.get(r, 0) * M,
                borrowing[(flavor, r)] * M if (flavor, r) in borrowing else None,
                lending[(flavor, r)] * M if (flavor, r) in lending else None,
            )
            for r in resources
        ))
        for flavor, per in quotas.items()
    )
    return (ResourceGroup(resources, flavors),) if flavors else ()


def cq(name: str, quotas: Quotas | None = None, *, cohort: str | None = None,
       borrowing: Limits | None = None, lending: Limits | None = None,
       preemption: Preemption | None = None, strategy: QueueingStrategy | None = None,
       fungibility: FlavorFungibility | None = None, stop: StopPolicy = StopPolicy.NONE,
       selector: LabelSelector | None = ALL, weight: int = 1000,
       resource_groups: tuple[ResourceGroup, ...] | None = None) -> ClusterQueue:
    return ClusterQueue(
        name=name,
        resource_groups=resource_groups if resource_groups is not None
        else groups(quotas or {}, borrowing, lending),
        cohort=cohort,
        namespace_selector=selector,
        queueing_strategy=strategy or QueueingStrategy.BEST_EFFORT_FIFO,
        preemption=preemption or Preemption(),
        flavor_fungibility=fungibility or FlavorFungibility(),
        stop_policy=stop,
        fair_sharing_weight=weight,
    )


def cohort(name: str, parent: str | None = None, quotas: Quotas | None = None,
           lending: Limits | None = None, borrowing: Limits | None = None) -> Cohort:
    return Cohort(name, parent, groups(quotas or {}, borrowing, lending))


def wl(name: str, requests: Mapping[str, float], *, count: int = 1, ns: str = "a",
       queue: str = "lq", priority: int = 0, created: float = 0, min_count: int | None = None,
       selector: Mapping[str, str] | None = None, **extra: Any) -> Workload:
    """A pending one-pod-set workload; ``requests`` per pod in whole (or fractional) units."""
    pod_set = PodSet("main", count, {r: int(a * M) for r, a in requests.items()},
                     min_count=min_count, node_selector=dict(selector or {}))
    workload = Workload(namespace=ns, name=name, queue_name=queue, pod_sets=(pod_set,),
                        created_at=at(created), priority=priority)
    return replace(workload, **extra) if extra else workload


def admitted(workload: Workload, queue: str, flavor: str = "default", *,
             when: float = 0, count: int | None = None,
             state: WorkloadState = WorkloadState.ADMITTED) -> Workload:
    """The workload as admitted to ``queue`` with every resource in ``flavor``."""
    pod_sets = tuple(
        PodSetAssignment(p.name, count or p.count, dict.fromkeys(p.requests, flavor),
                         p.total(count or p.count))
        for p in workload.pod_sets
    )
    return replace(workload, state=state, admission=Admission(queue, pod_sets),
                   admitted_at=at(when))


def snapshot(*objects: object, fair_sharing: bool = False,
             auto_flavors: bool = True, auto_queues: bool = True) -> Snapshot:
    """A snapshot of ``objects``; each ClusterQueue X gets LocalQueue ``X/lq`` unless
    ``auto_queues`` is off, and every flavor a queue names exists unless ``auto_flavors``
    is off. Workload namespaces default to ``a``: give the queue of namespace a as ns."""
    flavors: dict[str, ResourceFlavor] = {}
    queues: dict[str, ClusterQueue] = {}
    cohorts: dict[str, Cohort] = {}
    local: dict[str, LocalQueue] = {}
    classes: dict[str, PriorityClass] = {}
    namespaces: dict[str, Namespace] = {}
    workloads: dict[str, Workload] = {}
    for obj in objects:
        match obj:
            case ResourceFlavor():
                flavors[obj.name] = obj
            case ClusterQueue():
                queues[obj.name] = obj
            case Cohort():
                cohorts[obj.name] = obj
            case LocalQueue():
                local[obj.key] = obj
            case PriorityClass():
                classes[obj.name] = obj
            case Namespace():
                namespaces[obj.name] = obj
            case Workload():
                workloads[obj.key] = obj
            case _:
                raise TypeError(f"cannot put {obj!r} in a snapshot")
    for queue in queues.values():
        if auto_queues and f"{queue.name}/lq" not in local:
            local[f"{queue.name}/lq"] = LocalQueue(queue.name, "lq", queue.name)
        if auto_flavors:
            for group in queue.resource_groups:
                for fq in group.flavors:
                    flavors.setdefault(fq.flavor, ResourceFlavor(fq.flavor))
    return Snapshot(flavors=flavors, cluster_queues=queues, cohorts=cohorts,
                    local_queues=local, priority_classes=classes, namespaces=namespaces,
                    workloads=workloads, fair_sharing=fair_sharing)
