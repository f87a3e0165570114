"""A test hook: kill this process at a named point of the loop (crash-safety tests only).

``<point>[:N]`` with point ``before-commit``, ``after-commit`` or ``mid-actuation``: SIGKILL
the process the N-th time (default first) the loop passes that point; for
``mid-actuation`` N counts actuations delivered. Empty, the hook does nothing. The tests
set it as ``BERTH_CRASH_AT`` on a ``berth serve`` process: ``berth.settings`` reads the
variable like every other, and ``berth serve`` hands the hook to the loop.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field

POINTS = ("before-commit", "after-commit", "mid-actuation")


@dataclass(slots=True)
class CrashHook:
    point: str | None = None
    after: int = 1
    seen: dict[str, int] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> CrashHook:
        """The hook ``<point>[:N]`` names (none for ""); ``ValueError`` when malformed."""
        value = text.strip()
        if not value:
            return cls()
        point, _, count = value.partition(":")
        if point not in POINTS or (count and (not count.isdigit() or int(count) < 1)):
            raise ValueError(f"{value!r} is not <point>[:N], point one of {', '.join(POINTS)}")
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
