"""An in-process fake Kubernetes API server speaking the wire protocol Berth uses.

``server`` runs it (HTTP, or HTTPS with ``tls``); ``app`` dispatches a request after
``authn`` (static tokens, also behind TokenReview) and ``authz`` (``rbac``, also behind
SubjectAccessReview); ``aggregator`` proxies APIServices as the front proxy (its
certificates from ``builders.certs``) and ``discovery`` lists groups; ``proxy`` is ``services/proxy``; ``store`` keeps the objects,
with the rules of ``jobs``, ``jobsets``, ``pods``, ``schemas``, ``patches``, ``selectors``.
"""

from __future__ import annotations

from builders.fakeapi.server import FakeApiServer, FakeKubectl

__all__ = ["FakeApiServer", "FakeKubectl"]
