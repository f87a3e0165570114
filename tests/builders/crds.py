"""Where the CRDs the fake API server installs live (a module of its own: test modules
must not import ``conftest``, which names another directory's conftest in a mixed run)."""

from __future__ import annotations

from builders.paths import DEPLOY_BASE

CRD_DIR = DEPLOY_BASE / "crds"
