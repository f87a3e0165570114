"""Run the real ``berth`` command line against its own embedded PostgreSQL."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from builders.paths import REPO
from builders.ports import free_port


@dataclass
class Berth:
    """Runs ``python -m berth`` with one BERTH_HOME, so every call shares one ledger."""

    home: Path
    port: int
    servers: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_")}
        env["BERTH_HOME"] = str(self.home)
        env["BERTH_SERVER"] = f"http://127.0.0.1:{self.port}"  # where the CLI commands go
        return env

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "berth", *args],
            input=stdin, capture_output=True, text=True, env=self.env, cwd=REPO, timeout=120,
        )

    def serve(self, *flags: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "berth", "serve", "--port", str(self.port), *flags],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env, cwd=REPO,
        )
        self.servers.append(process)
        return process

    def wait_ready(self, timeout: float = 60) -> float:
        """Seconds until /readyz answers 200."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=2).status_code == 200:
                    return time.monotonic() - start
            except httpx.HTTPError:
                pass
            for process in self.servers:
                if process.poll() is not None:
                    output = process.stdout.read() if process.stdout else ""
                    raise RuntimeError(f"berth serve exited early:\n{output}")
            time.sleep(0.1)
        raise TimeoutError("berth serve did not become ready")

    def stop(self, process: subprocess.Popen[str]) -> str:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
        self.servers.remove(process)
        return output


@pytest.fixture
def berth() -> Iterator[Berth]:
    # The test's own data folder, opened (0755) explicitly: as root the embedded server runs
    # as another user, and pytest's own tmp folders are private (0700).
    home = Path(tempfile.mkdtemp(prefix="berth-e2e-", dir="/tmp"))
    home.chmod(0o755)
    instance = Berth(home=home / "home", port=free_port())
    yield instance
    for process in list(instance.servers):
        instance.stop(process)
    shutil.rmtree(home, ignore_errors=True)
