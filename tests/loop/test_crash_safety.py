"""Kill ``berth serve`` at the loop's dangerous points while workloads stream in, restart it,
and check the ledger: nothing over-committed, nothing admitted twice, nothing lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from invariants import violations
from loop_builders import Ledgered, free_port, job, pool

REPO = Path(__file__).resolve().parents[2]
# Each phase runs the server with one crash point armed (None: a clean run to settle).
PHASES = ("before-commit:3", "after-commit:3", "mid-actuation:4", "before-commit:2", None)
PER_PHASE = 6


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
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return  # crashed before it was ready: the next phase restarts it
            try:
                if httpx.get(f"{self.base}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise TimeoutError("berth serve did not become ready")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

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


def test_crashes_at_every_point_leave_a_sound_ledger(ledgered: Ledgered) -> None:
    ledgered.apply(pool(("team-a", 6), ("team-b", 4), preempt=True))
    nominal = {"team-a": 6000, "team-b": 4000}
    server = Server(ledgered.url)
    submitted: set[str] = set()
    unknown: list[tuple[str, dict[str, object]]] = []
    crashes = 0
    serial = 0
    try:
        for phase in PHASES:
            server.start(phase)
            for doc in [d for _, d in unknown]:
                if _post(server, "/api/v1/workloads", json=doc) in (201, 409):
                    submitted.add(f"{doc['metadata']['namespace']}/{doc['metadata']['name']}")  # type: ignore[index]
            unknown = [u for u in unknown if u[0] not in submitted]
            for _ in range(PER_PHASE):
                serial += 1
                team = "team-a" if serial % 2 else "team-b"
                doc = job(
                    f"w-{serial}",
                    1 + serial % 3,
                    namespace=team,
                    priority="high" if serial % 5 == 0 else None,
                )
                key = f"{team}/w-{serial}"
                status = _post(server, "/api/v1/workloads", json=doc)
                if status == 201:
                    submitted.add(key)
                elif status is None:
                    unknown.append((key, doc))
                if serial % 4 == 0:
                    earlier = serial - 3
                    team_of = "team-a" if earlier % 2 else "team-b"
                    _post(server, f"/api/v1/workloads/{team_of}/w-{earlier}/finish")
                time.sleep(0.05)
            deadline = time.monotonic() + 5
            while server.alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            crashes += 0 if server.alive() else 1
            assert not violations(ledgered, nominal, submitted)
            server.kill()
        server.start(None)
        time.sleep(1.5)  # a few cycles of the clean server settle whatever is pending
    finally:
        server.kill()

    assert crashes >= 3, "the crash points were not reached: the harness tested nothing"
    assert violations(ledgered, nominal, submitted) == []
    pending_fit = ledgered.rows(
        "SELECT name FROM workloads WHERE state = 'Pending' AND reason_code = 'PendingEvaluation'"
    )
    assert pending_fit == []
