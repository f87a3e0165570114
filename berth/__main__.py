"""``python -m berth``."""

from __future__ import annotations

import sys

from berth.cli.main import main

sys.exit(main())
