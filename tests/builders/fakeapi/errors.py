"""The fake apiserver's one error: answered as a ``Status`` object."""

from __future__ import annotations


class ApiError(Exception):
    """Answered as a ``Status`` object with ``code`` and ``reason`` (NotFound, Invalid, ...)."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
