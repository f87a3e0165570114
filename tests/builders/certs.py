"""Certificate authorities and certificates made in the test (``cryptography``): a serving
certificate for the HTTPS listener (or the fake API server), and client certificates as
the front proxy holds."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Issued:
    """A certificate and its key, PEM, and written as ``<name>.crt``/``<name>.key``."""

    cert_pem: str
    key_pem: str
    cert_file: Path
    key_file: Path


class Authority:
    """A self-signed CA that issues certificates into ``folder``."""

    def __init__(self, name: str, folder: Path) -> None:
        self.folder = folder
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        self.cert = (
            _builder(self.name, self.name, self.key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False,
            ), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.pem = self.cert.public_bytes(serialization.Encoding.PEM).decode()
        self.file = folder / f"{name}-ca.crt"
        self.file.write_text(self.pem)

    def issue(self, file_name: str, common_name: str, *, server: bool = False,
              organization: str | None = None,
              hosts: tuple[str, ...] = ("localhost", "127.0.0.1")) -> Issued:  # fmt: skip
        """A leaf certificate: for serving ``hosts`` (DNS names or IP addresses), or for a
        client."""
        key = ec.generate_private_key(ec.SECP256R1())
        attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
        if organization:
            attributes.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
        builder = _builder(x509.Name(attributes), self.name, key.public_key())
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if server:
            names = [_alt_name(host) for host in hosts]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode()
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()  # fmt: skip
        cert_file, key_file = self.folder / f"{file_name}.crt", self.folder / f"{file_name}.key"
        cert_file.write_text(cert_pem)
        key_file.write_text(key_pem)
        return Issued(cert_pem, key_pem, cert_file, key_file)


def _alt_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _builder(subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePublicKey
             ) -> x509.CertificateBuilder:  # fmt: skip
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
    )


def client_context(server_ca: Authority, client: Issued | None = None) -> ssl.SSLContext:
    """A TLS client trusting ``server_ca``, presenting ``client`` (None: no certificate)."""
    context = ssl.create_default_context(cafile=str(server_ca.file))
    if client is not None:
        context.load_cert_chain(str(client.cert_file), str(client.key_file))
    return context
