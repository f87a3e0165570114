"""core/v1 Events on Berth's objects: where ``kubectl describe`` users see what happened."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from admission.kube.client import EVENTS, Kube, Obj
from quota.core.errors import BerthError

log = logging.getLogger(__name__)

COMPONENT = "berth"


def event_body(obj: Obj, reason: str, message: str, *, now: datetime, warning: bool = False) -> Obj:
    """An Event about ``obj`` (PURE); named like kubectl's: object name, then a time stamp."""
    meta: dict[str, Any] = obj.get("metadata") or {}
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{meta.get('name')}.{int(now.timestamp() * 1_000_000):x}",
            "namespace": meta.get("namespace") or "default",
        },
        "involvedObject": {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        },
        "reason": reason,
        "message": message[:1024],
        "type": "Warning" if warning else "Normal",
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


async def record(
    kube: Kube, obj: Obj, reason: str, message: str, *, now: datetime, warning: bool = False
) -> None:
    """Create the Event; a failure is logged, never raised (Events are best effort)."""
    body = event_body(obj, reason, message, now=now, warning=warning)
    try:
        await kube.create(EVENTS, body["metadata"]["namespace"], body)
    except BerthError as exc:
        log.warning("event %s on %s not recorded: %s", reason, body["involvedObject"], exc)
