"""The fake API server's ``services/proxy`` subresource against the real one's behaviour:
the request reaches the Service's endpoints as sent (method, path, query, body), without
the caller's credentials, and what is not there is refused as Kubernetes refuses it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from builders.fakeapi import FakeKubectl
from builders.served import running
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SERVICE = "/api/v1/namespaces/berth-system/services"
PROXY = f"{SERVICE}/berth:80/proxy"


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse(
        {
            "method": request.method,
            "path": request.url.path,
            "query": sorted(request.query_params.multi_items()),
            "body": (await request.body()).decode(),
            "authorization": request.headers.get("authorization"),
        },
        status_code=201 if request.method == "POST" else 200,
    )


@pytest.fixture
def echo() -> Iterator[str]:
    app = Starlette(routes=[Route("/{path:path}", _echo, methods=["GET", "POST", "DELETE"])])
    with running(app) as url:  # type: ignore[arg-type]
        yield url


@pytest.fixture
def cluster(kubectl: FakeKubectl, echo: str) -> FakeKubectl:
    """berth-system/berth with port 80 (named http) whose endpoints are the echo server."""
    kubectl.namespace("berth-system")
    kubectl.create(SERVICE, {"metadata": {"name": "berth"}, "spec": {"ports": [{"name": "http", "port": 80}]}})
    kubectl.serve("berth-system", "berth", 80, echo)
    return kubectl


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "expected"),
    [
        pytest.param("GET", f"{PROXY}/api/v1/workloads/team-a/w", {}, {"method": "GET", "path": "/api/v1/workloads/team-a/w", "query": [], "body": ""}, id="a GET reaches the same path behind proxy"),
        pytest.param("GET", f"{PROXY}/api/v1/workloads", {"params": [("state", "Pending"), ("limit", "2")]}, {"method": "GET", "path": "/api/v1/workloads", "query": [["limit", "2"], ["state", "Pending"]], "body": ""}, id="the query is forwarded"),
        pytest.param("POST", f"{PROXY}/api/v1/apply", {"content": "kind: X"}, {"method": "POST", "path": "/api/v1/apply", "query": [], "body": "kind: X"}, id="the method and body are forwarded"),
        pytest.param("GET", f"{SERVICE}/berth:http/proxy/readyz", {}, {"method": "GET", "path": "/readyz", "query": [], "body": ""}, id="the port may be named"),
        pytest.param("GET", f"{SERVICE}/http:berth:80/proxy/readyz", {}, {"method": "GET", "path": "/readyz", "query": [], "body": ""}, id="a scheme may prefix the Service"),
        pytest.param("DELETE", f"{SERVICE}/berth/proxy/x", {}, {"method": "DELETE", "path": "/x", "query": [], "body": ""}, id="no port takes the Service's first"),
    ],
)
def test_proxy_forwards_the_request_to_the_service(cluster: FakeKubectl, method: str, path: str, kwargs: dict[str, Any], expected: dict[str, Any]) -> None:
    response = cluster.request(method, path, headers={"authorization": "Bearer user-token"}, **kwargs)
    assert response.status_code == (201 if method == "POST" else 200)
    # The API server authenticated the caller; it passes no credentials on.
    assert response.json() == {**expected, "authorization": None}


@pytest.mark.parametrize(
    ("path", "code", "reason", "message"),
    [
        pytest.param(f"{SERVICE}/other:80/proxy/readyz", 404, "NotFound", 'services "other" not found', id="a Service that does not exist is not found"),
        pytest.param(f"{SERVICE}/berth:8080/proxy/readyz", 503, "ServiceUnavailable", 'no endpoints available for service "berth:8080"', id="a port the Service lacks has no endpoints"),
        pytest.param("/api/v1/namespaces/default/services/berth:80/proxy/readyz", 404, "NotFound", 'services "berth" not found', id="the Service is looked up in the path's namespace"),
    ],
)
def test_proxy_refuses_as_the_api_server_does(cluster: FakeKubectl, path: str, code: int, reason: str, message: str) -> None:
    response = cluster.request("GET", path)
    body = response.json()
    assert (response.status_code, body["reason"], body["message"]) == (code, reason, message)


def test_a_service_without_endpoints_answers_503(kubectl: FakeKubectl) -> None:
    kubectl.namespace("berth-system")
    kubectl.create(SERVICE, {"metadata": {"name": "berth"}, "spec": {"ports": [{"port": 80}]}})
    response = kubectl.request("GET", f"{PROXY}/readyz")
    assert (response.status_code, response.json()["reason"]) == (503, "ServiceUnavailable")
