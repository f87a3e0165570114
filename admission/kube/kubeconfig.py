"""A user's kubeconfig read as kubectl reads it: the context (``--context``, else the
current one), its cluster's server URL and CA, and its user's client certificate or bearer
token (``token``, ``tokenFile``, exec and auth-provider plugins: kubernetes-asyncio's
loader does them all). ``kubectl berth`` needs this because kubectl passes a plugin no
credentials: the plugin reads the file itself."""

from __future__ import annotations

import os
from dataclasses import dataclass

from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config as k8s_config

DEFAULT_KUBECONFIG = "~/.kube/config"


@dataclass(frozen=True, slots=True)
class UserCredentials:
    """Where the API server is and how this user proves who they are to it."""

    server: str  # https://host:port, no trailing slash
    ca_file: str | None  # None: the system's trust store
    verify: bool  # False: insecure-skip-tls-verify
    cert_file: str | None
    key_file: str | None
    token: str | None  # the bearer token, without "Bearer "


def kubeconfig_path(kubeconfig: str | None) -> str:
    """kubectl's order: ``--kubeconfig``, else ``$KUBECONFIG`` (paths joined by ``:``,
    merged), else ``~/.kube/config``."""
    return kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser(DEFAULT_KUBECONFIG)


async def user_credentials(kubeconfig: str | None, context: str | None) -> UserCredentials:
    """The credentials of ``context`` (None: the current context) in ``kubeconfig``."""
    config = k8s.Configuration()
    await k8s_config.load_kube_config(
        config_file=kubeconfig_path(kubeconfig),
        context=context,
        client_configuration=config,
        persist_config=False,
    )
    bearer = str(config.api_key.get("BearerToken") or "")
    return UserCredentials(
        server=str(config.host).rstrip("/"),
        ca_file=config.ssl_ca_cert or None,
        verify=bool(config.verify_ssl),
        cert_file=config.cert_file or None,
        key_file=config.key_file or None,
        token=bearer.removeprefix("Bearer ") or None,
    )
