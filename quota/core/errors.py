"""Berth's error hierarchy: one root, each error carries an HTTP status and names what failed."""

from __future__ import annotations

from dataclasses import dataclass


class BerthError(Exception):
    """Root of every error Berth raises on purpose. ``status`` is the HTTP status to answer."""

    status: int = 500
    code: str = "InternalError"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def headers(self) -> dict[str, str]:
        """HTTP headers the answer carries besides the body (e.g. ``Retry-After``)."""
        return {}

    def to_dict(self) -> dict[str, str]:
        body = {"code": self.code, "message": self.message}
        if self.field is not None:
            body["field"] = self.field
        return body


class NotFound(BerthError):
    status = 404
    code = "NotFound"


class Conflict(BerthError):
    """The object changed since it was read (optimistic concurrency) or already exists."""

    status = 409
    code = "Conflict"


class DatabaseUnavailable(BerthError):
    status = 503
    code = "DatabaseUnavailable"


class EmbeddedPostgresError(BerthError):
    """The embedded PostgreSQL could not be prepared or started (message says what to do)."""

    code = "EmbeddedPostgresError"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with input: where (file, document, object, field) and why."""

    message: str
    source: str = ""  # file name or "-" for stdin or "request"
    document: int | None = None  # 0-based index of the YAML document
    obj: str = ""  # Kind/name or Kind/namespace/name
    field: str = ""  # JSON-path-like field, e.g. spec.resourceGroups[0].flavors[0]...

    def __str__(self) -> str:
        where = [self.source or "input"]
        if self.document is not None:
            where.append(f"document {self.document}")
        if self.obj:
            where.append(self.obj)
        location = ": ".join(where)
        if self.field:
            return f"{location}: {self.field}: {self.message}"
        return f"{location}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        return {
            "message": self.message,
            "source": self.source,
            "document": self.document,
            "object": self.obj,
            "field": self.field,
        }


class InvalidInput(BerthError):
    """Input that cannot be accepted; ``problems`` lists every problem found, one per line."""

    status = 422
    code = "InvalidInput"

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        first = problems[0] if problems else Problem("invalid input")
        super().__init__("\n".join(str(p) for p in problems), field=first.field or None)
