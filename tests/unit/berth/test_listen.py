"""The API's listening socket, bound by ``berth serve`` before uvicorn starts: connections
accepted on it are TCP sockets with Nagle off, as uvicorn's own would be. Without that every
keep-alive request after the first waited ~40 ms for the client's delayed ACK."""

from __future__ import annotations

import asyncio
import socket

from berth.serve import listen


async def test_connections_accepted_on_the_listener_have_nagle_off() -> None:
    host = "127.0.0.1"
    listener = listen(host, 0)
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Record(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            sock = transport.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    server = await asyncio.get_running_loop().create_server(Record, sock=listener)
    try:
        port = listener.getsockname()[1]
        _, writer = await asyncio.open_connection(host, port)
        assert await asyncio.wait_for(accepted, 10) != 0, "TCP_NODELAY is off"
        writer.close()
    finally:
        server.close()
        await server.wait_closed()
