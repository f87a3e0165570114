"""The REST client every command that reads or changes objects or workloads uses, pointed
where the settings say (kubectl's rule: ``--server``, else ``BERTH_SERVER``, else the
settings file's ``client.server``, else ``http://127.0.0.1:8000``; the token from
``BERTH_TOKEN``). No command opens the ledger itself, so every one sees the same Berth."""

from __future__ import annotations

import argparse
import ssl
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a client's requests go and how they prove who sends them: a Berth URL and its
    token (the settings), or a route to it through something else (``kubectl berth``: the
    Kubernetes API server's service proxy, with the kubeconfig user's credentials)."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    verify: bool | str = True  # a CA bundle's path, or False
    cert: tuple[str, str] | None = None  # client certificate and key files

    @classmethod
    def of(cls, settings: ClientSettings) -> Endpoint:
        token = settings.token
        return cls(settings.server, {"authorization": f"Bearer {token}"} if token else {})


def connect(args: argparse.Namespace) -> BerthClient:
    """A client for the endpoint chosen already (``args.endpoint``), else for the server
    the settings name (``--server`` first)."""
    endpoint: Endpoint | None = getattr(args, "endpoint", None)
    if endpoint is None:
        # Here, not at the top: building the CLI's parser imports this module, and the
        # settings tree imports the ledger's driver.
        from berth import settings

        endpoint = Endpoint.of(settings.load(vars(args)).client)
    return BerthClient(endpoint)


class BerthClient:
    def __init__(
        self,
        where: ClientSettings | Endpoint,
        *,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        endpoint = where if isinstance(where, Endpoint) else Endpoint.of(where)
        self.server = endpoint.url
        self._http = httpx.Client(
            base_url=endpoint.url,
            headers=dict(endpoint.headers),
            timeout=timeout,
            transport=transport,
            verify=_tls(endpoint),
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


def _tls(endpoint: Endpoint) -> bool | ssl.SSLContext:
    """httpx's ``verify``: the CA to trust and the client certificate to present."""
    if endpoint.verify is True and endpoint.cert is None:
        return True
    if endpoint.verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        ca = endpoint.verify if isinstance(endpoint.verify, str) else None
        context = ssl.create_default_context(cafile=ca)
    if endpoint.cert:
        context.load_cert_chain(*endpoint.cert)
    return context


def _error(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
        if body.get("kind") == "Status":  # the Kubernetes API server's own refusal
            return ApiError(response.status_code, str(body["reason"]), str(body["message"]))
        error = body["error"]
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
