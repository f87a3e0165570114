"""The aggregation layer, as kube-aggregator does it: an ``APIService`` (apiregistration.k8s.io/v1)
with ``spec.service`` hands every request under ``/apis/GROUP/VERSION`` to that Service's
endpoints (``proxy.endpoint``), over HTTPS, as the front proxy:

- the fake presents a client certificate with CN ``front-proxy-client``, signed by a
  front-proxy CA it makes at start and publishes, with the header names, in the ConfigMap
  kube-system/extension-apiserver-authentication (what an extension server reads to trust
  it);
- the caller goes as ``X-Remote-User`` and one ``X-Remote-Group`` per group; its own
  ``Authorization`` (removed by ``authn``) and any ``X-Remote-*`` or ``Impersonate-*``
  headers it sent are not passed on, so a client cannot forge them;
- the backend's certificate is checked against ``spec.caBundle`` for the name
  ``SERVICE.NAMESPACE.svc``, unless ``spec.insecureSkipTLSVerify``.

A backend that cannot be reached answers 503 in plain text, as the real aggregator's
``http.Error`` does (not a Status). ``status.conditions`` Available is set by a discovery
check (``GET /apis/GROUP/VERSION`` on the backend, as ``system:kube-aggregator`` in
``system:masters``) when the APIService is created and after
each proxied request; only available APIServices are listed in ``/apis``. Having no periodic
check, the fake tries the backend even while the condition says False (the real one answers
503 until its next check passes). The request is authorized (``authz``) before it gets
here; answers are buffered, so a watch through an APIService is not streamed.
"""

from __future__ import annotations

import base64
import json
import ssl
from datetime import UTC, datetime
from pathlib import Path

import httpx
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from builders.certs import Authority
from builders.fakeapi.authn import User
from builders.fakeapi.errors import ApiError
from builders.fakeapi.proxy import HOP_BY_HOP, endpoint
from builders.fakeapi.store import Obj, Store

APISERVICES = ("apiregistration.k8s.io", "apiservices")
CONFIGMAPS = ("", "configmaps")
CLIENT_NAME = "front-proxy-client"
USER_HEADER, GROUP_HEADER, EXTRA_PREFIX = "X-Remote-User", "X-Remote-Group", "X-Remote-Extra-"
# What the caller may not say about itself: the aggregator sets who it is.
_FORGEABLE = ("x-remote-", "impersonate-")


class FrontProxy:
    """The front-proxy CA and the client certificate it signed, on disk for ``ssl``."""

    def __init__(self, directory: Path) -> None:
        self.ca = Authority("front-proxy", directory)
        client = self.ca.issue(CLIENT_NAME, CLIENT_NAME)
        self.cert_file, self.key_file = client.cert_file, client.key_file

    def publish(self, store: Store) -> None:
        """kube-system/extension-apiserver-authentication, as kube-apiserver writes it."""
        data = {
            "requestheader-client-ca-file": self.ca.pem,
            "requestheader-allowed-names": json.dumps([CLIENT_NAME]),
            "requestheader-username-headers": json.dumps([USER_HEADER]),
            "requestheader-group-headers": json.dumps([GROUP_HEADER]),
            "requestheader-extra-headers-prefix": json.dumps([EXTRA_PREFIX]),
        }
        meta = {"name": "extension-apiserver-authentication", "namespace": "kube-system"}
        store.create(store.resources[CONFIGMAPS], "kube-system", {"metadata": meta, "data": data})

    def tls(self, apiservice: Obj) -> ssl.SSLContext:
        """The client side of the connection to ``apiservice``'s backend."""
        spec = apiservice.get("spec") or {}
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        if spec.get("insecureSkipTLSVerify"):
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            context.load_verify_locations(cadata=_ca_bundle(apiservice))
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


def _ca_bundle(apiservice: Obj) -> str:
    name = apiservice["metadata"]["name"]
    try:
        return base64.b64decode(apiservice["spec"].get("caBundle") or "").decode()
    except ValueError as exc:
        raise ApiError(422, "Invalid", f"apiservices {name!r}: spec.caBundle: {exc}") from exc


def aggregated(store: Store, group: str, version: str) -> Obj | None:
    """The APIService that hands ``group/version`` to a Service, if any."""
    found = store.objects[APISERVICES].get(("", f"{version}.{group}"))
    return found if found is not None and (found.get("spec") or {}).get("service") else None


