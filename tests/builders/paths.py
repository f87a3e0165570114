"""Where the repository's folders are, for tests that read what ships beside the code."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
DEPLOY = REPO / "deploy"
DEPLOY_BASE = DEPLOY / "base"
SCENARIOS = REPO / "tests" / "scenarios"
