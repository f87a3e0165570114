"""The progress bar a real-time run draws on stderr (a line every few seconds off a TTY)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from berth.bench.realtime import Progress

WIDTH = 30
PLAIN_EVERY = 10.0  # seconds between lines when stderr is not a terminal


class ProgressBar:
    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self._last = float("-inf")
        self._open = False  # a terminal line drawn and not yet ended

    def __call__(self, progress: Progress) -> None:
        total = max(progress.total, 1)
        filled = WIDTH * progress.finished // total
        bar = "#" * filled + "." * (WIDTH - filled)
        line = (
            f"{self.label} [{bar}] {progress.finished:,}/{progress.total:,} finished, "
            f"{progress.admitted:,} admitted, {progress.submitted:,} arrived, "
            f"{progress.elapsed:,.0f} s"
        )
        if self.tty:
            self.stream.write("\r" + line)
            self._open = progress.finished < progress.total
            if not self._open:
                self.stream.write("\n")
        elif time.monotonic() - self._last >= PLAIN_EVERY or progress.finished >= progress.total:
            self.stream.write(line + "\n")
            self._last = time.monotonic()
        self.stream.flush()

    def end(self) -> None:
        """End a bar left drawn (a run that failed or was stopped), so what follows starts
        on a line of its own."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False

    def note(self, message: str) -> None:
        self.stream.write(message + "\n")
        self.stream.flush()