def available(apiservice: Obj) -> bool:
    conditions = (apiservice.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Available" and c["status"] == "True" for c in conditions)


def check_spec(body: Obj) -> None:
    """Refuse an APIService kube-apiserver's validation refuses, for the fields used."""
    spec, name = body.get("spec") or {}, (body.get("metadata") or {}).get("name")
    group, version = spec.get("group"), spec.get("version")
    problems = []
    if not group or not version:
        problems.append("spec.group and spec.version are required")
    elif name != f"{version}.{group}":
        problems.append("metadata.name: must be spec.version+'.'+spec.group")
    if spec.get("service") and spec.get("insecureSkipTLSVerify") and spec.get("caBundle"):
        problems.append("spec.insecureSkipTLSVerify: may not be true if caBundle is present")
    if spec.get("service") and not (
        spec["service"].get("namespace") and spec["service"].get("name")
    ):
        problems.append("spec.service: namespace and name are required")
    if problems:
        raise ApiError(422, "Invalid", f"APIService {name!r}: " + "; ".join(problems))


async def forward(
    store: Store, front: FrontProxy, user: User, request: Request, apiservice: Obj
) -> Response:
    """``request`` as the front proxy sends it to ``apiservice``'s backend."""
    headers = [
        (k, v)
        for k, v in request.headers.items()
        if k.lower() not in HOP_BY_HOP and not k.lower().startswith(_FORGEABLE)
    ]
    headers += [(USER_HEADER, user.name)] + [(GROUP_HEADER, g) for g in user.groups]
    try:
        answer = await _send(
            store,
            front,
            apiservice,
            request.method,
            request.url.path,
            params=list(request.query_params.multi_items()),
            content=await request.body(),
            headers=headers,
        )
    except _Unavailable as exc:
        _set_available(store, apiservice, False, exc.reason, str(exc))
        return PlainTextResponse(
            "service unavailable\n", 503, headers={"X-Content-Type-Options": "nosniff"}
        )
    _set_available(store, apiservice, True, "Passed", "all checks passed")
    # httpx has decoded the body: its content-encoding no longer applies.
    dropped = HOP_BY_HOP | {"content-encoding"}
    kept = {k: v for k, v in answer.headers.items() if k.lower() not in dropped}
    return Response(answer.content, status_code=answer.status_code, headers=kept)


async def check(store: Store, front: FrontProxy, apiservice: Obj) -> None:
    """The aggregator's availability check: local, or the backend answers discovery."""
    spec = apiservice.get("spec") or {}
    if not spec.get("service"):
        _set_available(store, apiservice, True, "Local", "Local APIServices are always available")
        return
    path = f"/apis/{spec['group']}/{spec['version']}"
    # As kube-aggregator's availability controller asks: a masters identity is never refused.
    headers = [(USER_HEADER, "system:kube-aggregator"), (GROUP_HEADER, "system:masters")]
    try:
        answer = await _send(store, front, apiservice, "GET", path, headers=headers)
    except _Unavailable as exc:
        _set_available(store, apiservice, False, exc.reason, str(exc))
        return
    ok = 200 <= answer.status_code < 300
    message = (
        "all checks passed"
        if ok
        else f"failing or missing response from {path}: {answer.status_code}"
    )
    _set_available(store, apiservice, ok, "Passed" if ok else "FailedDiscoveryCheck", message)


class _Unavailable(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


async def _send(
    store: Store, front: FrontProxy, apiservice: Obj, method: str, path: str, **kwargs: object
) -> httpx.Response:
    service = apiservice["spec"]["service"]
    namespace, name = service["namespace"], service["name"]
    try:
        upstream = endpoint(store, namespace, f"{name}:{service.get('port') or 443}")
    except ApiError as exc:
        reason = "ServiceNotFound" if exc.code == 404 else "MissingEndpoints"
        raise _Unavailable(reason, exc.message) from exc
    base = httpx.URL(upstream).copy_with(scheme="https")
    try:
        async with httpx.AsyncClient(
            base_url=base, verify=front.tls(apiservice), timeout=30
        ) as client:
            return await client.request(
                method,
                path,
                extensions={"sni_hostname": f"{name}.{namespace}.svc"},
                **kwargs,  # type: ignore[arg-type]
            )
    except httpx.TransportError as exc:
        raise _Unavailable(
            "FailedDiscoveryCheck", f"failing or missing response from {base}{path}: {exc}"
        ) from exc


def _set_available(store: Store, apiservice: Obj, up: bool, reason: str, message: str) -> None:
    """Record the check's outcome; an unchanged condition is not written again."""
    current = store.objects[APISERVICES].get(("", apiservice["metadata"]["name"]))
    if current is None:
        return
    condition = {"type": "Available", "status": str(up), "reason": reason, "message": message}
    old = (current.get("status") or {}).get("conditions") or []
    before = next((c for c in old if c.get("type") == "Available"), {})
    if {k: v for k, v in before.items() if k != "lastTransitionTime"} == condition:
        return
    condition["lastTransitionTime"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    conditions = [*(c for c in old if c.get("type") != "Available"), condition]
    changed = {**current, "status": {"conditions": conditions}}
    store.update(store.resources[APISERVICES], current, changed, sub="status")
