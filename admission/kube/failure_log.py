"""Failures that repeat every few seconds (a forbidden Lease, a missing namespace), logged
once per distinct cause per interval: never silent, never a log line per retry.

A cause is the operation and the API server's reason (``not found``, ``forbidden``,
``conflict``, ...); a new cause is logged at once. The clock is an argument so the tests
step a minute without sleeping one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from admission.kube.errors import Forbidden, Gone, KubernetesUnavailable
from quota.core.errors import BerthError, Conflict, InvalidInput, NotFound

EVERY_SECONDS = 60.0

_REASONS: tuple[tuple[type[BerthError], str], ...] = (
    (NotFound, "not found"),
    (Forbidden, "forbidden"),
    (Conflict, "conflict"),
    (Gone, "gone"),
    (InvalidInput, "invalid"),
    (KubernetesUnavailable, "unavailable"),
)


def reason_of(exc: BerthError) -> str:
    """The API server's reason for a refusal, in words (``forbidden``)."""
    for kind, words in _REASONS:
        if isinstance(exc, kind):
            return words
    return exc.code


class FailureLog:
    """``failed`` logs a failure unless the same cause was logged less than ``every`` ago."""

    def __init__(
        self,
        logger: logging.Logger,
        *,
        every: float = EVERY_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.every = every
        self.monotonic = monotonic
        self._logged: dict[tuple[str, str], float] = {}  # cause -> when last logged

    def failed(self, what: str, exc: BerthError, *, level: int = logging.WARNING) -> str:
        """The sentence for ``what`` failing with ``exc`` (``cannot create the Lease x:
        forbidden: ...``), logged if its cause was not logged in the last interval."""
        reason = reason_of(exc)
        sentence = f"cannot {what}: {reason}: {exc.message}"
        now = self.monotonic()
        last = self._logged.get((what, reason))
        if last is None or now - last >= self.every:
            self._logged[(what, reason)] = now
            self.logger.log(level, "%s", sentence)
        return sentence
