"""An in-process fake Kubernetes API server speaking the wire protocol Berth uses."""

from __future__ import annotations

from builders.fakeapi.server import FakeApiServer, FakeKubectl

__all__ = ["FakeApiServer", "FakeKubectl"]
