"""The streaming client: where the streams go (``StreamTarget``) and one worker's client
(``StreamClient``: a connection kept open or opened ahead, one retry on a stale keep-alive),
over measure/connection.py's HTTP/1.1 transport and its hot path.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Coroutine
from typing import Any
from urllib.parse import urlsplit

import msgspec

from pytest_specperf.measure.connection import BufferedConnection, Connection, ConnectionDropped
from pytest_specperf.measure.sse import (
    RequestFailed,
    Response,
)
from pytest_specperf.results.schema import RequestRecord


class StreamTarget(msgspec.Struct, frozen=True):
    """Where the streams go: base URL (http or https, optional path prefix) and API key."""

    base_url: str
    api_key: str | None = None

    def address(self) -> tuple[str, int, bool, str]:
        """(host, port, tls, path prefix) of the base URL."""
        parts = urlsplit(self.base_url)
        tls = parts.scheme == "https"
        host = parts.hostname or "127.0.0.1"
        port = parts.port or (443 if tls else 80)
        return host, port, tls, parts.path.rstrip("/")

    def request_bytes(self, path: str, body: bytes) -> bytes:
        """The whole POST, built once per point and written as is for every request."""
        host, port, _tls, prefix = self.address()
        lines = [
            f"POST {prefix}{path} HTTP/1.1",
            f"Host: {host}:{port}",
            "Content-Type: application/json",
            "Accept: text/event-stream",
            f"Content-Length: {len(body)}",
        ]
        if self.api_key:
            lines.append(f"Authorization: Bearer {self.api_key}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class StreamClient:
    """One worker's client: sends a request, streams its answer into a RequestRecord.

    Against a server that closes the connection after each response (``Connection: close``,
    as the reference server firehose.py does), the next connection is opened while the
    current stream runs, so it is ready when the next request goes: 64 workers reconnecting
    at once put their connects into the TTFT of a round's requests
    (docs/explanation/load-generator.md).
    It is opened on the stream's second chunk, not its first: the first chunks of a round
    arrive together, and 64 connects among them would delay reading them. A keep-alive
    server (SGLang's) never needs it.
    """

    def __init__(
        self,
        target: StreamTarget,
        *,
        stall_timeout_s: float,
        connect_timeout_s: float,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.host, self.port, tls, _prefix = target.address()
        self.stall_timeout_s = stall_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.ssl_context = (ssl_context or ssl.create_default_context()) if tls else None
        self._connection: Connection | None = None
        self._spare: asyncio.Task[Connection] | None = None
        # Connects in a row the server refused (nothing listening: it died or restarts).
        self.refused_in_a_row = 0

    async def _connect(self) -> Connection:
        loop = asyncio.get_running_loop()
        kind = BufferedConnection if isinstance(loop, asyncio.BaseEventLoop) else Connection
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                _transport, connection = await loop.create_connection(
                    lambda: kind(self.stall_timeout_s),
                    self.host,
                    self.port,
                    ssl=self.ssl_context,
                    server_hostname=self.host if self.ssl_context else None,
                )
        except TimeoutError:
            raise RequestFailed("timeout") from None
        except ConnectionRefusedError:
            self.refused_in_a_row += 1
            raise RequestFailed("connection refused") from None
        except ssl.SSLError as exc:
            raise RequestFailed(f"TLS error ({exc.reason})") from None
        except OSError as exc:
            raise RequestFailed(f"connect failed ({type(exc).__name__})") from None
        self.refused_in_a_row = 0
        return connection

    def _open_spare(self) -> None:
        """Called on a stream's second chunk: open the next connection if this one will close."""
        connection = self._connection
        if self._spare is None and connection is not None and not connection.keeps_alive:
            self._spare = asyncio.get_running_loop().create_task(self._connect())
            self._spare.add_done_callback(_retrieve_exception)

    async def _take_spare(self) -> Connection | None:
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        try:
            connection = await spare
        except RequestFailed:
            return None
        return None if connection.closed else connection

    async def _ready_connection(self) -> tuple[Connection, bool]:
        """The connection for the next request, and whether it was open before it (an open
        connection the server has meanwhile dropped earns the request one retry)."""
        connection = self._connection
        if connection is not None and connection.reusable:
            return connection, True
        if connection is not None:
            connection._drop()  # closed by the server, or not to be reused: never leak it
        spare = await self._take_spare()
        if spare is not None:
            self._connection = spare
            return spare, True
        self._connection = await self._connect()
        return self._connection, False

    async def connect(self) -> bool:
        """Open the connection now, before a request needs it (an open loop keeps a few ready
        so a send is not held up by a connect); False if it cannot be opened."""
        try:
            await self._ready_connection()
        except RequestFailed:
            return False
        return True

    @property
    def ready(self) -> bool:
        """Whether a request can go at once, on this client's open, idle connection."""
        connection = self._connection
        return connection is not None and connection.reusable

    def send_now(self, request: bytes, completions: bool) -> Coroutine[Any, Any, RequestRecord]:
        """Write the request at once, without yielding to the event loop (the client must be
        ``ready``), and return the coroutine that streams its answer (as ``stream`` does).

        An open loop sends this way: a send due now goes now, not after the event loop's next
        pass over the other streams' reads, and requests due together go in one pass.
        """
        connection = self._connection
        if connection is None or not connection.reusable:
            raise RuntimeError("send_now on a client without an open, idle connection")
        record = RequestRecord(ok=False, start=0.0, end=0.0)
        connection.begin(request, Response(record, completions, self._open_spare))
        return self._stream(record, request, completions, begun=connection)

    async def stream(self, request: bytes, completions: bool) -> RequestRecord:
        """One request, start to end; never raises for anything the server does.

        ``start`` is when the request's bytes were sent (a failed connect: when it began).
        """
        record = RequestRecord(ok=False, start=time.monotonic(), end=0.0)
        return await self._stream(record, request, completions, begun=None)

    async def _stream(
        self,
        record: RequestRecord,
        request: bytes,
        completions: bool,
        begun: Connection | None,
    ) -> RequestRecord:
        try:
            for attempt in (0, 1):
                if attempt == 0 and begun is not None:
                    connection, was_open, exchange = begun, True, begun.wait()
                else:
                    connection, was_open = await self._ready_connection()
                    exchange = connection.exchange(
                        request, Response(record, completions, self._open_spare)
                    )
                try:
                    await exchange
                    break
                except ConnectionDropped:
                    self._connection = None
                    if not was_open or attempt == 1:
                        raise RequestFailed("connection broken (closed before answering)") from None
            record.ok = True
        except RequestFailed as exc:
            record.error = str(exc)
        except Exception as exc:  # anything else odd about one request must not end the point
            record.error = f"client error ({type(exc).__name__})"
            self.close()
        record.end = time.monotonic()
        return record

    def close(self) -> None:
        if self._connection is not None:
            self._connection._drop()
            self._connection = None
        spare, self._spare = self._spare, None
        if spare is not None:
            if spare.done() and not spare.cancelled() and spare.exception() is None:
                spare.result()._drop()
            else:
                spare.cancel()


def _retrieve_exception(task: asyncio.Task[Connection]) -> None:
    """A spare connection that failed is reported by the request that needed it, if any."""
    if not task.cancelled():
        task.exception()
