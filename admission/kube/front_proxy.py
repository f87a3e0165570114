"""Who the aggregation layer says a request is from: the front-proxy (request-header)
authentication every aggregated API server does.

The API server proxies a request for an aggregated group over HTTPS with its front-proxy
client certificate, and names the user in headers (``X-Remote-User``, one per
``X-Remote-Group``, ``X-Remote-Extra-<key>``). The cluster publishes how to check that, in
the ConfigMap ``kube-system/extension-apiserver-authentication``: the CA that signs the
certificate, the common names allowed to use it (an empty list: any the CA signed), and the
header names. ``read_front_proxy`` reads it once at start; ``FrontProxy.identity`` is the
rule Kubernetes' request-header authenticator applies (``k8s.io/apiserver``
``authentication/request/headerrequest``): headers count only from a verified certificate
whose CN is allowed, and a request naming no user is not authenticated.

The certificate itself is checked by TLS (the listener trusts only this CA for client
certificates, ``berth.https``); what arrives here is the verified certificate's subject.
A CA the cluster rotates later is taken at the next start (Kubernetes' own servers watch
the ConfigMap).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from admission.kube.client import CONFIG_MAPS, Kube
from admission.kube.errors import KubernetesError
from quota.core.errors import NotFound

NAMESPACE = "kube-system"
NAME = "extension-apiserver-authentication"
CA_KEY = "requestheader-client-ca-file"
_WHERE = f"ConfigMap {NAMESPACE}/{NAME}"


@dataclass(frozen=True, slots=True)
class Identity:
    """A user as the front proxy names them: what a SubjectAccessReview asks about."""

    user: str
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    uid: str = ""


@dataclass(frozen=True, slots=True)
class FrontProxy:
    """The cluster's request-header authentication settings."""

    client_ca: str  # PEM: the CA that signs the front proxy's client certificate
    allowed_names: frozenset[str] = frozenset()  # empty: any common name the CA signed
    username_headers: tuple[str, ...] = ("X-Remote-User",)
    group_headers: tuple[str, ...] = ("X-Remote-Group",)
    extra_prefixes: tuple[str, ...] = ("X-Remote-Extra-",)
    uid_headers: tuple[str, ...] = ()

    def identity(
        self, common_name: str | None, headers: Sequence[tuple[str, str]]
    ) -> Identity | str:
        """The user a request is from, or why it is not authenticated. ``common_name``: of
        the client certificate TLS verified (None: none was presented); ``headers``: every
        header, repeated ones as often as they came."""
        if common_name is None:
            return "no client certificate signed by the front-proxy CA"
        if self.allowed_names and common_name not in self.allowed_names:
            allowed = ", ".join(sorted(self.allowed_names))
            return f"client certificate CN {common_name!r} is not an allowed name ({allowed})"
        user = _first(headers, self.username_headers)
        if not user:
            return f"no user named in {' or '.join(self.username_headers)}"
        groups = tuple(_all(headers, self.group_headers))
        extra: dict[str, list[str]] = {}
        for name, value in headers:
            for prefix in self.extra_prefixes:
                if name.lower().startswith(prefix.lower()) and len(name) > len(prefix):
                    # Kubernetes lowercases the key and undoes its percent-encoding.
                    extra.setdefault(unquote(name[len(prefix):]).lower(), []).append(value)
        return Identity(
            user=user,
            groups=groups,
            extra={key: tuple(values) for key, values in extra.items()},
            uid=_first(headers, self.uid_headers) or "",
        )


def _first(headers: Sequence[tuple[str, str]], names: Sequence[str]) -> str | None:
    found = _all(headers, names)
    return found[0] if found else None


def _all(headers: Sequence[tuple[str, str]], names: Sequence[str]) -> list[str]:
    """Values of the first of ``names`` the request carries (Kubernetes' order)."""
    for wanted in names:
        values = [v for n, v in headers if n.lower() == wanted.lower() and v]
        if values:
            return values
    return []


def parse_front_proxy(data: Mapping[str, object]) -> FrontProxy:
    """The ConfigMap's ``data``; ``KubernetesError`` naming the key that is missing or wrong."""
    ca = data.get(CA_KEY)
    if not isinstance(ca, str) or "BEGIN CERTIFICATE" not in ca:
        raise KubernetesError(
            f"{_WHERE}: {CA_KEY} holds no PEM certificate; the API server publishes it when "
            "it runs with --requestheader-client-ca-file (the aggregation layer needs it)"
        )
    defaults = FrontProxy(ca)
    return FrontProxy(
        client_ca=ca,
        allowed_names=frozenset(_names(data, "requestheader-allowed-names", ())),
        username_headers=_names(data, "requestheader-username-headers", defaults.username_headers),
        group_headers=_names(data, "requestheader-group-headers", defaults.group_headers),
        extra_prefixes=_names(data, "requestheader-extra-headers-prefix", defaults.extra_prefixes),
        uid_headers=_names(data, "requestheader-uid-headers", ()),
    )


def _names(data: Mapping[str, object], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """A key holding a JSON list of strings (Kubernetes writes them so)."""
    raw = data.get(key)
    if raw is None or raw == "":
        return default
    try:
        names = json.loads(str(raw))
    except ValueError:
        names = None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise KubernetesError(f"{_WHERE}: {key} must be a JSON list of strings, not {raw!r}")
    return tuple(names) if names or not default else default


async def read_front_proxy(kube: Kube) -> FrontProxy:
    """The cluster's front-proxy settings (RBAC: the extension-apiserver-authentication-reader
    Role in kube-system, deploy/base/visibility.yaml)."""
    try:
        config_map = await kube.get(CONFIG_MAPS, NAMESPACE, NAME)
    except NotFound as exc:
        raise KubernetesError(
            f"{_WHERE} does not exist: the API server publishes it when the aggregation layer "
            "is configured (--requestheader-client-ca-file); without it no aggregated API "
            "can be served: unset BERTH_AGGREGATED_API"
        ) from exc
    return parse_front_proxy(config_map.get("data") or {})
