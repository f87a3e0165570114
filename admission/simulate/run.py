"""The ``berth simulate`` runner: a parsed scenario through the engine on a virtual clock (PURE).

Time is ``epoch + step.at``; nothing reads the real clock. At every instant that matters
(each step, each ``berth.dev/runtime`` completion and each checkpoint grace deadline between
steps) the engine runs until it neither admits nor evicts. Only the steps' instants are
reported. A workload of a queue with admission checks reserves quota (``QuotaReserved``)
until ``checks`` events set every check Ready; a Retry's backoff is a timer like the
others. A victim with a grace is ``Evicting`` (holding its quota) until a ``checkpointed``
event names it or its deadline passes; then it is evicted and requeued.

Each cycle is the durable loop's: first the evictions node faults call for (work on a
node out of the pool, ``node_faults``), then the engine; every decision moves a workload
through ``transitions``, as the loop's plan does, so both say the same of a scenario.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from admission.engine.cycle import run_cycle
from admission.engine.node_faults import node_evictions
from admission.engine.pods_ready import deadline_of, pods_ready_evictions
from admission.engine.transitions import (
    admitted,
    checkpointed,
    evicted,
    pods_ready,
    requeue_due,
    reserved,
)
from admission.engine.types import CycleResult, EvictionDecision, PendingStatus, Reason, Snapshot
from admission.simulate.limits import SimulationStopped, too_many_cycles
from admission.simulate.scenario import (
    WORKLOAD_KINDS,
    CheckEvent,
    Scenario,
    Step,
    format_duration,
)
from quota.core.checks import AdmissionCheck, CheckStatus, ProvisioningRequestConfig, with_state
from quota.core.errors import BerthError
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
from quota.core.pods_ready import DISABLED
from quota.core.reasons import WaitReason
from quota.core.workload import HOLDS_QUOTA, WAITING, Workload, WorkloadState
from quota.manifests.documents import ManifestObject

MAX_CYCLES = 1000


class SimulationError(BerthError):
    """The engine did not settle at an instant (it kept admitting or evicting)."""

    status = 422  # the scenario's doing: it is answered, not a server fault
    code = "SimulationError"


@dataclass(frozen=True, slots=True)
class QueueUsage:
    """A ClusterQueue at one instant; quantities per flavor per resource, in milli-units."""

    usage: Mapping[str, Mapping[str, int]]
    borrowed: Mapping[str, Mapping[str, int]]
    pending: int
    admitted: int


@dataclass(frozen=True, slots=True)
class WorkloadView:
    """One workload as a step sees it; ``status`` is set for pending ones."""

    workload: Workload
    borrowing: bool = False
    status: PendingStatus | None = None


@dataclass(frozen=True, slots=True)
class StepOutcome:
    index: int
    at: str
    now: datetime
    workloads: tuple[WorkloadView, ...]  # in creation order
    preempted: tuple[str, ...]  # evicted at this instant, in eviction order
    cluster_queues: Mapping[str, QueueUsage]  # by name, sorted


@dataclass(frozen=True, slots=True)
class SimulationResult:
    name: str | None
    steps: tuple[StepOutcome, ...] = field(default_factory=tuple)


def simulate(
    scenario: Scenario,
    *,
    max_cycles: int = MAX_CYCLES,
    cycle_budget: int | None = None,
    keep_going: Callable[[], bool] | None = None,
) -> SimulationResult:
    """Run every step of ``scenario``; raises ``SimulationError`` if an instant never settles.

    ``cycle_budget`` caps the engine cycles of the whole run (``ScenarioTooLarge``);
    ``keep_going`` is asked before every cycle, and ``False`` stops the run
    (``SimulationStopped``): the caller's time limit, read from the caller's clock.
    """
    world = _World(scenario.objects, scenario.epoch, max_cycles, cycle_budget, keep_going)
    world.policy = scenario.pods_ready
    outcomes = []
    for step in scenario.steps:
        now = scenario.epoch + step.at
        world.advance_to(now)
        checkpointed = world.apply(step, now)
        preempted = (*checkpointed, *world.settle(now))
        outcomes.append(world.outcome(step, now, preempted))
    return SimulationResult(scenario.name, tuple(outcomes))


class _World:
    """The simulated cluster between cycles: objects, workloads and their timers."""

    def __init__(
        self,
        objects: tuple[ManifestObject, ...],
        epoch: datetime,
        cap: int,
        budget: int | None = None,
        keep_going: Callable[[], bool] | None = None,
    ) -> None:
        self.epoch = epoch
        self.cap = cap  # cycles per instant
        self.budget = budget  # cycles over the whole run
        self.keep_going = keep_going
        self.objects: dict[str, ManifestObject] = {o.key: o for o in objects}
        self.workloads: dict[str, Workload] = {}  # creation order, finished ones included
        self.borrowing: dict[str, bool] = {}
        self.runtimes: dict[str, timedelta] = {}
        self.finish_at: dict[str, datetime] = {}
        self.grace_until: dict[str, datetime] = {}  # Evicting victims: their deadline
        self.backoff_until: dict[str, datetime] = {}  # after a check's Retry: requeued then
        self.pending: Mapping[str, PendingStatus] = {}
        self.cycles = 0  # run so far, every instant together
        self.policy = DISABLED  # waitForPodsReady
        self.clock = epoch  # the last instant settled or reached

    def advance_to(self, now: datetime) -> None:
        """Complete runtimes, end checkpoint graces, time out pods and end requeue
        backoffs (PodsReadyTimeout's and admission checks' Retry) due up to ``now``, in
        time order; earlier instants each get their own cycles."""
        while True:
            timers = self._timers()
            if not (self.finish_at or self.grace_until or self.backoff_until or timers):
                break
            due = min([*self.finish_at.values(), *self.grace_until.values(),
                       *self.backoff_until.values(), *timers])
            if due > now:
                break
            self.clock = due
            for key in [k for k, at in self.backoff_until.items() if at == due]:
                del self.backoff_until[key]  # the engine offers it to its queue again
            for key in [k for k, at in self.finish_at.items() if at == due]:
                self._finish(key)
            for key in [k for k, at in self.grace_until.items() if at == due]:
                del self.grace_until[key]  # due: whatever the victim did, the timer is spent
                self._requeue(key, due)
            if due < now:
                self.settle(due)
        self.clock = now

    def _timers(self) -> list[datetime]:
        """waitForPodsReady instants after the clock: pods timing out, backoffs ending."""
        if not self.policy.enable:
            return []
        found = []
        for workload in self.workloads.values():
            at = deadline_of(workload, self.policy)
            if workload.state is WorkloadState.PENDING:
                at = workload.requeue_at
            if at is not None and at > self.clock:
                found.append(at)
        return found

    def apply(self, step: Step, now: datetime) -> list[str]:
        """The step's events, in the order the spec gives them; the victims a reported
        checkpoint released (evicted now)."""
        for item in step.apply:
            self.objects[item.key] = item
        for ref in step.delete:
            if ref.kind in WORKLOAD_KINDS:
                self._forget(ref.key)
            else:
                self.objects.pop(ref.object_key, None)
        for creation in step.create:
            workload = creation.workload
            if not workload.active:
                workload = replace(workload, state=WorkloadState.DEACTIVATED)
            self.workloads[workload.key] = workload
            if creation.runtime is not None:
                self.runtimes[workload.key] = creation.runtime
        for key in step.finish:
            if self.workloads[key].state is not WorkloadState.FINISHED:
                self._finish(key)
        for key in step.deactivate:
            workload = self.workloads[key]
            if workload.state not in (WorkloadState.FINISHED, WorkloadState.DEACTIVATED):
                self.finish_at.pop(key, None)
                self.workloads[key] = replace(
                    workload,
                    state=WorkloadState.DEACTIVATED,
                    active=False,
                    admission=None,
                    admitted_at=None,
                )
                self.grace_until.pop(key, None)
        for event in step.checks:
            self._set_check(event, now)
        released = []
        for key in step.checkpointed:
            reported = checkpointed(self.workloads[key], now)
            if reported is None:
                continue  # it had reported a newer one: this report changes nothing
            self.workloads[key] = reported
            if self._requeue(key, now):
                released.append(key)
        for key in step.pods_ready:
            ready = pods_ready(self.workloads[key], True, now)
            if ready is not None:  # not admitted, or Ready already: nothing to report
                self.workloads[key] = ready
        return released

    def settle(self, now: datetime) -> tuple[str, ...]:
        """Run cycles at ``now`` until nothing is admitted or evicted; return the evicted
        whose quota was released, in eviction order."""
        released: list[str] = []
        for _ in range(self.cap):
            self._may_cycle(now)
            snapshot = self.snapshot()
            faults = (*node_evictions(snapshot.workloads, snapshot.nodes),
                      *pods_ready_evictions(snapshot.workloads, snapshot.nodes, self.policy,
                                            now))
            if faults:
                released.extend(self._evict_all(faults, now))
                snapshot = self.snapshot()
            result = run_cycle(snapshot, now)
            self.pending = result.pending
            if not result.admitted and not result.evicted:
                return tuple(released)
            released.extend(self._record(result, now))
        raise SimulationError(
            f"the engine kept admitting or evicting at {format_duration(now - self.epoch)}: "
            f"no fixed point after {self.cap} cycles"
        )

    def _may_cycle(self, now: datetime) -> None:
        """Count one more cycle against the budget; ask the caller whether to go on."""
        self.cycles += 1
        at = format_duration(now - self.epoch)
        if self.budget is not None and self.cycles > self.budget:
            raise too_many_cycles(self.budget, at)
        if self.keep_going is not None and not self.keep_going():
            raise SimulationStopped(f"stopped at virtual time {at}, after {self.cycles - 1} cycles")

    def _record(self, result: CycleResult, now: datetime) -> list[str]:
        # Victims first: they give back quota that the same cycle's admissions may rely on.
        released = self._evict_all(result.evicted, now)
        for decision in result.admitted:
            key = decision.key
            if decision.checks:  # quota reserved: it runs once its checks pass
                self.workloads[key] = reserved(self.workloads[key], decision.admission,
                                               decision.checks, now)
                self.borrowing[key] = decision.borrowing
                continue
            self.workloads[key] = admitted(self.workloads[key], decision.admission, now)
            if not decision.checked:
                self.borrowing[key] = decision.borrowing
            if key in self.runtimes:
                self.finish_at[key] = now + self.runtimes[key]
        return released

    def _evict_all(self, evictions: Sequence[EvictionDecision], now: datetime) -> list[str]:
        """Carry out ``evictions`` of holders; the keys whose quota was released now (the
        others keep running to their checkpoint until their grace ends)."""
        released = []
        for eviction in evictions:
            workload = self.workloads.get(eviction.key)
            if workload is None or workload.state not in HOLDS_QUOTA:
                continue
            moved = evicted(workload, eviction.reason, now, check=eviction.check,
                            requeue_at=eviction.requeue_at, deactivation=eviction.deactivation)
            self.workloads[eviction.key] = moved.workload
            if eviction.requeue_at is not None and eviction.requeue_at > now:
                self.backoff_until[eviction.key] = eviction.requeue_at
            if moved.grace is not None:
                self.grace_until[eviction.key] = now + moved.grace
                continue
            self.finish_at.pop(eviction.key, None)
            self.grace_until.pop(eviction.key, None)
            released.append(eviction.key)
        return released

    def _set_check(self, event: CheckEvent, now: datetime) -> None:
        """A check's controller answering; only a workload reserving quota has states to
        set (the event changes nothing for any other)."""
        workload = self.workloads[event.workload]
        if workload.state is not WorkloadState.QUOTA_RESERVED:
            return
        old = next((c for c in workload.checks if c.name == event.check), None)
        if old is None:
            return
        status = CheckStatus(event.check, event.state, event.message, None, now, old.retries)
        checks = with_state(workload.checks, status)
        if checks is not None:
            self.workloads[event.workload] = replace(workload, checks=checks)

    def _requeue(self, key: str, now: datetime) -> bool:
        """Send an evicting victim back to the queue if it checkpointed or its grace is
        over by ``now``; whether it went."""
        requeue = requeue_due(self.workloads[key], now)
        if requeue is None:
            return False
        self.finish_at.pop(key, None)
        self.grace_until.pop(key, None)
        self.workloads[key] = requeue.workload
        return True

    def _finish(self, key: str) -> None:
        self.finish_at.pop(key, None)
        self.grace_until.pop(key, None)
        self.workloads[key] = replace(self.workloads[key], state=WorkloadState.FINISHED)

    def _forget(self, key: str) -> None:
        tables = (self.workloads, self.borrowing, self.runtimes, self.finish_at, self.grace_until,
                  self.backoff_until)
        for table in tables:
            table.pop(key, None)

    def snapshot(self) -> Snapshot:
        """The engine's view: every object, and the workloads still in the queueing system."""
        values = [item.obj for item in self.objects.values()]
        return Snapshot(
            flavors={o.name: o for o in values if isinstance(o, ResourceFlavor)},
            cluster_queues={o.name: o for o in values if isinstance(o, ClusterQueue)},
            cohorts={o.name: o for o in values if isinstance(o, Cohort)},
            local_queues={o.key: o for o in values if isinstance(o, LocalQueue)},
            priority_classes={o.name: o for o in values if isinstance(o, PriorityClass)},
            namespaces={o.name: o for o in values if isinstance(o, Namespace)},
            topologies={o.name: o for o in values if isinstance(o, Topology)},
            nodes={o.name: o for o in values if isinstance(o, Node)},
            admission_checks={o.name: o for o in values if isinstance(o, AdmissionCheck)},
            provisioning_configs={
                o.name: o for o in values if isinstance(o, ProvisioningRequestConfig)
            },
            workloads={
                key: w for key, w in self.workloads.items() if w.state is not WorkloadState.FINISHED
            },
            pods_ready=self.policy,
        )

    def outcome(self, step: Step, now: datetime, preempted: tuple[str, ...]) -> StepOutcome:
        views = tuple(self._view(w) for w in self.workloads.values())
        queues = sorted(
            (item.obj for item in self.objects.values() if isinstance(item.obj, ClusterQueue)),
            key=lambda cq: cq.name,
        )
        usage = {cq.name: _queue_usage(cq, views) for cq in queues}
        return StepOutcome(step.index, step.at_text, now, views, preempted, usage)

    def _view(self, workload: Workload) -> WorkloadView:
        if workload.state is WorkloadState.QUOTA_RESERVED:
            status = self.pending.get(workload.key)
            return WorkloadView(workload, self.borrowing.get(workload.key, False), status)
        if workload.state not in WAITING:
            return WorkloadView(workload, self.borrowing.get(workload.key, False))
        status = self.pending.get(workload.key) or _unevaluated(workload)
        return WorkloadView(workload, status=status)


