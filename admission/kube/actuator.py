"""``JobActuator``: committed decisions carried out on the workload objects of every kind
in ``kinds.registry`` (idempotent)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from admission.engine.types import Snapshot
from admission.kube import events, templates
from admission.kube.client import Kube, Obj
from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.pod import POD
from admission.kube.kinds.registry import by_kind
from admission.kube.pod_groups import actuate_group
from admission.kube.reclaim import JobReclaimer
from admission.kube.taints import NodeTainter
from admission.loop.actuation import ADMIT, CHECKPOINT, EVICT, REASON, Actuation
from quota.core.checkpoints import CHECKPOINTED_AT
from quota.core.errors import BerthError, NotFound
from quota.core.model import Node

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class JobActuator:
    """Admit = steer every pod template and resume, evict = suspend, clear startTime
    (Jobs) and restore (the steps of ``templates.EVICT_STEPS``), reason = annotate + Event,
    (a pod group's: ``pod_groups.actuate_group``)
    checkpoint = annotate the request and its deadline + Event (the Job keeps running)."""

    def __init__(
        self,
        kube: Kube,
        *,
        clock: Clock = _utcnow,
        reclaimer: JobReclaimer | None = None,
        tainter: NodeTainter | None = None,
    ) -> None:
        self.kube = kube
        self.clock = clock
        self.reclaimer = reclaimer
        self.tainter = tainter  # None: Nodes are left alone (BERTH_TAINT_NODES=false)

    async def reconcile(self, ledger_view: Snapshot) -> None:
        """At the start of leadership: release what vanished Jobs still hold, and check
        every Node's taint again."""
        if self.reclaimer is not None:
            await self.reclaimer.reconcile(ledger_view)
        if self.tainter is not None:
            self.tainter.reset()

    async def follow_nodes(self, nodes: Mapping[str, Node]) -> None:
        """After each cycle: Berth's taint on the Nodes out of the pool, and only there."""
        if self.tainter is not None:
            await self.tainter.follow(nodes)

    async def actuate(self, actions: Sequence[Actuation]) -> None:
        for action in actions:
            adapter = by_kind(action.kind)
            if adapter is None:
                continue  # a Workload submitted over REST has no Kubernetes object to patch
            try:
                await self._one(adapter, action)
            except NotFound:
                log.info("%s %s is gone; nothing to %s", action.kind, action.key, action.action)
            except BerthError as exc:
                # The loop re-actuates what is in force after a restart; one failure must
                # not keep the other objects of the cycle waiting.
                log.warning("%s %s: %s failed: %s",
                            action.kind, action.key, action.action, exc.message)  # fmt: skip

    async def _one(self, adapter: Adapter, action: Actuation) -> None:
        if adapter is POD:
            await actuate_group(self.kube, action, now=self.clock(), event=self._event)
            return
        namespace, _, name = action.key.partition("/")
        job = await self.kube.get(adapter.ref, namespace, name)
        job.setdefault("apiVersion", adapter.api_version)
        job.setdefault("kind", adapter.kind)
        if action.action == ADMIT:
            await self._admit(job, action)
        elif action.action == EVICT:
            await self._evict(job, action)
        elif action.action == REASON:
            await self._reason(job, action)
        elif action.action == CHECKPOINT:
            await self._checkpoint(job, action)
        else:
            log.warning("Job %s: unknown action %r", action.key, action.action)

    async def _admit(self, job: Obj, action: Actuation) -> None:
        job, _ = await self._steps(job, templates.ADMIT_STEPS)
        flavors = templates.admitted_flavors(action.admission, action.flavors)
        domain = templates.admitted_domain(action.admission)
        steering = templates.pod_set_steering(action.admission, action.flavors)
        patch = templates.admit_patch(job, flavors, domain, per_pod_set=steering)
        if patch is None:
            return
        await self._patch(job, patch)
        queue = action.admission.cluster_queue if action.admission else "?"
        names = ", ".join(f.name for f in flavors) or "no flavor"
        await self._event(job, "Admitted", f"admitted by ClusterQueue {queue} in {names}")

    async def _evict(self, job: Obj, action: Actuation) -> None:
        job, done = await self._steps(job, templates.EVICT_STEPS)
        if not done:
            return
        why = action.reason.message if action.reason else "evicted by Berth"
        await self._event(job, "Evicted", why, warning=True)

    async def _checkpoint(self, job: Obj, action: Actuation) -> None:
        if action.requested_at is None or action.deadline is None:
            return
        patch = templates.checkpoint_patch(job, action.requested_at, action.deadline)
        if patch is None:
            return
        await self._patch(job, patch)
        deadline = action.deadline.strftime("%Y-%m-%dT%H:%M:%SZ")
        message = (
            f"preempted: checkpoint by {deadline} and set annotation "
            f"{CHECKPOINTED_AT}; the {job.get('kind') or 'Job'} is suspended then, or at "
            "the deadline"
        )
        await self._event(job, "CheckpointRequested", message, warning=True)

    async def _reason(self, job: Obj, action: Actuation) -> None:
        if action.reason is None:
            return
        code, message = str(action.reason.code), action.reason.message
        previous = templates.annotations_of(job).get(templates.WAIT_REASON)
        patch = templates.reason_patch(job, code, message)
        if patch is None:
            return
        await self._patch(job, patch)
        if previous != code:
            await self._event(job, code, message)

    async def _steps(self, job: Obj, steps: Sequence[templates.Step]) -> tuple[Obj, bool]:
        """Run each step still to do, in order, on the Job the previous one left; the Job
        after them and whether any was needed."""
        done = False
        for step in steps:
            patch = step.patch(job)
            if patch is None:
                continue
            job = await self._patch(job, patch, status=step.status)
            done = True
        return job, done

    async def _patch(self, job: Obj, patch: Obj, *, status: bool = False) -> Obj:
        meta, ref = job["metadata"], templates.adapter(job).ref
        return await self.kube.patch(ref, meta["namespace"], meta["name"], patch, status=status)

    async def _event(self, job: Obj, reason: str, message: str, *, warning: bool = False) -> None:
        await events.record(self.kube, job, reason, message, now=self.clock(), warning=warning)
