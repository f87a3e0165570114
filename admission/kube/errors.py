"""Kubernetes API failures as Berth's own errors (the API client's exceptions stop here)."""

from __future__ import annotations

import json

from quota.core.errors import BerthError, Conflict, InvalidInput, NotFound, Problem


class KubernetesError(BerthError):
    """The API server refused or failed a request for a reason Berth does not handle."""

    status = 502
    code = "KubernetesError"


class KubernetesUnavailable(KubernetesError):
    status = 503
    code = "KubernetesUnavailable"


class Forbidden(KubernetesError):
    """Berth's service account lacks a permission (see deploy/base/rbac.yaml)."""

    status = 403
    code = "Forbidden"


class Gone(KubernetesError):
    """A watch's resourceVersion is too old: re-list and watch from the new version."""

    status = 410
    code = "Gone"


def from_status(status: int, body: str | bytes | None, what: str) -> BerthError:
    """The error for an HTTP ``status`` with a Kubernetes ``Status`` ``body`` about ``what``."""
    message = _message(body) or f"HTTP {status}"
    text = f"{what}: {message}"
    if status == 404:
        return NotFound(text)
    if status == 409:
        return Conflict(text)
    if status == 410:
        return Gone(text)
    if status in (400, 422):
        return InvalidInput([Problem(message, source="kubernetes", obj=what)])
    if status in (401, 403):
        return Forbidden(text)
    if status == 0 or status >= 500:
        return KubernetesUnavailable(text)
    return KubernetesError(text)


def _message(body: str | bytes | None) -> str:
    if not body:
        return ""
    raw = body.decode(errors="replace") if isinstance(body, bytes) else body
    try:
        parsed = json.loads(raw)
    except ValueError:
        return raw.strip()[:300]
    message = parsed.get("message") if isinstance(parsed, dict) else None
    if isinstance(message, str):
        return message
    return raw.strip()[:300]
