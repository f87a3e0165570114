"""The benchmark shapes: Kueue's scheduler-performance configs, and a backlog to drain (PURE).

``kueue-baseline`` and ``kueue-large`` use the numbers of Kueue's
``test/performance/scheduler`` configs: every ClusterQueue gets its own namespace and
LocalQueue, 20 cpu nominal, a borrowing limit of 100, reclaim within the cohort and
priority preemption within the queue; each workload class of a queue arrives one every
``interval`` starting one interval in (as Kueue's generator does) and runs ``runtime``
once admitted. ``--scale F`` keeps the cohorts, scales the ClusterQueues per cohort (at
least two, so borrowing and reclaiming still happen), then the per-queue counts, so about
F × the workloads arrive. ``--seed`` orders arrivals that fall on the same instant.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

FLAVOR = "rf"
LOCAL_QUEUE = "lq"
CLASS_LABEL = "berth.dev/bench-class"
WORKLOAD_API = "kueue.x-k8s.io/v1beta1"


@dataclass(frozen=True, slots=True)
class WorkloadClass:
    name: str
    count: int  # per ClusterQueue
    cpu: int  # cores per workload
    runtime_ms: int
    interval_ms: int
    priority: int


@dataclass(frozen=True, slots=True)
class Arrival:
    at_ms: int  # after the start of the run
    namespace: str
    name: str
    workload_class: str
    cpu_milli: int
    runtime_ms: int
    priority: int

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def manifest(self) -> dict[str, object]:
        """The Kueue Workload a user would submit for this arrival."""
        container = {"name": "main", "resources": {"requests": {"cpu": f"{self.cpu_milli}m"}}}
        return {
            "apiVersion": WORKLOAD_API,
            "kind": "Workload",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {CLASS_LABEL: self.workload_class},
            },
            "spec": {
                "queueName": LOCAL_QUEUE,
                "priority": self.priority,
                "podSets": [
                    {"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}
                ],
            },
        }


@dataclass(frozen=True, slots=True)
class KueueReference:
    """Kueue's published means for the shape (seconds, percent)."""

    wall: float
    waits: dict[str, float]  # average time to admission per class
    usage: float


@dataclass(frozen=True, slots=True)
class Shape:
    name: str
    cohorts: int
    queues_per_cohort: int
    classes: tuple[WorkloadClass, ...]
    nominal_cpu: int = 20
    borrowing_limit: int = 100
    seed: int = 1
    reference: KueueReference | None = None

    @property
    def queues(self) -> list[str]:
        return [f"cq-{c}-{q}" for c in range(self.cohorts) for q in range(self.queues_per_cohort)]

    @property
    def workloads(self) -> int:
        return len(self.queues) * sum(c.count for c in self.classes)

    @property
    def nominal_milli(self) -> int:
        """The pool's cpu, in milli-cores (what usage is a percentage of)."""
        return len(self.queues) * self.nominal_cpu * 1000

    def manifests(self) -> str:
        """The flavor, ClusterQueues and LocalQueues, as ``berth apply`` takes them."""
        docs = [f"apiVersion: {WORKLOAD_API}\nkind: ResourceFlavor\nmetadata: {{name: {FLAVOR}}}\n"]
        for name in self.queues:
            cohort = "cohort-" + name.split("-")[1]
            docs.append(
                f"apiVersion: {WORKLOAD_API}\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
                f"spec:\n  cohort: {cohort}\n  namespaceSelector: {{}}\n"
                "  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}\n"
                "  resourceGroups:\n    - coveredResources: [cpu]\n      flavors:\n"
                f"        - name: {FLAVOR}\n          resources:\n"
                f"            - {{name: cpu, nominalQuota: {self.nominal_cpu}, "
                f"borrowingLimit: {self.borrowing_limit}}}\n"
            )
            docs.append(
                f"apiVersion: {WORKLOAD_API}\nkind: LocalQueue\n"
                f"metadata: {{name: {LOCAL_QUEUE}, namespace: {name}}}\n"
                f"spec: {{clusterQueue: {name}}}\n"
            )
        return "---\n".join(docs)

    def arrivals(self) -> list[Arrival]:
        """Every workload with its arrival time, in arrival order."""
        out = [
            Arrival(
                (k + 1) * c.interval_ms,
                queue,
                f"{c.name}-{k}",
                c.name,
                c.cpu * 1000,
                c.runtime_ms,
                c.priority,
            )
            for queue in self.queues
            for c in self.classes
            for k in range(c.count)
        ]
        random.Random(self.seed).shuffle(out)
        out.sort(key=lambda a: a.at_ms)  # stable: the shuffle orders each instant
        return out


