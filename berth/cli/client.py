"""The REST client the CLI's REST commands use, pointed where the settings say
(``client``: ``--server`` or ``BERTH_SERVER``, the token from ``BERTH_TOKEN``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from berth.settings import ClientSettings

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2
_INVALID = (400, 404, 409, 422)  # the request was wrong, not the server


class ApiError(Exception):
    """The server answered with an error, or could not be reached (``status`` 0)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def connect(args: argparse.Namespace) -> BerthClient:
    """A client for the server the settings name (``--server`` first)."""
    # Here, not at the top: building the CLI's parser imports this module, and the
    # settings tree imports the ledger's driver.
    from berth import settings

    return BerthClient(settings.load(vars(args)).client)


class BerthClient:
    def __init__(
        self,
        settings: ClientSettings,
        *,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.server = settings.server
        token = settings.token
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(
            base_url=self.server, headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> BerthClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def get(self, path: str, params: Mapping[str, str | int] | None = None) -> Any:
        """The JSON body of ``GET path``; ``ApiError`` on an error answer."""
        try:
            response = self._http.get(path, params=dict(params or {}))
        except httpx.HTTPError as exc:
            raise ApiError(0, "Unreachable", f"cannot reach Berth at {self.server}: {exc}") from exc
        if response.status_code >= 400:
            raise _error(response)
        return response.json()

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """The JSON body of ``POST path`` with a JSON ``body``; ``ApiError`` on an error."""
        try:
            response = self._http.post(path, json=dict(body))
        except httpx.HTTPError as exc:
            raise ApiError(0, "Unreachable", f"cannot reach Berth at {self.server}: {exc}") from exc
        if response.status_code >= 400:
            raise _error(response)
        return response.json()

    def pages(self, path: str, params: Mapping[str, str | int] | None = None) -> Iterator[Any]:
        """Every item of a paginated list, following ``nextCursor``."""
        query: dict[str, str | int] = {"limit": 500, **(params or {})}
        while True:
            page = self.get(path, query)
            yield from page["items"]
            if not page.get("nextCursor"):
                return
            query["cursor"] = page["nextCursor"]

    def workload(self, namespace: str, name: str) -> Any:
        return self.get(f"/api/v1/workloads/{namespace}/{name}")

    def history(self, namespace: str, name: str) -> Any:
        return self.get(f"/api/v1/workloads/{namespace}/{name}/history")


def guarded(args: argparse.Namespace, action: Callable[[BerthClient], object]) -> int:
    """Run ``action`` with a client for the server the settings name; an error answer is
    printed on stderr and becomes the exit code (``EXIT_INVALID`` for a wrong request)."""
    try:
        with connect(args) as client:
            action(client)
    except ApiError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return EXIT_INVALID if exc.status in _INVALID else EXIT_FAILED
    return EXIT_OK


def _error(response: httpx.Response) -> ApiError:
    try:
        error = response.json()["error"]
        return ApiError(response.status_code, str(error["code"]), str(error["message"]))
    except (ValueError, KeyError, TypeError):
        return ApiError(response.status_code, "HTTPError", response.text[:200] or "no body")
