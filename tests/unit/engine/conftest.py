"""Make ``builders`` importable from the engine tests (rootdir import mode, no packages)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
