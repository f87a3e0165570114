"""Acknowledged means durable: ``berth serve`` is SIGKILLed the instant a 2xx status line
arrives, for every kind of write, and every acknowledged write is found in the ledger.

A response that leaves before its transaction commits loses the write to such a kill (it
did: 3 of 10 submits). Each kind runs on a server of its own, all five side by side.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from builders.loop import Ledgered, pool
from builders.manifests import job
from builders.serve_process import ServeProcess

from quota.core.checkpoints import CHECKPOINT_LOCATION
from quota.ledger.nodes import node_state
from quota.ledger.repository import Ledger

ROUNDS = 20
NODE = (
    "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-1, labels: {gpu: h100}}\n"
    "status: {capacity: {nvidia.com/gpu: '8'}, allocatable: {nvidia.com/gpu: '8'}}\n"
)
# A cycle of allowed operator moves, so a node can be moved twenty times in a row.
MOVES = ["Cordoned", "Repairing", "Validating", "Healthy"]


@dataclass(frozen=True)
class Write:
    """One acknowledged write: the request, and how to find its effect in the ledger."""

    method: str
    path: str
    body: str
    content_type: str
    landed: Callable[[Ledgered], bool]


def _post_and_kill(server: ServeProcess, write: Write) -> int:
    """Send ``write``; the moment its status line arrives, SIGKILL the server if it is a 2xx."""
    request = (
        f"{write.method} {write.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: {write.content_type}\r\nContent-Length: {len(write.body.encode())}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + write.body.encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        sock.sendall(request)
        received = b""
        while b"\r\n" not in received:
            chunk = sock.recv(4096)
            assert chunk, f"no answer to {write.path}"
            received += chunk
        status = int(received.split(b" ", 2)[1])
        if 200 <= status < 300:
            server.kill()
    return status


def _workload_state(ledgered: Ledgered, name: str) -> str | None:
    with ledgered.sessions() as session:
        found = Ledger(session).get_workload("team-a", name)
        return None if found is None else str(found.state)


def _submits(i: int) -> Write:
    return Write(
        "POST", "/api/v1/workloads", json.dumps(job(f"sub-{i}", 1)), "application/json",
        lambda lg: _workload_state(lg, f"sub-{i}") is not None,
    )  # fmt: skip


def _applies(i: int) -> Write:
    body = f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {{name: f-{i}}}\n"

    def landed(lg: Ledgered) -> bool:
        with lg.sessions() as session:
            return Ledger(session).get("ResourceFlavor", f"f-{i}") is not None

    return Write("POST", "/api/v1/apply", body, "application/yaml", landed)


def _finishes(i: int) -> Write:
    return Write(
        "POST", f"/api/v1/workloads/team-a/fin-{i}/finish", "", "application/json",
        lambda lg: _workload_state(lg, f"fin-{i}") == "Finished",
    )  # fmt: skip


def _checkpoints(i: int) -> Write:
    location = f"s3://ckpt/run-{i}"

    def landed(lg: Ledgered) -> bool:
        with lg.sessions() as session:
            found = Ledger(session).get_workload("team-a", "ckpt")
            return found is not None and found.annotations.get(CHECKPOINT_LOCATION) == location

    body = json.dumps({"location": location})
    return Write(
        "POST", "/api/v1/workloads/team-a/ckpt/checkpointed", body, "application/json", landed
    )


def _node_moves(i: int) -> Write:
    target = MOVES[i % len(MOVES)]

    def landed(lg: Ledgered) -> bool:
        with lg.sessions() as session:
            state = node_state(session, "gpu-1")
            return state is not None and str(state.health) == target

    body = json.dumps({"state": target, "why": f"move {i}"})
    return Write("POST", "/api/v1/nodes/gpu-1/health", body, "application/json", landed)


KINDS: dict[str, Callable[[int], Write]] = {
    "submit": _submits,
    "apply": _applies,
    "finish": _finishes,
    "checkpointed": _checkpoints,
    "node move": _node_moves,
}


def _run_kind(ledgered: Ledgered, logs: Path, kind: str) -> list[str]:
    """Twenty kills at twenty acknowledgements of ``kind``; the writes not in the ledger."""
    lost = []
    for i in range(ROUNDS):
        server = ServeProcess(ledgered.url, logs / f"{kind.replace(' ', '-')}-{i}.log")
        try:
            server.start()
            write = KINDS[kind](i)
            status = _post_and_kill(server, write)
            assert 200 <= status < 300, f"{kind} {i}: answered {status}:\n{server.output()}"
            assert not server.alive()
            if not write.landed(ledgered):
                lost.append(f"{kind} {i}")
        finally:
            server.stop()
    return lost


@pytest.fixture
def world(ledgered: Ledgered) -> Ledgered:
    """A pool, the workloads the finishes and the checkpoint reports name, and a node."""
    ledgered.apply(pool(("team-a", 64)))
    ledgered.apply(NODE)
    for i in range(ROUNDS):
        ledgered.submit(job(f"fin-{i}", 1))
    ledgered.submit(job("ckpt", 1))
    return ledgered


def test_every_acknowledged_write_survives_a_sigkill_at_its_2xx(
    world: Ledgered, tmp_path: Path
) -> None:
    # Five servers side by side, one per kind, on the same ledger.
    with ThreadPoolExecutor(len(KINDS)) as pool_:
        lost = dict(zip(KINDS, pool_.map(lambda k: _run_kind(world, tmp_path, k), KINDS),
                        strict=True))
    assert lost == {kind: [] for kind in KINDS}
