"""Steady HTTP load on a running ``berth serve``, from a thread, through whatever outage."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

import httpx

from builders.manifests import job
from builders.serve_process import ServeProcess


@dataclass
class Load:
    """Submits workloads (and finishes some) over HTTP at a steady pace, from a thread,
    until halted: it runs before, through and after the outage, however long each lasts."""

    server: ServeProcess
    submitted: set[str] = field(default_factory=set)  # answered 201: must never be lost
    refused: list[int | None] = field(default_factory=list)  # statuses of the others
    halt: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with httpx.Client(base_url=str(self.server.client.base_url), timeout=5) as client:
            for i in itertools.count(1):
                if self.halt.is_set():
                    return
                team = "team-a" if i % 2 else "team-b"
                doc = job(f"w-{i}", 1 + i % 2, namespace=team)
                status = _status(client, "/api/v1/workloads", json=doc)
                if status == 201:
                    self.submitted.add(f"{team}/w-{i}")
                else:
                    self.refused.append(status)
                if i % 3 == 0 and f"{team}/w-{i - 2}" in self.submitted:
                    _status(client, f"/api/v1/workloads/{team}/w-{i - 2}/finish")
                self.halt.wait(0.1)  # the pace of the load, not a wait for anything


def _status(client: httpx.Client, path: str, **kwargs: Any) -> int | None:
    try:
        return client.post(path, **kwargs).status_code
    except httpx.HTTPError:
        return None
