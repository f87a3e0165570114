"""The real-time run's other processes: the arrival driver and the simulated runner.

Each runs in its own interpreter (``multiprocessing``'s spawn context: a fresh ``python``,
nothing inherited but its arguments), so neither competes with the loop for a GIL; they
meet the loop only in PostgreSQL. The parent keeps a pipe to each for the start and the
end: a child connects, says it is ready, and waits for the ``StartClock`` (the shape's t=0
on the monotonic clock, which every process on the machine shares, and on the wall clock);
at the end it sends what it measured. A child that raises sends its traceback and exits 1;
the parent raises ``ChildFailed`` with it, and on any way out stops every child still
running (SIGTERM, then SIGKILL) and reaps it. A child whose parent is gone stops by itself
(``Handshake.check_parent``), so a killed bench leaves nothing behind. ``memory_of`` reads
what a process holds in memory (the loop's, at the end of a run).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from types import TracebackType
from typing import Any

from berth.bench.figures import Memory
from quota.core.errors import BerthError

CONTEXT = multiprocessing.get_context("spawn")
START_LEAD = 0.2  # seconds between sending the start and t=0, so every child is waiting
POLL = 0.05  # seconds between looks at the children
GRACE = 3.0  # seconds a stopped child gets before SIGKILL


@dataclass(frozen=True, slots=True)
class StartClock:
    """The shape's t=0, the same instant on both clocks."""

    monotonic: float  # time.monotonic(): CLOCK_MONOTONIC, one clock for every process
    wall: datetime  # created_at of an arrival is this plus its arrival time

    @classmethod
    def after(cls, lead: float) -> StartClock:
        return cls(time.monotonic() + lead, datetime.now(UTC) + timedelta(seconds=lead))

    def elapsed(self) -> float:
        """Seconds since t=0 (negative before it)."""
        return time.monotonic() - self.monotonic


def memory_of(pid: int) -> Memory:
    """``pid``'s resident memory from ``/proc/<pid>/status`` (Linux): VmRSS and VmHWM."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    return Memory(*(_bytes(fields[name]) for name in ("VmRSS", "VmHWM")))


def _bytes(value: str) -> int:
    amount, unit = value.split()
    assert unit == "kB", unit  # the kernel's unit for these fields (KiB)
    return int(amount) * 1024


class ChildFailed(BerthError):
    """A child process raised, died, or stopped before it finished."""


class ParentGone(Exception):
    """The bench that started this child is gone: stop."""


class Handshake:
    """A child's side of its pipe."""

    def __init__(self, connection: Connection, parent: int) -> None:
        self.connection = connection
        self.parent = parent

    def ready(self) -> StartClock:
        """Tell the parent this child is ready; wait for t=0."""
        self.connection.send(("ready", os.getpid()))
        while not self.connection.poll(POLL):
            self.check_parent()
        clock = self.connection.recv()
        assert isinstance(clock, StartClock)
        return clock

    def check_parent(self) -> None:
        if os.getppid() != self.parent:
            raise ParentGone(f"the bench (pid {self.parent}) is gone")


Work = Callable[..., object]  # (handshake, *args) -> what the parent gets at the end


def _entry(connection: Connection, parent: int, work: Work, args: tuple[Any, ...]) -> None:
    try:
        result = work(Handshake(connection, parent), *args)
    except (KeyboardInterrupt, ParentGone):
        sys.exit(130)  # Ctrl-C reaches the whole group: the parent reports it
    except BaseException:
        connection.send(("failed", traceback.format_exc()))
        sys.exit(1)
    connection.send(("done", result))


@dataclass(slots=True)
class _Child:
    name: str
    process: SpawnProcess
    connection: Connection
    pid: int = 0
    result: object = None
    done: bool = False

    def take(self) -> str | None:
        """Read what the child sent; the state it is in ("ready", "done", or None)."""
        while not self.done and self.connection.poll():
            try:
                kind, value = self.connection.recv()
            except EOFError:
                break
            if kind == "ready":
                self.pid = value
            elif kind == "done":
                self.result, self.done = value, True
            else:
                raise ChildFailed(f"the {self.name} (pid {self.process.pid}) failed:\n{value}")
        if not self.done and not self.process.is_alive():
            code = self.process.exitcode
            how = f"was killed by signal {-code}" if code and code < 0 else f"exited {code}"
            raise ChildFailed(f"the {self.name} (pid {self.process.pid}) {how} before it finished")
        if self.done:
            return "done"
        return "ready" if self.pid else None


class Children:
    """The children of one run; leave the ``with`` block and none is left running."""

    def __init__(self) -> None:
        self.children: list[_Child] = []

    def spawn(self, name: str, work: Work, *args: object) -> None:
        """Start ``work(handshake, *args)`` in a new interpreter."""
        mine, theirs = CONTEXT.Pipe()
        process = CONTEXT.Process(
            target=_entry, args=(theirs, os.getpid(), work, args), name=name, daemon=True
        )
        process.start()
        theirs.close()
        self.children.append(_Child(name, process, mine))

    @property
    def pids(self) -> dict[str, int]:
        return {child.name: child.pid for child in self.children}

    async def ready(self) -> None:
        """Wait until every child is ready (raises ``ChildFailed``)."""
        while True:  # polled: a pipe and a process's end are not awaitable
            if all([child.take() is not None for child in self.children]):
                return
            await asyncio.sleep(POLL)

    def start(self, clock: StartClock) -> None:
        for child in self.children:
            child.connection.send(clock)

    async def results(self) -> dict[str, object]:
        """What each child sent at its end, by name (raises ``ChildFailed``)."""
        while True:
            if all([child.take() == "done" for child in self.children]):
                break
            await asyncio.sleep(POLL)
        return {child.name: child.result for child in self.children}

    def __enter__(self) -> Children:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Reap every child: a finished one exits by itself, the others are stopped."""
        for child in self.children:
            if not child.done:
                child.process.terminate()
        deadline = time.monotonic() + GRACE
        for child in self.children:
            child.process.join(max(0.0, deadline - time.monotonic()))
            if child.process.is_alive():
                child.process.kill()
                child.process.join()
            child.connection.close()
