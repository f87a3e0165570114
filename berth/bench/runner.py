"""The simulated cluster of a real-time run: it runs what the loop admits, then finishes it.

It is the loop's actuator: an admission committed and actuated starts the workload's run
(its class's run time), an eviction stops it. When a run ends the workload is finished
through the ledger, as the Kubernetes side records a Job's completion, many at a time
(``finish_locked``: a few statements per batch, so a burst of ends is recorded at once).
Rows are locked ``SKIP LOCKED``: a row an admission cycle is writing is finished on the
next pass instead of waiting (so the two never deadlock), and a row found no longer
admitted was evicted meanwhile (its eviction is on its way to ``actuate``).
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

from admission.loop.actuation import ADMIT, EVICT, Actuation
from quota.ledger.lifecycle import finish_locked

SessionScope = Callable[[], AbstractContextManager[Session]]
ACTOR = "bench-runner"
TICK = 0.005  # seconds between looks for runs that ended


class SimulatedRunner:
    def __init__(self, sessions: SessionScope, runtimes: Mapping[str, int]) -> None:
        self.sessions = sessions
        self.runtimes = runtimes  # ms by key
        self.due: dict[str, float] = {}  # key -> monotonic end of its run
        self.heap: list[tuple[float, str]] = []
        self.admitted_at: dict[str, float] = {}  # key -> monotonic time of its last start
        self.admissions = 0
        self.finished = 0

    async def actuate(self, actions: Sequence[Actuation]) -> None:
        now = time.monotonic()
        for action in actions:
            if action.action == ADMIT and action.key in self.runtimes:
                if action.key in self.due:
                    continue  # re-actuated after a restart: already running
                end = now + self.runtimes[action.key] / 1000
                self.due[action.key] = end
                self.admitted_at[action.key] = now
                self.admissions += 1
                heapq.heappush(self.heap, (end, action.key))
            elif action.action == EVICT:
                self.due.pop(action.key, None)

    async def run(self, total: int, stop: asyncio.Event) -> None:
        """Finish runs as they end until ``total`` workloads have finished."""
        while self.finished < total and not stop.is_set():
            now = time.monotonic()
            ended: dict[str, float] = {}
            while self.heap and self.heap[0][0] <= now:
                end, key = heapq.heappop(self.heap)
                if self.due.get(key) == end:
                    ended[key] = end
            if ended:
                done, stopped = await asyncio.to_thread(self._finish, list(ended))
                for key, end in ended.items():
                    if self.due.get(key) != end:
                        continue  # evicted or started again while being finished
                    if key in done or key in stopped:
                        del self.due[key]
                    else:
                        heapq.heappush(self.heap, (end, key))  # locked: next pass
                self.finished += len(done)
            else:
                await asyncio.sleep(TICK)

    def _finish(self, keys: Sequence[str]) -> tuple[set[str], set[str]]:
        """Finish those of ``keys`` still admitted; the keys finished, and those found no
        longer admitted (evicted meanwhile: they run again when admitted again)."""
        now = datetime.now(UTC)
        namespaces, names = zip(*(key.split("/", 1) for key in keys), strict=True)
        with self.sessions() as session:
            rows = session.execute(
                text(
                    "SELECT id, namespace, name, state, version FROM workloads "
                    "WHERE state <> 'Finished' AND (namespace, name) IN (SELECT * FROM unnest("
                    "CAST(:namespaces AS text[]), CAST(:names AS text[]))) "
                    "ORDER BY id FOR UPDATE SKIP LOCKED"
                ),
                {"namespaces": list(namespaces), "names": list(names)},
            ).mappings().all()
            running = [row for row in rows if row["state"] == "Admitted"]
            finish_locked(session, running, now=now, actor=ACTOR)
        done = {f"{row['namespace']}/{row['name']}" for row in running}
        return done, {f"{row['namespace']}/{row['name']}" for row in rows} - done
