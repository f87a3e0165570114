"""A test hook: kill this process at a named point of the loop (crash-safety tests only).

``BERTH_CRASH_AT=<point>[:N]`` with point ``before-commit``, ``after-commit`` or
``mid-actuation``: SIGKILL the process the N-th time (default first) the loop passes that
point; for ``mid-actuation`` N counts actuations delivered. Unset, the hook does nothing.
This is the only place the variable is read.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field

ENV = "BERTH_CRASH_AT"
POINTS = ("before-commit", "after-commit", "mid-actuation")


@dataclass(slots=True)
class CrashHook:
    point: str | None = None
    after: int = 1
    seen: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> CrashHook:
        value = os.environ.get(ENV, "").strip()
        if not value:
            return cls()
        point, _, count = value.partition(":")
        if point not in POINTS:
            raise ValueError(f"{ENV}={value!r}: expected one of {', '.join(POINTS)}[:N]")
        return cls(point, int(count) if count else 1)

    def limit(self, point: str) -> int | None:
        """How many more passes of ``point`` are allowed before the crash (None: no limit)."""
        if self.point != point:
            return None
        return max(self.after - self.seen.get(point, 0), 0)

    def passed(self, point: str, times: int = 1) -> None:
        """Count passes of ``point``; kill the process when the N-th is reached."""
        if self.point != point:
            return
        self.seen[point] = self.seen.get(point, 0) + times
        if self.seen[point] >= self.after:
            os.kill(os.getpid(), signal.SIGKILL)
