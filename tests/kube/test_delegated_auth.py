"""The aggregated API's Kubernetes side: the front-proxy settings read from
kube-system/extension-apiserver-authentication, who a request is from (Kubernetes'
request-header rules), and the SubjectAccessReview Berth sends to ask whether they may read
a queue's pending workloads, through Berth's real kubernetes-asyncio client.

The client-side tests talk to a recording HTTP endpoint: what they check is the request
the real client sends and how its answer is read, whatever it is (the fake API server's
own answers are tested in tests/kube/test_serve_aggregated.py, end to end)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from builders.served import running
from fastapi import FastAPI, Request

from admission.kube.access_review import (
    Decision,
    ResourceAttributes,
    SubjectAccessReviewer,
    review_body,
)
from admission.kube.client import Kube
from admission.kube.errors import KubernetesError
from admission.kube.front_proxy import FrontProxy, Identity, parse_front_proxy, read_front_proxy
from admission.kube.runtime import api_client
from berth.serve import kube_settings
from berth.settings import Settings

CA = "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n"
GROUP = "visibility.kueue.x-k8s.io"
# What kube-apiserver publishes when run with the front-proxy flags.
CONFIG_MAP_DATA = {
    "client-ca-file": CA,
    "requestheader-client-ca-file": CA,
    "requestheader-allowed-names": '["front-proxy-client"]',
    "requestheader-username-headers": '["X-Remote-User"]',
    "requestheader-group-headers": '["X-Remote-Group"]',
    "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
}


def test_the_config_map_gives_the_ca_the_names_and_the_headers() -> None:
    assert parse_front_proxy(CONFIG_MAP_DATA) == FrontProxy(
        client_ca=CA, allowed_names=frozenset({"front-proxy-client"}),
        username_headers=("X-Remote-User",), group_headers=("X-Remote-Group",),
        extra_prefixes=("X-Remote-Extra-",),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("change", "named"),
    [
        pytest.param({"requestheader-client-ca-file": None}, "requestheader-client-ca-file",
                     id="no front-proxy CA (the aggregation layer is not configured)"),
        pytest.param({"requestheader-allowed-names": "front-proxy-client"},
                     "requestheader-allowed-names", id="allowed names not a JSON list"),
        pytest.param({"requestheader-group-headers": '[1]'}, "requestheader-group-headers",
                     id="a header name not a string"),
    ],
)
def test_a_config_map_berth_cannot_use_is_refused_naming_the_key(
    change: dict[str, str | None], named: str
) -> None:
    data = {k: v for k, v in {**CONFIG_MAP_DATA, **change}.items() if v is not None}
    with pytest.raises(KubernetesError) as refused:
        parse_front_proxy(data)
    assert "ConfigMap kube-system/extension-apiserver-authentication" in str(refused.value)
    assert named in str(refused.value)


def test_an_empty_allowed_names_list_accepts_any_cn_the_ca_signed() -> None:
    proxy = parse_front_proxy({**CONFIG_MAP_DATA, "requestheader-allowed-names": "[]"})
    assert proxy.identity("anyone", [("X-Remote-User", "alice")]) == Identity("alice")


HEADERS = [("x-remote-user", "alice"), ("x-remote-group", "team-a"),
           ("x-remote-group", "system:authenticated"), ("x-remote-extra-scopes", "view"),
           ("x-remote-extra-acme.com%2Fproject", "p1"), ("x-remote-extra-scopes", "edit")]  # fmt: skip


@pytest.mark.parametrize(
    ("common_name", "headers", "found"),
    [
        pytest.param("front-proxy-client", HEADERS,
                     Identity("alice", ("team-a", "system:authenticated"),
                              {"scopes": ("view", "edit"), "acme.com/project": ("p1",)}),
                     id="user, every group, extras with their keys unescaped"),
        pytest.param(None, HEADERS, "no client certificate signed by the front-proxy CA",
                     id="headers without a certificate are not read"),
        pytest.param("system:node:n1", HEADERS, "CN 'system:node:n1' is not an allowed name",
                     id="a CN the cluster did not allow"),
        pytest.param("front-proxy-client", [("x-remote-group", "g")], "no user named in X-Remote-User",
                     id="no user"),
        pytest.param("front-proxy-client", [("x-remote-user", "")], "no user named in X-Remote-User",
                     id="an empty user"),
    ],
)
def test_who_a_request_is_from(common_name: str | None, headers: list[tuple[str, str]],
                               found: Identity | str) -> None:  # fmt: skip
    proxy = parse_front_proxy(CONFIG_MAP_DATA)
    got = proxy.identity(common_name, headers)
    if isinstance(found, str):
        assert isinstance(got, str) and found in got
    else:
        assert got == found


@pytest.mark.parametrize(
    ("identity", "attributes", "spec"),
    [
        pytest.param(
            Identity("alice", ("team-a", "system:authenticated")),
            ResourceAttributes(GROUP, "v1beta2", "clusterqueues", "pendingworkloads", "gpu-pool"),
            {"user": "alice", "groups": ["team-a", "system:authenticated"],
             "resourceAttributes": {"group": GROUP, "version": "v1beta2", "resource": "clusterqueues",
                                    "subresource": "pendingworkloads", "name": "gpu-pool", "verb": "get"}},
            id="a ClusterQueue's pending workloads, at the cluster scope",
        ),
        pytest.param(
            Identity("bob", (), {"scopes": ("view",)}, uid="u-42"),
            ResourceAttributes(GROUP, "v1beta1", "localqueues", "pendingworkloads", "main", "team-b"),
            {"user": "bob", "groups": [], "extra": {"scopes": ["view"]}, "uid": "u-42",
             "resourceAttributes": {"group": GROUP, "version": "v1beta1", "resource": "localqueues",
                                    "subresource": "pendingworkloads", "name": "main",
                                    "namespace": "team-b", "verb": "get"}},
            id="a LocalQueue's, in its namespace, with the user's extras and uid",
        ),
    ],
)
def test_the_subject_access_review_asks_what_kueues_server_asks(
    identity: Identity, attributes: ResourceAttributes, spec: dict[str, Any]
) -> None:
    assert review_body(identity, attributes) == {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec,
    }


class Recorder:
    """A stand-in API server answering the two calls with canned bodies, keeping requests."""

    def __init__(self, allowed: bool) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.app = FastAPI()

        @self.app.post("/apis/authorization.k8s.io/v1/subjectaccessreviews")
        async def review(request: Request) -> dict[str, Any]:
            body = json.loads(await request.body())
            self.requests.append((request.method, request.url.path, body))
            status = {"allowed": allowed, **({} if allowed else {"reason": "no RBAC rule"})}
            return {**body, "status": status}

        @self.app.get("/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication")
        async def config_map(request: Request) -> dict[str, Any]:
            self.requests.append((request.method, request.url.path, None))
            return {"apiVersion": "v1", "kind": "ConfigMap", "data": CONFIG_MAP_DATA,
                    "metadata": {"name": "extension-apiserver-authentication",
                                 "namespace": "kube-system"}}  # fmt: skip


@pytest.fixture
def recorded(request: pytest.FixtureRequest) -> Iterator[tuple[Recorder, str]]:
    recorder = Recorder(allowed=getattr(request, "param", True))
    with running(recorder.app) as base:
        yield recorder, base


async def _kube(base: str) -> Kube:
    return Kube(await api_client(kube_settings(Settings(), host=base)))


@pytest.mark.parametrize(("recorded", "decision"), [
    pytest.param(True, Decision(True), id="allowed"),
    pytest.param(False, Decision(False, "no RBAC rule"), id="denied, with the authorizer's reason"),
], indirect=["recorded"])  # fmt: skip
async def test_the_reviewer_posts_the_review_and_reads_its_status(
    recorded: tuple[Recorder, str], decision: Decision
) -> None:
    recorder, base = recorded
    kube = await _kube(base)
    identity = Identity("alice", ("team-a",))
    attributes = ResourceAttributes(GROUP, "v1beta2", "clusterqueues", "pendingworkloads", "cq")
    try:
        assert await SubjectAccessReviewer(kube)(identity, attributes) == decision
    finally:
        await kube.close()
    (method, path, body), = recorder.requests
    assert (method, path) == ("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews")
    assert body == review_body(identity, attributes)


async def test_the_front_proxy_settings_are_read_from_kube_system(
    recorded: tuple[Recorder, str],
) -> None:
    recorder, base = recorded
    kube = await _kube(base)
    try:
        assert await read_front_proxy(kube) == parse_front_proxy(CONFIG_MAP_DATA)
    finally:
        await kube.close()
    assert recorder.requests == [
        ("GET", "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", None)
    ]
