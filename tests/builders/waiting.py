"""A liveness wait for the Kubernetes tests: poll what no event announces (the fake API
server runs in another thread, the ledger in PostgreSQL) until it holds, and fail only if
it never does. The bound is generous: it catches a hang, it does not measure speed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


async def eventually(
    check: Callable[[], Awaitable[bool] | bool], seconds: float = 10, what: str = "the condition"
) -> None:
    try:
        async with asyncio.timeout(seconds):
            while True:
                result = check()
                if result if isinstance(result, bool) else await result:
                    return
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"{what}: not reached within {seconds}s") from None
