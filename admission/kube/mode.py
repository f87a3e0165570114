"""Whether ``berth serve`` runs in Kubernetes mode, decided without importing the client
(kubernetes_asyncio takes a good part of a second to import; standalone never needs it)."""

from __future__ import annotations

import os

IN_CLUSTER_ENV = "KUBERNETES_SERVICE_HOST"


def enabled(kubeconfig: str | None) -> bool:
    """Kubernetes mode: a kubeconfig was given, or Berth runs in a pod."""
    return bool(kubeconfig) or IN_CLUSTER_ENV in os.environ
