"""The ``services/proxy`` subresource: ``/api/v1/namespaces/NS/services/[SCHEME:]NAME[:PORT]/proxy/PATH``
forwarded, method, query and body, to the Service's endpoints, as the real API server does.
The fake runs no pods: a test registers the URL that stands for a Service port's endpoints
(``FakeKubectl.serve``). As the real one: the Service must exist and have that port (by
name or number; none named: its first), a Service without endpoints answers 503, and the
caller's credentials are not forwarded (``authn`` removed them from the request)."""

from __future__ import annotations

import httpx
from starlette.requests import Request
from starlette.responses import Response

from builders.fakeapi.errors import ApiError
from builders.fakeapi.store import Store

SERVICES = ("", "services")
# Hop-by-hop headers a proxy does not pass on, either way.
HOP_BY_HOP = frozenset(
    {"host", "connection", "content-length", "transfer-encoding", "keep-alive", "upgrade"}
)


def service_port(store: Store, namespace: str, target: str) -> tuple[str, int]:
    """The Service's name and the port number ``target`` (``[SCHEME:]NAME[:PORT]``) names."""
    parts = target.split(":")
    if len(parts) == 3:
        parts = parts[1:]  # the scheme: http or https to the endpoints; all are plain here
    name, port = parts[0], parts[1] if len(parts) > 1 else ""
    service = store.get(store.resources[SERVICES], namespace, name)
    for entry in service.get("spec", {}).get("ports") or []:
        if port in ("", str(entry.get("port")), entry.get("name")):
            return name, int(entry["port"])
    raise ApiError(
        503, "ServiceUnavailable", f'no endpoints available for service "{name}:{port}"'
    )


def endpoint(store: Store, namespace: str, target: str) -> str:
    """The URL standing for the endpoints of the Service port ``target`` names."""
    name, port = service_port(store, namespace, target)
    upstream = store.proxy_targets.get((namespace, name, port))
    if upstream is None:
        raise ApiError(503, "ServiceUnavailable", f'no endpoints available for service "{name}"')
    return upstream


async def proxy(store: Store, request: Request, namespace: str, target: str, rest: list[str]) -> Response:
    upstream = endpoint(store, namespace, target)
    headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
    async with httpx.AsyncClient(base_url=upstream, timeout=30) as client:
        answer = await client.request(
            request.method,
            "/" + "/".join(rest),
            params=list(request.query_params.multi_items()),
            content=await request.body(),
            headers=headers,
        )
    kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP | {"content-encoding"}}
    return Response(answer.content, status_code=answer.status_code, headers=kept)
