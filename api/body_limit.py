"""Refuse request bodies over a size limit (413) before anything reads or writes them."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quota.core.errors import BerthError

MAX_BODY = 1024 * 1024  # 1 MiB: manifests and scenarios are far smaller


class PayloadTooLarge(BerthError):
    status = 413
    code = "PayloadTooLarge"


class BodyLimit:
    """ASGI middleware: a declared length over the limit is refused at once; a streamed
    body is counted and the read fails with ``PayloadTooLarge`` once it passes the limit."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise PayloadTooLarge(self._message())
            return message

        await self.app(scope, counted, send)

    def _message(self) -> str:
        return f"request body over {self.limit} bytes"

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            {"error": {"code": PayloadTooLarge.code, "message": self._message()}}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
