"""The informer against the fake apiserver: list, watch, bookmarks, 410 Gone recovery."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from builders.fakeapi import FakeKubectl
from builders.waiting import eventually

from admission.kube.client import NODES, Kube
from admission.kube.informer import Informer

NODE_PATH = "/api/v1/nodes"


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


class Seen:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.changed = asyncio.Event()

    async def __call__(self, kind: str, obj: dict[str, Any]) -> None:
        assert obj["kind"] == "Node" and obj["apiVersion"] == "v1"
        self.events.append((kind, obj["metadata"]["name"]))
        self.changed.set()

    async def until(self, *wanted: tuple[str, str]) -> None:
        async with asyncio.timeout(10):
            while not all(w in self.events for w in wanted):
                self.changed.clear()
                await self.changed.wait()


@contextlib.asynccontextmanager
async def running(informer: Informer) -> AsyncIterator[Informer]:
    task = asyncio.create_task(informer.run())
    try:
        async with asyncio.timeout(10):
            await informer.synced.wait()
        yield informer
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_lists_then_follows_changes(kube: Kube, kubectl: FakeKubectl) -> None:
    kubectl.create(NODE_PATH, node("a"))
    seen = Seen()
    async with running(Informer(kube, NODES, seen, timeout_seconds=1)):
        assert seen.events == [("ADDED", "a")]
        kubectl.create(NODE_PATH, node("b"))
        kubectl.delete(f"{NODE_PATH}/a")
        await seen.until(("ADDED", "b"), ("DELETED", "a"))


async def test_resumes_after_a_watch_timeout_without_listing_again(
    kube: Kube, kubectl: FakeKubectl
) -> None:
    seen = Seen()
    async with running(Informer(kube, NODES, seen, timeout_seconds=1)) as informer:
        listed = informer.resource_version
        await eventually(lambda: len(kubectl.reads("nodes")) == 2, what="the first watch")
        # A change to another kind moves the server's version on; the Node watch sees only
        # bookmarks carrying it, so a watch from that version can only come from a bookmark.
        moved = kubectl.create("/api/v1/namespaces", {"metadata": {"name": "elsewhere"}})
        bookmarked = moved["metadata"]["resourceVersion"]
        # The server ends each watch after timeoutSeconds=1: the informer must watch again,
        # from the bookmarked version, without listing again.
        await eventually(
            lambda: ("watch", bookmarked) in [
                (r["verb"], r["resource_version"]) for r in kubectl.reads("nodes")],
            what="a watch from the bookmarked version",
        )
        kubectl.create(NODE_PATH, node("late"))
        await seen.until(("ADDED", "late"))
    reads = kubectl.reads("nodes")
    assert [(r["verb"], r["resource_version"]) for r in reads[:2]] == [
        ("list", None), ("watch", listed)]
    assert [r["verb"] for r in reads[2:]] == ["watch"] * (len(reads) - 2)
    assert informer.lists == 1
    assert seen.events == [("ADDED", "late")]


async def test_recovers_from_410_gone_by_listing_again(kube: Kube, kubectl: FakeKubectl) -> None:
    kubectl.create(NODE_PATH, node("a"))
    kubectl.create(NODE_PATH, node("b"))
    seen = Seen()
    async with running(Informer(kube, NODES, seen, timeout_seconds=60)) as informer:
        # The informer has listed but not yet opened its watch (this test holds the event
        # loop): the changes and the compaction happen while it is away.
        kubectl.delete(f"{NODE_PATH}/a")
        kubectl.create(NODE_PATH, node("c"))
        kubectl.compact()
        await seen.until(("ADDED", "c"), ("DELETED", "a"))
        assert informer.lists == 2
        kubectl.create(NODE_PATH, node("d"))  # and it watches on from the new list
        await seen.until(("ADDED", "d"))
    # The watch from the compacted version was the one refused (410 Gone), then it listed.
    assert [r["verb"] for r in kubectl.reads("nodes")[:4]] == ["list", "watch", "list", "watch"]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("gpu", [("ADDED", "g")], id="only nodes with the label"),
        pytest.param("gpu notin (h100)", [("ADDED", "g"), ("ADDED", "plain")], id="notin"),
    ],
)
async def test_label_selector_is_passed_to_the_server(
    kube: Kube, kubectl: FakeKubectl, selector: str, expected: list[tuple[str, str]]
) -> None:
    kubectl.create(NODE_PATH, node("g", gpu="a100"))
    kubectl.create(NODE_PATH, node("plain"))
    seen = Seen()
    async with running(Informer(kube, NODES, seen, label_selector=selector, timeout_seconds=1)):
        assert sorted(seen.events) == sorted(expected)
