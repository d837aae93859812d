"""A raw HTTP/1.1 server on 127.0.0.1 for the load generator's tests: answers are given as bytes.

Each request is answered by a handler returning an Answer: the wire bytes in pieces (written
one at a time, so framing and SSE events arrive cut anywhere), then what the connection does.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal


@dataclass
class Seen:
    """One request as the server read it."""

    path: str
    headers: dict[str, str]
    body: bytes
    connection: int

    def json(self) -> dict[str, object]:
        loaded = json.loads(self.body)
        assert isinstance(loaded, dict)
        return loaded


@dataclass
class Answer:
    pieces: list[bytes]
    pause_s: float = 0.0
    # keep: wait for the next request; close: FIN; reset: RST; hang: send nothing more.
    then: Literal["keep", "close", "reset", "hang"] = "keep"


Handler = Callable[[Seen], Answer | Awaitable[Answer]]


def cut(data: bytes, size: int) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)] or [b""]


def chunked(*parts: bytes) -> bytes:
    """An HTTP/1.1 chunked body with one chunk per part, then the last-chunk."""
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts if part) + b"0\r\n\r\n"


def response(
    body: bytes,
    *,
    status: int = 200,
    content_type: str = "text/event-stream; charset=utf-8",
    framing: Literal["chunked", "length", "close"] = "chunked",
    http_chunk: int = 0,
    piece: int = 7,
    extra_headers: str = "",
) -> list[bytes]:
    """A whole response as wire pieces of ``piece`` bytes.

    http_chunk: the body's HTTP chunk size in chunked framing (0: the whole body as one chunk
    per SSE event, the way SGLang writes them).
    """
    head = f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n{extra_headers}"
    if framing == "chunked":
        head += "Transfer-Encoding: chunked\r\n"
        if http_chunk:
            wire_body = chunked(*cut(body, http_chunk))
        else:
            events = [event + b"\n\n" for event in body.split(b"\n\n") if event]
            wire_body = chunked(*events)
    elif framing == "length":
        head += f"Content-Length: {len(body)}\r\n"
        wire_body = body
    else:
        head += "Connection: close\r\n"
        wire_body = body
    return cut(head.encode() + b"\r\n" + wire_body, piece)


class LocalServer:
    """``async with LocalServer(handler) as server:`` then ``server.url``."""

    def __init__(self, handler: Handler, idle_timeout_s: float | None = None) -> None:
        self.handler = handler
        # Close a connection that carries no request for this long, as uvicorn closes an idle
        # keep-alive connection (SGLang: SGLANG_TIMEOUT_KEEP_ALIVE, 5 s by default).
        self.idle_timeout_s = idle_timeout_s
        self.idle_closed = 0
        self.connections = 0
        self.seen: list[Seen] = []
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aenter__(self) -> LocalServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        index = self.connections
        try:
            while True:
                try:
                    head = await asyncio.wait_for(
                        reader.readuntil(b"\r\n\r\n"), self.idle_timeout_s
                    )
                except TimeoutError:
                    self.idle_closed += 1
                    break
                request_line, *lines = head.decode("latin-1").split("\r\n")
                headers = {}
                for line in lines:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                seen = Seen(request_line.split(" ")[1], headers, body, index)
                self.seen.append(seen)
                answer = self.handler(seen)
                if not isinstance(answer, Answer):
                    answer = await answer
                for piece in answer.pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(answer.pause_s)
                if answer.then == "hang":
                    await asyncio.sleep(3600)
                if answer.then == "reset":
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return
                if answer.then == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        writer.close()
