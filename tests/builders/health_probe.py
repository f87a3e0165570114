"""Asks ``/healthz`` every few milliseconds while a test works, from a process of its own
(so the test's threads never share its interpreter lock): the slowest answer and the
failures. Run as a script it probes until its standard input closes, then prints JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import httpx

INTERVAL = 0.005


def _probe(base_url: str) -> None:
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    slowest, answers, failures = 0.0, 0, []
    with httpx.Client(base_url=base_url, timeout=60) as client:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                status = client.get("/healthz").status_code
            except httpx.HTTPError as exc:
                failures.append(repr(exc))
                continue
            slowest = max(slowest, time.perf_counter() - started)
            answers += 1
            if status != 200:
                failures.append(f"status {status}")
            if answers == 1:
                print("ready", flush=True)
            time.sleep(INTERVAL)
    print(json.dumps({"slowest": slowest, "answers": answers, "failures": failures}))


class HealthProbe:
    """``with HealthProbe(url) as health: …``; then ``health.slowest``, ``.failures``."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.slowest = 0.0
        self.answers = 0
        self.failures: list[str] = []
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> HealthProbe:
        self._process = subprocess.Popen(
            [sys.executable, __file__, self.base_url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self._process.stdout is not None
        first = self._process.stdout.readline()
        assert first.strip() == "ready", f"the health probe did not start: {first!r}"
        return self

    def __exit__(self, *_: object) -> None:
        assert self._process is not None
        out, _ = self._process.communicate("", timeout=60)
        found = json.loads(out.strip().splitlines()[-1])
        self.slowest, self.answers = found["slowest"], found["answers"]
        self.failures = list(found["failures"])


if __name__ == "__main__":
    _probe(sys.argv[1])
