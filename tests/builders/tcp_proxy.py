"""A TCP proxy between Berth and PostgreSQL that a test can freeze: a silent partition.

Frozen, it stops moving bytes either way but keeps every connection open (no reset, no
FIN), as a network that drops packets does; thawed, it moves them again.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa


class FreezableProxy:
    """Listens on a loopback TCP port; ``target`` is (host, port) or a Unix socket path."""

    def __init__(self, target: tuple[str, int] | str) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._moving = threading.Event()
        self._moving.set()
        self._closed = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def freeze(self) -> None:
        self._moving.clear()

    def thaw(self) -> None:
        self._moving.set()

    def url_for(self, url: str) -> str:
        """``url`` with its host and port replaced by the proxy's."""
        parsed = sa.make_url(url)
        query = {k: v for k, v in parsed.query.items() if k != "host"}
        moved = parsed.set(host="127.0.0.1", port=self.port, query=query)
        return moved.render_as_string(hide_password=False)

    def close(self) -> None:
        self._closed.set()
        self._moving.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if isinstance(self.target, str):
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                server.connect(self.target)
            else:
                server = socket.create_connection(self.target)
            self._sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                thread = threading.Thread(target=self._pump, args=(a, b), daemon=True)
                thread.start()
                self._threads.append(thread)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        while not self._closed.is_set():
            self._moving.wait()
            try:
                ready, _, _ = select.select([source], [], [], 0.05)
                if not ready or not self._moving.is_set():
                    continue
                data = source.recv(65536)
                if not data:
                    sink.shutdown(socket.SHUT_WR)
                    return
                sink.sendall(data)
            except OSError:
                return


@contextlib.contextmanager
def proxied(url: str) -> Iterator[tuple[FreezableProxy, str]]:
    """A proxy in front of the server of ``url``; the URL to reach it through the proxy."""
    parsed = sa.make_url(url)
    socket_dir = parsed.query.get("host")
    if isinstance(socket_dir, str) and socket_dir.startswith("/"):  # the embedded server
        sockets = [p for p in Path(socket_dir).glob(".s.PGSQL.*") if p.suffix != ".lock"]
        target: tuple[str, int] | str = str(sockets[0])
    else:
        target = (parsed.host or "127.0.0.1", parsed.port or 5432)
    proxy = FreezableProxy(target)
    try:
        yield proxy, proxy.url_for(url)
    finally:
        proxy.close()
