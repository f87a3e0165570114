"""The REST client every command that reads or changes objects or workloads uses, pointed
where the settings say (kubectl's rule: ``--server``, else ``BERTH_SERVER``, else the
settings file's ``client.server``, else ``http://127.0.0.1:8000``; the token from
``BERTH_TOKEN``). No command opens the ledger itself, so every one sees the same Berth."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from quota.core.errors import Problem

if TYPE_CHECKING:
    from berth.settings import ClientSettings

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2
_INVALID = (400, 404, 409, 422)  # the request was wrong, not the server
START_ONE = (
    "start one with `berth serve --demo` (or `berth serve`), or name another with "
    "--server URL or BERTH_SERVER"
)


class ApiError(Exception):
    """The server answered with an error, or could not be reached (``status`` 0)."""

    def __init__(
        self, status: int, code: str, message: str, problems: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.problems = tuple(problems)  # InvalidInput: every problem, one line each

    def lines(self) -> list[str]:
        """What to print: every problem when the server listed them, else the message."""
        return list(self.problems) or [self.message]


def add_server_flag(parser: argparse.ArgumentParser) -> None:
    """``--server URL``: the Berth API this command talks to."""
    parser.add_argument(
        "--server",
        help="Berth API URL (default $BERTH_SERVER, else http://127.0.0.1:8000); "
        "token from $BERTH_TOKEN",
    )


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

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        json: Mapping[str, Any] | None = None,
        content: str | None = None,
    ) -> Any:
        """The JSON body of the answer; ``ApiError`` on an error answer or no answer."""
        try:
            response = self._http.request(
                method, path, params=dict(params or {}), json=json, content=content
            )
        except httpx.HTTPError as exc:
            raise ApiError(
                0, "Unreachable", f"no Berth answers at {self.server} ({exc}); {START_ONE}"
            ) from exc
        if response.status_code >= 400:
            raise _error(response)
        return response.json()

    def get(self, path: str, params: Mapping[str, str | int] | None = None) -> Any:
        """The JSON body of ``GET path``; ``ApiError`` on an error answer."""
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """The JSON body of ``POST path`` with a JSON ``body``; ``ApiError`` on an error."""
        return self.request("POST", path, json=body)

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


def guarded(
    args: argparse.Namespace, action: Callable[[BerthClient], object], *, coded: bool = False
) -> int:
    """Run ``action`` with a client for the server the settings name; an error answer is
    printed on stderr and becomes the exit code (``EXIT_INVALID`` for a wrong request).
    ``coded``: ``action`` returns the exit code itself (when some of its parts failed)."""
    try:
        with connect(args) as client:
            outcome = action(client)
    except ApiError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return EXIT_INVALID if exc.status in _INVALID else EXIT_FAILED
    return outcome if coded and isinstance(outcome, int) else EXIT_OK


def _error(response: httpx.Response) -> ApiError:
    try:
        error = response.json()["error"]
        problems = [_problem(p) for p in error.get("problems") or ()]
        return ApiError(response.status_code, str(error["code"]), str(error["message"]), problems)
    except (ValueError, KeyError, TypeError, AttributeError):
        return ApiError(response.status_code, "HTTPError", response.text[:200] or "no body")


def _problem(problem: Mapping[str, Any]) -> str:
    return str(
        Problem(
            str(problem["message"]), source=problem.get("source") or "",
            document=problem.get("document"), obj=problem.get("object") or "",
            field=problem.get("field") or "",
        )
    )  # fmt: skip
