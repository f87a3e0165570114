"""Thin wrapper: the engine micro-benchmark lives in ``berth.bench.engine``
(``berth bench engine``); kept so ``python bench/engine.py`` still works."""

from __future__ import annotations

import sys

from berth.bench.engine import main

if __name__ == "__main__":
    sys.exit(main())
