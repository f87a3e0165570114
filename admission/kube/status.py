"""Queue status written back to the custom resources (status subresource, merge patch):
usage per flavor, pending, reserving and admitted counts, pending counts per primary reason."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from admission.kube.client import Kube, Obj
from admission.kube.jobs import SessionScope
from admission.kube.mirror import BERTH_KINDS, Mirror
from quota.core.errors import BerthError, NotFound
from quota.core.quantity import format_quantity
from quota.core.reasons import WaitReason
from quota.ledger.reads.status import QueueCounts, cluster_queue_counts, local_queue_counts

log = logging.getLogger(__name__)


def cluster_queue_status(counts: QueueCounts) -> Obj:
    """A ClusterQueue's status fields in Kueue's spelling, plus Berth's ``pendingReasons``."""
    usage = [
        {
            "name": flavor,
            "resources": [
                {"name": resource, "total": format_quantity(amount, resource)}
                for resource, amount in sorted(resources.items())
            ],
        }
        for flavor, resources in sorted(counts.usage.items())
    ]
    return {
        "pendingWorkloads": counts.pending,
        "reservingWorkloads": counts.reserving,
        "admittedWorkloads": counts.admitted,
        "flavorsReservation": usage,
        "flavorsUsage": usage,
        # A merge patch merges maps: codes no longer pending must be nulled to disappear.
        "pendingReasons": {str(code): counts.pending_reasons.get(code) for code in WaitReason},
    }


def local_queue_status(counts: QueueCounts) -> Obj:
    return {
        "pendingWorkloads": counts.pending,
        "reservingWorkloads": counts.reserving,
        "admittedWorkloads": counts.admitted,
    }


class StatusWriter:
    """Patches the status of every queue present in the cluster whose figures changed."""

    def __init__(self, kube: Kube, sessions: SessionScope, mirror: Mirror) -> None:
        self.kube = kube
        self.sessions = sessions
        self.mirror = mirror
        self._written: dict[tuple[str, str, str], Obj] = {}

    async def write(self) -> int:
        """One pass; how many objects were patched."""
        cluster, local = await asyncio.to_thread(self._read)
        wanted: dict[tuple[str, str, str], Obj] = {}
        for _, name in self.mirror.present.get("ClusterQueue", set()):
            status = cluster_queue_status(cluster.get(name, QueueCounts()))
            wanted[("ClusterQueue", "", name)] = status
        for namespace, name in self.mirror.present.get("LocalQueue", set()):
            status = local_queue_status(local.get((namespace, name), QueueCounts()))
            wanted[("LocalQueue", namespace, name)] = status
        patched = 0
        for key, status in sorted(wanted.items()):
            if self._written.get(key) == status:
                continue
            kind, namespace, name = key
            try:
                await self.kube.patch(
                    BERTH_KINDS[kind], namespace or None, name, {"status": status}, status=True
                )
            except NotFound:
                continue  # deleted meanwhile; the mirror forgets it on the DELETED event
            except BerthError as exc:
                log.warning("status of %s %s not written: %s", kind, name, exc.message)
                continue
            self._written[key] = status
            patched += 1
        return patched

    def _read(self) -> tuple[Mapping[str, QueueCounts], Mapping[tuple[str, str], QueueCounts]]:
        with self.sessions() as session:
            return cluster_queue_counts(session), local_queue_counts(session)
