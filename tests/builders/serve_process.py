"""A real ``python -m berth serve`` process for process-level loop tests, its log kept on disk."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from builders.paths import REPO
from builders.ports import free_port

_ADMITTED = re.compile(r"admission\.loop\.loop: admitted (\S+) to ClusterQueue")


class ServeProcess:
    """``berth serve --database-url URL`` on a free loopback port, with a fast loop."""

    def __init__(
        self, url: str, log: Path, *, interval: float = 0.2, env: dict[str, str] | None = None
    ) -> None:
        self.url = url
        self.log = log
        self.interval = interval
        self.extra_env = dict(env or {})
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=5)

    def start(self, timeout: float = 30) -> None:
        """Start the server and wait until ``/readyz`` answers 200."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_")}
        env.update(self.extra_env)
        with self.log.open("ab") as out:
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
                    str(self.interval),
                ],
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while self.status("/readyz") != 200:
            if self.process.poll() is not None:
                raise RuntimeError(f"berth serve exited early:\n{self.output()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"berth serve was not ready in {timeout}s:\n{self.output()}")
            time.sleep(0.05)
        if self.process.poll() is not None:  # the answer came from another server on the port
            raise RuntimeError(f"berth serve exited after /readyz answered:\n{self.output()}")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def holder(self) -> str:
        """How this replica names itself in the ``loop_leader`` row."""
        return f"{socket.gethostname()}:{self.pid}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def status(self, path: str) -> int | None:
        """The status code of ``GET path``, or ``None`` when the server does not answer."""
        try:
            return self.client.get(path, timeout=2).status_code
        except httpx.HTTPError:
            return None

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.client.post(path, **kwargs)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def admitted(self) -> list[str]:
        """Every ``namespace/name`` this process's loop logged as admitted, in order."""
        return _ADMITTED.findall(self.output())

    def pause(self) -> None:
        """SIGSTOP: alive, connections open, doing nothing (a hung process)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: no shutdown path runs, the connections just drop."""
        if self.alive():
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it does not exit in time; closes the client."""
        if self.alive():
            assert self.process is not None
            self.process.send_signal(signal.SIGCONT)  # a paused process cannot handle SIGTERM
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.client.close()


def wait_for(check: Callable[[], object], seconds: float, what: str) -> float:
    """Poll ``check()`` until truthy; the seconds it took (fails after ``seconds``)."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > seconds:
            raise AssertionError(f"{what}: not reached within {seconds}s")
        time.sleep(0.05)
    return time.monotonic() - start
