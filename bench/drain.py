"""Thin wrapper: the drain benchmark is ``berth bench drain`` (``berth.bench``); kept so
``python bench/drain.py [--scale F] [--database-url URL]`` still works."""

from __future__ import annotations

import sys

from berth.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "drain", *sys.argv[1:]]))
