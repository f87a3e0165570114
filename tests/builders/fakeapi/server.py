"""Run the fake apiserver on a free loopback port in a thread of its own; a small sync client."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from builders.certs import Authority
from builders.fakeapi import rbac
from builders.fakeapi.aggregator import FrontProxy
from builders.fakeapi.app import Options, create_app
from builders.fakeapi.authn import Tokens
from builders.fakeapi.patches import MERGE
from builders.fakeapi.store import Store


class FakeApiServer:
    """An in-process apiserver; ``url`` is the host kubernetes-asyncio uses. ``tokens``
    (token -> user name and groups) authenticate bearer tokens as a token auth file would;
    without them every request is the cluster admin. ``tls``: HTTPS with a certificate for
    127.0.0.1 signed by ``ca`` (kubectl sends a bearer token over HTTPS only), else HTTP."""

    def __init__(self, tokens: Tokens | None = None, *, tls: bool = False) -> None:
        self.store = Store()
        self.options = Options()
        self._dir = tempfile.TemporaryDirectory(prefix="fakeapi-pki-")
        self.front_proxy = FrontProxy(Path(self._dir.name))
        self.front_proxy.publish(self.store)
        rbac.bootstrap(self.store)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self.ca: Authority | None = None
        serving: dict[str, Any] = {}
        if tls:
            self.ca = Authority("kubernetes", Path(self._dir.name))
            cert = self.ca.issue("apiserver", "kube-apiserver", server=True)
            serving = {"ssl_certfile": str(cert.cert_file), "ssl_keyfile": str(cert.key_file)}
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_app(self.store, self.front_proxy, self.options, tokens),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
            **serving,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def start(self) -> FakeApiServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake apiserver did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._server.force_exit = True
        self._thread.join(timeout=5)
        self._socket.close()
        self._dir.cleanup()

    def client(self) -> FakeKubectl:
        return FakeKubectl(self.url, self.ca)

    def kubeconfig(self, path: Path, token: str | None = None) -> Path:
        """A kubeconfig at ``path`` whose current context is this server, as the user
        ``token`` authenticates (none: the admin)."""
        user = {"token": token} if token else {}
        cluster: dict[str, str] = {"server": self.url}
        if self.ca is not None:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca.pem.encode()).decode()
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": "fake",
                    "clusters": [{"name": "fake", "cluster": cluster}],
                    "users": [{"name": "me", "user": user}],
                    "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "me"}}],
                }
            )
        )
        return path


class FakeKubectl:
    """What a user (or the Job controller) does to the fake cluster, over its HTTP API."""

    def __init__(self, url: str, ca: Authority | None = None) -> None:
        verify = ssl.create_default_context(cadata=ca.pem) if ca else True
        self.http = httpx.Client(base_url=url, timeout=10, verify=verify)

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.request(method, path, **kwargs)

    def _ok(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 300:
            raise AssertionError(f"{response.status_code}: {response.text}")
        body: dict[str, Any] = response.json()
        return body

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._ok(self.http.post(path, json=body))

    def get(self, path: str) -> dict[str, Any]:
        return self._ok(self.http.get(path))

    def patch(self, path: str, body: Any, content_type: str = MERGE) -> dict[str, Any]:
        headers = {"Content-Type": content_type}
        return self._ok(self.http.patch(path, content=json.dumps(body), headers=headers))

    def delete(self, path: str) -> dict[str, Any]:
        return self._ok(self.http.delete(path))

    def compact(self) -> None:
        self._ok(self.http.post("/fake/compact"))

    def forbid(self, group: str, plural: str) -> None:
        """Refuse every request on ``group`` (``""``: core) ``plural`` with 403 from now on."""
        self._ok(self.http.post(f"/fake/forbid/{group or 'core'}/{plural}"))

    def namespace(self, name: str) -> dict[str, Any]:
        """Create the namespace ``name`` (namespaced objects need theirs to exist)."""
        return self.create("/api/v1/namespaces", {"metadata": {"name": name}})

    def serve(self, namespace: str, service: str, port: int, url: str) -> None:
        """Let ``url`` stand for the endpoints behind port ``port`` of the Service: its
        ``services/proxy`` subresource, and an APIService naming it (over HTTPS whatever
        the scheme), forward there from now on."""
        self._ok(self.http.post(f"/fake/endpoints/{namespace}/{service}/{port}", params={"url": url}))

    def end_watches(self) -> None:
        self._ok(self.http.post("/fake/end-watches"))

    def reviews(self) -> list[dict[str, Any]]:
        """Every SubjectAccessReview asked so far, as its caller sent it, in order."""
        found: list[dict[str, Any]] = self.http.get("/fake/reviews").json()
        return found

    def reads(self, plural: str) -> list[dict[str, Any]]:
        """Every list and watch request of ``plural`` so far, in order: ``verb`` (list or
        watch) and the ``resource_version`` it asked from."""
        found: list[dict[str, Any]] = self.http.get("/fake/reads").json()
        return [read for read in found if read["plural"] == plural]
