"""Runs the admission loop while this replica leads; waits, retries and steps down.

Wakes on a ledger NOTIFY or after ``interval`` seconds, whichever comes first. When the
database goes away it backs off (doubling up to a cap) and starts over: leadership is
acquired again and the snapshot reloaded, so nothing depends on what was in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from sqlalchemy import exc as sa_exc

from admission.loop.leader import Leadership
from admission.loop.loop import AdmissionLoop, LostLeadership
from quota.core.errors import DatabaseUnavailable
from quota.ledger.notify import ChangeListener

log = logging.getLogger(__name__)

_UNAVAILABLE = (
    DatabaseUnavailable,
    psycopg.OperationalError,
    sa_exc.OperationalError,
    sa_exc.InterfaceError,
    OSError,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerConfig:
    """How the runner paces itself; built from the settings tree's ``loop`` section
    (``berth.serve.runner_config``), which holds the defaults and documents each one."""

    holder: str  # who leads, for logs and the leader term row
    interval: float  # seconds between cycles without a change notification
    leader_poll: float  # seconds between attempts to become leader
    reconcile_every: float  # seconds between reconcile passes
    backoff_first: float  # seconds after the first failure, doubled up to backoff_max
    backoff_max: float
    # Called after every cycle with its duration and decision count (metrics live above).
    on_cycle: Callable[[float, int], None] | None = None


async def run_while_leading(
    loop: AdmissionLoop,
    leadership: Leadership,
    listener: Callable[[], ChangeListener],
    config: RunnerConfig,
    stop: asyncio.Event,
) -> None:
    """Until ``stop`` is set: lead when possible and run cycles while leading."""
    backoff = config.backoff_first
    while not stop.is_set():
        wake: ChangeListener | None = None
        try:
            if not await leadership.acquire():
                await _sleep(stop, config.leader_poll)
                continue
            await loop.begin(config.holder, keep=leadership.held)
            wake = listener()
            await wake.open()
            backoff = config.backoff_first
            reconciled = time.monotonic()
            while not stop.is_set():
                if not await leadership.held():
                    log.warning("leadership lost; the admission loop stops on this replica")
                    break
                summary = await loop.cycle()
                if config.on_cycle is not None:
                    config.on_cycle(summary.seconds, summary.admitted + summary.evicted)
                if time.monotonic() - reconciled >= config.reconcile_every:
                    await loop.reconcile()
                    reconciled = time.monotonic()
                # Never sleep past a renewal: the lease is kept by this loop, not by a timer.
                await _wait(stop, wake, min(config.interval, leadership.renew_seconds))
        except LostLeadership as exc:
            log.warning("%s", exc.message)
        except _UNAVAILABLE as exc:
            log.warning("ledger database unavailable (%s); retrying in %.1fs", exc, backoff)
            await _sleep(stop, backoff)
            backoff = min(backoff * 2, config.backoff_max)
        except Exception:
            # A bug must not silently end admission on this replica: log, back off, restart.
            log.exception("admission loop failed; restarting in %.1fs", backoff)
            await _sleep(stop, backoff)
            backoff = min(backoff * 2, config.backoff_max)
        finally:
            if wake is not None:
                await wake.close()
        await leadership.release()


async def _wait(stop: asyncio.Event, wake: ChangeListener, interval: float) -> None:
    waiter = asyncio.ensure_future(wake.wait(interval))
    stopper = asyncio.ensure_future(stop.wait())
    done, pending = await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    if waiter in done:
        waiter.result()  # re-raises a dead LISTEN connection


async def _sleep(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
