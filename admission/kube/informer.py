"""List, then watch, one resource for ever: resume from the last resourceVersion (bookmarks
keep it fresh), re-list when the server says it is too old (410 Gone)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from admission.kube.client import Kube, Obj, ResourceRef
from admission.kube.errors import Gone, from_status
from quota.core.errors import BerthError

log = logging.getLogger(__name__)

# Called with "ADDED" | "MODIFIED" | "DELETED" and the object (kind and apiVersion filled in).
Handler = Callable[[str, Obj], Awaitable[None]]


class Informer:
    """Keeps ``handler`` told about every object of ``ref``; ``synced`` is set after a list."""

    def __init__(
        self,
        kube: Kube,
        ref: ResourceRef,
        handler: Handler,
        *,
        label_selector: str | None = None,
        timeout_seconds: int = 300,
        retry_seconds: float = 1.0,
    ) -> None:
        self.kube = kube
        self.ref = ref
        self.handler = handler
        self.label_selector = label_selector
        self.timeout_seconds = timeout_seconds
        self.retry_seconds = retry_seconds
        self.resource_version = ""
        self.lists = 0  # how many times it listed: 1 + the re-lists after 410 Gone
        self.synced = asyncio.Event()
        self._known: dict[tuple[str, str], Obj] = {}

    async def run(self) -> None:
        need_list = True
        while True:
            try:
                if need_list:
                    await self._list()
                    need_list = False
                await self._watch()
            except Gone as exc:
                log.info("%s watch expired, listing again: %s", self.ref.kind, exc.message)
                need_list = True
            except BerthError as exc:
                log.warning("%s watch failed, retrying: %s", self.ref.kind, exc.message)
                await asyncio.sleep(self.retry_seconds)

    async def _list(self) -> None:
        listing = await self.kube.list(self.ref, label_selector=self.label_selector)
        self.lists += 1
        items = [self._complete(item) for item in listing.get("items") or []]
        current = {_key(item): item for item in items}
        for key, gone in list(self._known.items()):
            if key not in current:
                del self._known[key]
                await self._deliver("DELETED", gone)
        for key, item in current.items():
            before = self._known.get(key)
            if before is not None and _version(before) == _version(item):
                continue
            self._known[key] = item
            await self._deliver("ADDED" if before is None else "MODIFIED", item)
        self.resource_version = str(listing.get("metadata", {}).get("resourceVersion") or "")
        self.synced.set()

    async def _watch(self) -> None:
        events = self.kube.watch(
            self.ref,
            resource_version=self.resource_version,
            timeout_seconds=self.timeout_seconds,
            label_selector=self.label_selector,
        )
        async for event in events:
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                code = int(obj.get("code") or 500)
                raise from_status(code, json.dumps(obj), f"watch of {self.ref.describe()}")
            version = _version(obj)
            if version:
                self.resource_version = version
            if kind == "BOOKMARK" or kind not in ("ADDED", "MODIFIED", "DELETED"):
                continue
            obj = self._complete(obj)
            if kind == "DELETED":
                self._known.pop(_key(obj), None)
            else:
                self._known[_key(obj)] = obj
            await self._deliver(kind, obj)

    def _complete(self, obj: Obj) -> Obj:
        # Lists of built-in kinds leave kind and apiVersion off their items.
        return {"apiVersion": self.ref.api_version, "kind": self.ref.kind, **obj}

    async def _deliver(self, kind: str, obj: Obj) -> None:
        # One object Berth cannot handle must not stop the watch of all the others.
        try:
            await self.handler(kind, obj)
        except BerthError as exc:
            log.warning("%s %s: %s", self.ref.kind, _name(obj), exc.message)
        except Exception:
            log.exception("%s %s: handler failed", self.ref.kind, _name(obj))


def _key(obj: Obj) -> tuple[str, str]:
    meta: dict[str, Any] = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def _version(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _name(obj: Obj) -> str:
    namespace, name = _key(obj)
    return f"{namespace}/{name}" if namespace else name