def _unevaluated(workload: Workload) -> PendingStatus:
    """What to say of a waiting workload the engine gave no status for."""
    if workload.state is WorkloadState.DEACTIVATED:
        reason = Reason(WaitReason.DEACTIVATED, f"{workload.key} was deactivated by an admin")
    else:
        reason = Reason(
            WaitReason.PENDING_EVALUATION, f"{workload.key} is queued, not evaluated yet"
        )
    return PendingStatus(workload.key, None, (reason,))


def _queue_usage(cq: ClusterQueue, views: tuple[WorkloadView, ...]) -> QueueUsage:
    nominal: dict[str, dict[str, int]] = {}
    for group in cq.resource_groups:
        for quotas in group.flavors:
            nominal.setdefault(quotas.flavor, {}).update(
                {quota.resource: quota.nominal for quota in quotas.resources}
            )
    usage = {flavor: dict.fromkeys(resources, 0) for flavor, resources in nominal.items()}
    admitted = pending = 0
    for view in views:
        workload = view.workload
        if workload.state in HOLDS_QUOTA and workload.admission is not None:
            if workload.admission.cluster_queue != cq.name:
                continue
            admitted += 1
            for (flavor, resource), amount in workload.admission.usage().items():
                held = usage.setdefault(flavor, {})
                held[resource] = held.get(resource, 0) + amount
        elif (
            workload.state is WorkloadState.PENDING
            and view.status is not None
            and (view.status.cluster_queue == cq.name)
        ):
            pending += 1
    borrowed = {
        flavor: {
            resource: max(0, amount - nominal.get(flavor, {}).get(resource, 0))
            for resource, amount in resources.items()
        }
        for flavor, resources in usage.items()
    }
    return QueueUsage(usage, borrowed, pending, admitted)
