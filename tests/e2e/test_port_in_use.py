"""``berth serve`` on a port someone else holds (another user's Berth on a shared machine):
one ``error:`` line naming the port and how to choose another, for the server and for the
commands; exit status 2; no dashboard announced and no ledger created."""

from __future__ import annotations

import socket
from typing import Any

Berth = Any  # the `berth` fixture of conftest.py


def test_a_port_in_use_is_refused_at_start_with_the_fix(berth: Berth) -> None:
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", berth.port))
        holder.listen()
        done = berth.run("serve", "--port", str(berth.port), "--demo")
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert f"127.0.0.1:{berth.port}" in errors[0]
    assert "--port" in errors[0] and "BERTH_SERVER" in errors[0]
    assert "dashboard:" not in done.stderr and "Traceback" not in done.stderr
    assert not (berth.home / "pgdata").exists(), "the ledger was opened for a server that cannot listen"