BASELINE_CLASSES = (
    WorkloadClass("small", 350, 1, 200, 100, 50),
    WorkloadClass("medium", 100, 5, 500, 500, 100),
    WorkloadClass("large", 50, 20, 1000, 1200, 200),
)
LARGE_CLASSES = (
    WorkloadClass("small", 35, 1, 150, 60, 50),
    WorkloadClass("medium", 11, 5, 350, 300, 100),
    WorkloadClass("large", 4, 20, 700, 700, 200),
)
BASELINE_REFERENCE = KueueReference(351.0, {"large": 16.5, "medium": 76.8, "small": 215.5}, 55.9)
LARGE_REFERENCE = KueueReference(1179.0, {"large": 105.6, "medium": 256.4, "small": 700.4}, 38.6)


def kueue_shape(name: str, *, scale: float = 1.0, seed: int = 1) -> Shape:
    """``kueue-baseline`` or ``kueue-large``, scaled by ``scale``."""
    if name == "kueue-baseline":
        cohorts, per_cohort, classes, reference = 5, 6, BASELINE_CLASSES, BASELINE_REFERENCE
    elif name == "kueue-large":
        cohorts, per_cohort, classes, reference = 10, 100, LARGE_CLASSES, LARGE_REFERENCE
    else:
        raise ValueError(f"unknown shape {name!r}")
    check_scale(scale)
    queues = max(min(2, per_cohort), round(per_cohort * scale))
    rest = scale * per_cohort / queues
    scaled = tuple(
        WorkloadClass(
            c.name, max(1, round(c.count * rest)), c.cpu, c.runtime_ms, c.interval_ms, c.priority
        )
        for c in classes
    )
    return Shape(
        name, cohorts, queues, scaled, seed=seed, reference=reference if scale == 1.0 else None
    )


def check_scale(scale: float) -> None:
    if not 0 < scale <= 1:
        raise ValueError(f"--scale must be in (0, 1], got {scale}")


@dataclass(frozen=True, slots=True)
class DrainShape:
    """``workloads`` pending in ``queues`` ClusterQueues that have no quota, then quota for
    all of them opens at once."""

    workloads: int = 20_000
    queues: int = 200
    seed: int = 1

    @property
    def name(self) -> str:
        return "drain"

    @property
    def per_queue(self) -> int:
        return -(-self.workloads // self.queues)

    def manifests(self, *, with_quota: bool) -> str:
        gpu = "nvidia.com/gpu"
        docs = [f"apiVersion: {WORKLOAD_API}\nkind: ResourceFlavor\nmetadata: {{name: gpu}}\n"]
        for i in range(self.queues):
            name = f"cq-{i:03d}"
            docs.append(
                f"apiVersion: {WORKLOAD_API}\nkind: LocalQueue\n"
                f"metadata: {{name: main, namespace: ns-{i:03d}}}\nspec: {{clusterQueue: {name}}}\n"
            )
            if with_quota:
                docs.append(
                    f"apiVersion: {WORKLOAD_API}\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
                    "spec:\n  namespaceSelector: {}\n  resourceGroups:\n"
                    f"    - coveredResources: [cpu, {gpu}]\n      flavors:\n"
                    "        - name: gpu\n          resources:\n"
                    f"            - {{name: cpu, nominalQuota: {self.per_queue * 4}}}\n"
                    f"            - {{name: {gpu}, nominalQuota: {self.per_queue}}}\n"
                )
        return "---\n".join(docs)

    def assignments(self) -> list[int]:
        """Which queue each workload waits in (seeded; every queue gets its share)."""
        queues = [j % self.queues for j in range(self.workloads)]
        random.Random(self.seed).shuffle(queues)
        return queues


def drain_shape(*, scale: float = 1.0, seed: int = 1) -> DrainShape:
    check_scale(scale)
    return DrainShape(max(1, round(20_000 * scale)), max(1, round(200 * scale)), seed)
