"""Holding Python's cyclic garbage collector off around allocation-heavy work (PURE).

An admission cycle allocates hundreds of thousands of small values over a snapshot of
millions; each burst of allocations starts a full collection that walks the whole snapshot
again (it was half of a large cycle's time). Reference counting still frees what is
dropped; only cyclic garbage waits until the collector resumes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pausers = 0
_resume = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Collector off for the block. Nests, also across threads (the API's what-if runs
    beside the loop); the outermost exit restores it, and only if it was on before."""
    global _pausers, _resume
    with _lock:
        if _pausers == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pausers += 1
    try:
        yield
    finally:
        with _lock:
            _pausers -= 1
            if _pausers == 0 and _resume:
                gc.enable()
