"""A real-time bench run's arrival driver and simulated runner are processes of their own.

Observed, never mocked: the pids the run reports, the ledger's audit log naming who wrote
each submission and each finish, what a failing child makes of the run, and whether any
process of the run is left once it is over. Behaviour only, never timings.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from berth.bench import driver, runner
from berth.bench.command import bench_shape
from berth.bench.ledger import scratch, server
from berth.bench.processes import ChildFailed
from berth.bench.realtime import DRIVER, RUNNER, Progress, run_shape
from berth.bench.shapes import Shape, WorkloadClass, kueue_shape

SCALE = 0.01
GONE_WITHIN = 30.0  # seconds a killed bench's processes get to notice (a bound, no figure)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _group(group: int) -> list[str]:
    """The command lines of the processes of ``group`` still running (an exited one
    waiting to be reaped by whoever adopted it is not)."""
    running = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after it
            state, _, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
            if int(pgrp) == group and state != "Z":
                command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
                running.append(command.decode(errors="replace"))
    return running


def _children(group: int) -> list[str]:
    """The bench's driver and runner among ``group`` (multiprocessing's resource tracker,
    which every spawning process has, ends by itself once its parent has gone)."""
    return [command for command in _group(group) if "resource_tracker" not in command]


def _wait_until_empty(group: int) -> list[str]:
    deadline = time.monotonic() + GONE_WITHIN
    while (running := _group(group)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return running


def _run(url: str, shape: Shape, on_progress: Callable[[Progress], None]) -> None:
    with server(url) as server_url, scratch(server_url, "berth_bench_procs") as scratch_url:
        asyncio.run(run_shape(scratch_url, shape, on_progress))


def test_the_driver_and_the_runner_write_the_ledger_from_their_own_processes(
    postgres_url: str,
) -> None:
    shape = kueue_shape("kueue-baseline", scale=SCALE)

    report = bench_shape(shape, SCALE, postgres_url)

    pids = report.processes
    assert pids["loop"] == os.getpid()
    assert len({pids["loop"], pids[DRIVER], pids[RUNNER]}) == 3
    # The ledger's audit log: every submission by the driver's pid, every finish by the
    # runner's.
    assert report.writers[driver.actor(pids[DRIVER])] == shape.workloads
    assert report.writers[runner.actor(pids[RUNNER])] == shape.workloads
    assert report.berth.runner_lag is not None and report.berth.runner_lag.count == shape.workloads
    assert not _alive(pids[DRIVER]) and not _alive(pids[RUNNER])


def test_a_child_that_raises_fails_the_run_with_its_traceback_and_none_survives(
    postgres_url: str,
) -> None:
    shape = kueue_shape("kueue-baseline", scale=SCALE)
    broken = replace(shape, classes=(*shape.classes, WorkloadClass("broken", 1, -1, 100, 50, 1)))
    seen: list[dict[str, int]] = []

    with pytest.raises(ChildFailed) as failed:
        _run(postgres_url, broken, lambda progress: seen.append(progress.pids))

    message = failed.value.message
    assert message.startswith(f"the {DRIVER} (pid {seen[-1][DRIVER]}) failed:")
    assert "Traceback" in message
    assert "requests[cpu]: must not be negative, got -1000m" in message
    assert not _alive(seen[-1][DRIVER]) and not _alive(seen[-1][RUNNER])


def test_a_killed_child_fails_the_run_and_the_other_is_stopped(postgres_url: str) -> None:
    shape = kueue_shape("kueue-baseline", scale=SCALE)
    killed: list[dict[str, int]] = []

    def kill_the_runner(progress: Progress) -> None:
        if not killed and progress.submitted > 0:
            killed.append(progress.pids)
            os.kill(progress.pids[RUNNER], signal.SIGKILL)

    with pytest.raises(ChildFailed) as failed:
        _run(postgres_url, shape, kill_the_runner)

    pids = killed[0]
    assert failed.value.message == (
        f"the {RUNNER} (pid {pids[RUNNER]}) was killed by signal 9 before it finished"
    )
    assert not _alive(pids[DRIVER]) and not _alive(pids[RUNNER])


@contextlib.contextmanager
def _bench_in_its_own_group(postgres_url: str) -> Iterator[subprocess.Popen[str]]:
    """``berth bench`` as a terminal starts it (its own process group), once its progress
    bar shows the run has started; killed with its group on the way out."""
    bench = subprocess.Popen(
        [sys.executable, "-m", "berth.cli.main", "bench", "kueue-baseline", "--scale",
         str(SCALE), "--database-url", postgres_url],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert bench.stderr is not None
        for line in bench.stderr:
            if line.startswith("kueue-baseline ["):
                break
        else:
            pytest.fail(f"the bench ended without starting: {bench.wait()}")
        yield bench
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(bench.pid, signal.SIGKILL)
        bench.wait()


def test_ctrl_c_stops_the_bench_and_every_process_it_started(postgres_url: str) -> None:
    with _bench_in_its_own_group(postgres_url) as bench:
        os.killpg(bench.pid, signal.SIGINT)  # what the terminal sends on Ctrl-C
        _, err = bench.communicate(timeout=120)

        assert bench.returncode == 130, err
        assert _children(bench.pid) == []  # reaped before the bench exited
        assert _wait_until_empty(bench.pid) == []


def test_the_children_of_a_killed_bench_stop_by_themselves(postgres_url: str) -> None:
    with _bench_in_its_own_group(postgres_url) as bench:
        bench.send_signal(signal.SIGKILL)  # the parent only: it cannot stop anything
        bench.wait()

        assert _wait_until_empty(bench.pid) == []  # the driver and the runner saw it go
