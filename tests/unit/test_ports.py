"""The suite's loopback ports (builders.ports): threads asking at once never share one, and
none lies in the kernel's ephemeral range, where a client connection could take it."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from builders.ports import free_port

RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def test_threads_asking_at_once_get_distinct_ports_outside_the_ephemeral_range() -> None:
    with ThreadPoolExecutor(8) as pool:
        ports = list(pool.map(lambda _: free_port(), range(400)))
    assert len(set(ports)) == len(ports)
    if RANGE.exists():
        low, high = (int(v) for v in RANGE.read_text().split())
        assert not [p for p in ports if low <= p <= high]


def test_a_port_in_use_is_never_handed_out() -> None:
    first = free_port()
    with socket.socket() as held:
        held.bind(("127.0.0.1", first + 1))
        held.listen()
        taken = {free_port() for _ in range(50)}
    assert first + 1 not in taken
