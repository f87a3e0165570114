"""Where the CRDs the fake API server installs live (a module of its own: test modules
must not import ``conftest``, which names another directory's conftest in a mixed run)."""

from __future__ import annotations

from pathlib import Path

CRD_DIR = Path(__file__).parents[2] / "deploy" / "crds"
