"""Loopback ports for the servers tests start, one owner for the whole suite.

``bind(("127.0.0.1", 0))`` then close hands out a port from the kernel's ephemeral range,
which two threads can both be given, and which any client connection may take as its source
port before the server binds it. Then a server refuses to start (the port is in use), and
a readiness poll on that port is answered by another test's server, which that test then
kills mid-request. So ports come from below the ephemeral range, where no client
connection lands, and none is handed out twice in one process. Each process starts at its
own offset, so concurrent pytest processes rarely probe the same ports first.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

_LOWEST = 10000
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_lock = threading.Lock()
_given: set[int] = set()


def _ephemeral_start() -> int:
    try:
        return int(_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    """A loopback port nothing listens on, outside the ephemeral range, new to this process."""
    highest = _ephemeral_start() - 1
    span = highest - _LOWEST
    if span < 1000:  # an unusual ephemeral range: fall back to the kernel's choice
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])
    first = (os.getpid() * 7919) % span
    with _lock:
        for step in range(span):
            port = _LOWEST + (first + step) % span
            if port not in _given and _bindable(port):
                _given.add(port)
                return port
    raise RuntimeError(f"no free loopback port in {_LOWEST}-{highest}")
