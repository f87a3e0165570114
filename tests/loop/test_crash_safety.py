"""Kill ``berth serve`` at the loop's dangerous points while workloads stream in, restart it,
and check the ledger: nothing over-committed, nothing admitted twice, nothing lost.

Each armed phase streams workloads until its crash point kills the server (every point is
reached, or the phase fails at the liveness bound); a clean server then settles the rest.
No fixed waits: the test takes as long as the crashes take."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
from builders.invariants import violations
from builders.loop import Ledgered, pool
from builders.manifests import job
from builders.paths import REPO
from builders.ports import free_port
from builders.serve_process import wait_for

# Each phase runs the server with one crash point armed; a clean run settles after them.
CRASH_POINTS = ("before-commit:3", "after-commit:3", "mid-actuation:4", "before-commit:2")
PER_PHASE = 6  # workloads the clean run adds
LIVENESS = 60.0  # seconds: generous, only a hang (or a crash point never reached) fails


class Server:
    def __init__(self, url: str) -> None:
        self.url = url
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, crash_at: str | None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_")}
        if crash_at:
            env["BERTH_CRASH_AT"] = crash_at
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "berth",
                "serve",
                "--database-url",
                self.url,
                "--port",
                str(self.port),
                "--loop-interval",
                "0.2",
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + LIVENESS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return  # crashed before it was ready: the next phase restarts it
            try:
                if httpx.get(f"{self.base}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise TimeoutError("berth serve did not become ready")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def kill(self) -> None:
        if self.alive():
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)


def _post(server: Server, path: str, **kwargs: object) -> int | None:
    try:
        return httpx.post(f"{server.base}{path}", timeout=5, **kwargs).status_code  # type: ignore[arg-type]
    except httpx.HTTPError:
        return None  # the server died under the request: outcome unknown


class Stream:
    """Workloads submitted one by one (and some finished), remembering what was answered."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.submitted: set[str] = set()  # answered 201 (or 409 on a resubmission)
        self.unknown: list[tuple[str, dict[str, object]]] = []  # no answer: resubmit
        self.serial = 0

    def resubmit_unknown(self) -> None:
        for key, doc in self.unknown:
            if _post(self.server, "/api/v1/workloads", json=doc) in (201, 409):
                self.submitted.add(key)
        self.unknown = [u for u in self.unknown if u[0] not in self.submitted]

    def next(self) -> None:
        self.serial += 1
        serial = self.serial
        team = "team-a" if serial % 2 else "team-b"
        doc = job(f"w-{serial}", 1 + serial % 3, namespace=team,
                  priority="high" if serial % 5 == 0 else None)
        key = f"{team}/w-{serial}"
        status = _post(self.server, "/api/v1/workloads", json=doc)
        if status == 201:
            self.submitted.add(key)
        elif status is None:
            self.unknown.append((key, doc))
        if serial % 4 == 0:
            earlier = serial - 3
            team_of = "team-a" if earlier % 2 else "team-b"
            _post(self.server, f"/api/v1/workloads/{team_of}/w-{earlier}/finish")
        time.sleep(0.05)  # the pace of the stream, not a wait for anything


def _never_evaluated(ledgered: Ledgered) -> list[dict[str, object]]:
    return ledgered.rows(
        "SELECT name FROM workloads WHERE state = 'Pending' AND reason_code = 'PendingEvaluation'"
    )


def _settled(ledgered: Ledgered, submitted: set[str]) -> bool:
    """Every acknowledged workload is in the ledger and evaluated at least once."""
    present = {f"{r['namespace']}/{r['name']}"
               for r in ledgered.rows("SELECT namespace, name FROM workloads")}
    return submitted <= present and not _never_evaluated(ledgered)


def test_crashes_at_every_point_leave_a_sound_ledger(ledgered: Ledgered) -> None:
    ledgered.apply(pool(("team-a", 6), ("team-b", 4), preempt=True))
    nominal = {"team-a": 6000, "team-b": 4000}
    server = Server(ledgered.url)
    stream = Stream(server)
    try:
        for point in CRASH_POINTS:
            server.start(point)
            stream.resubmit_unknown()
            deadline = time.monotonic() + LIVENESS
            while server.alive():  # streams until the armed point kills the server
                assert time.monotonic() < deadline, f"crash point {point} was never reached"
                stream.next()
            assert server.returncode == -signal.SIGKILL, f"{point}: not the hook's SIGKILL"
            assert not violations(ledgered, nominal, stream.submitted), point
        server.start(None)
        stream.resubmit_unknown()
        for _ in range(PER_PHASE):
            stream.next()
        # The clean server evaluates whatever the crashes left pending.
        wait_for(lambda: _settled(ledgered, stream.submitted), LIVENESS, "a settled ledger")
        assert server.alive(), "the clean server crashed"
    finally:
        server.kill()

    assert not stream.unknown, "a submission never got an answer"
    assert violations(ledgered, nominal, stream.submitted) == []
