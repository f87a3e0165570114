"""Berth's HTTPS listener: the mutating webhook and, with ``BERTH_AGGREGATED_API``, Kueue's
visibility API for the aggregation layer (``api.aggregated``).

The aggregated API authenticates the front proxy by its client certificate, which uvicorn
neither asks for nor hands to the app. Two small pieces do it here:

- ``HttpsConfig`` trusts the front-proxy CA for client certificates and asks for one
  without requiring it (``CERT_OPTIONAL``): the API server calls the webhook with none, and
  a certificate that does not verify ends the handshake before any request is read.
- ``ClientCertProtocol`` (uvicorn's h11 protocol) puts the verified peer certificate into
  every request's scope as the ASGI TLS extension (``scope["extensions"]["tls"]``:
  ``client_cert_chain`` in PEM, ``client_cert_name`` in RFC 4514). The Python 3.11 ssl
  module gives the leaf only, so the chain is that one certificate.
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from berth.settings import SettingsError, WebhookSettings

# RFC 4514's short names; any other attribute keeps the name Python's ssl gives it.
_SHORT = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
          "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
          "streetAddress": "STREET", "domainComponent": "DC", "userId": "UID"}  # fmt: skip
_TLS_VERSIONS = {"TLSv1.2": 0x0303, "TLSv1.3": 0x0304}


def check_certificates(webhook: WebhookSettings) -> Path | None:
    """The webhook's certificate folder, refused at start if a file is missing."""
    certs = webhook.cert_dir
    if certs is None:
        return None
    for name in ("tls.crt", "tls.key"):
        if not (certs / name).is_file():
            raise SettingsError(
                f"BERTH_WEBHOOK_CERT_DIR (or --webhook-cert-dir): the webhook certificate "
                f"{certs / name} does not exist",
                field="BERTH_WEBHOOK_CERT_DIR",
            )
    return certs


class HttpsConfig(uvicorn.Config):
    """uvicorn's configuration of the HTTPS listener; ``client_ca`` (PEM): ask for client
    certificates and trust those this CA signed, serving callers without one too."""

    def __init__(self, app: Any, *, certs: Path, client_ca: str | None = None,
                 **options: Any) -> None:  # fmt: skip
        super().__init__(
            app,
            ssl_certfile=str(certs / "tls.crt"),
            ssl_keyfile=str(certs / "tls.key"),
            http=ClientCertProtocol,
            **options,
        )
        self.client_ca = client_ca

    def load(self) -> None:
        super().load()
        if self.client_ca is not None and self.ssl is not None:
            self.ssl.load_verify_locations(cadata=self.client_ca)
            self.ssl.verify_mode = ssl.CERT_OPTIONAL


class ClientCertProtocol(H11Protocol):
    """uvicorn's h11 protocol, with the connection's TLS facts in each request's scope."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        tls = tls_extension(transport)
        if tls is None:
            return
        app = self.app

        async def with_tls(scope: Any, receive: Any, send: Any) -> None:
            scope.setdefault("extensions", {})["tls"] = tls
            await app(scope, receive, send)

        self.app = with_tls


def tls_extension(transport: asyncio.BaseTransport) -> dict[str, Any] | None:
    """The ASGI TLS extension of a connection (None: not TLS)."""
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    verified = ssl_object.getpeercert() or {}
    return {
        "server_cert": None,
        "client_cert_chain": [ssl.DER_cert_to_PEM_cert(der)] if der else [],
        "client_cert_name": rfc4514(verified["subject"]) if der and "subject" in verified else None,
        "client_cert_error": None,  # a certificate that does not verify ends the handshake
        "tls_version": _TLS_VERSIONS.get(ssl_object.version() or ""),
        "cipher_suite": None,  # Python's ssl does not give the IANA number
    }


def rfc4514(subject: tuple[tuple[tuple[str, str], ...], ...]) -> str:
    """A subject as Python's ssl gives it (RDNs in certificate order), as an RFC 4514 string
    (most specific RDN first)."""
    rdns = ["+".join(f"{_SHORT.get(k, k)}={_escape(v)}" for k, v in rdn) for rdn in subject]
    return ",".join(reversed(rdns))


def _escape(value: str) -> str:
    escaped = "".join(f"\\{c}" if c in ',+"\\<>;=' else c for c in value)
    if escaped[:1] in ("#", " "):
        escaped = "\\" + escaped
    if escaped.endswith(" ") and not escaped.endswith("\\ "):
        escaped = escaped[:-1] + "\\ "
    return escaped
