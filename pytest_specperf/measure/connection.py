"""The streaming transport: one HTTP/1.1 connection per worker on an asyncio.Protocol.

The hot path is per received segment: take the arrival time once, de-chunk, cut SSE events,
and for every /generate event read only ``completion_tokens`` and whether ``finish_reason`` is
null, with two anchored regex matches found by ``rfind`` from the end (meta_info is last in
SGLang's chunks, after the cumulative text). A key with its closing quote cannot occur inside
a JSON string (a quote there is escaped), so the match is the key itself. Any event the fast
path does not recognise -- the final chunk, an error, a wrong type, broken JSON -- is decoded
in full with msgspec into measure/fields.py's StreamChunk, so every failure category of the
full decode stays; the fast path reads two of GenerateMeta's fields, by the same names. OpenAI
``/v1/completions`` events are small delta chunks and are always decoded in full.

Why not httpx or aiohttp for the stream: measured side by side
(docs/explanation/load-generator.md), their per-segment machinery (httpcore's h11 state machine and
async iterators; aiohttp's StreamReader and per-line parsing) cost several times the CPU per
token of this parser. httpx stays for the control plane (server_info, health).
"""

from __future__ import annotations

import asyncio
import time
from typing import cast

from pytest_specperf.measure.sse import (
    DATA_PREFIX,
    FINISH_KEY,
    FINISH_KEY_LEN,
    TOKENS_KEY,
    TOKENS_KEY_LEN,
    RequestFailed,
    Response,
)

_monotonic = time.monotonic  # once per received segment: no attribute lookup

_EVENT_END = b"\n\n"
_HEAD_END = b"\r\n\r\n"
_CRLF = b"\r\n"
_READ_BUFFER_BYTES = 64 * 1024


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection carrying one streaming response at a time.

    Body framing: chunked, Content-Length, or until close. Anything unexpected fails the
    request in flight and the connection is dropped, never reused.
    """

    def __init__(self, stall_timeout_s: float) -> None:
        self.stall_timeout_s = stall_timeout_s
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reusable = False
        self._loop = asyncio.get_running_loop()
        self._response: Response | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._stall_timer: asyncio.TimerHandle | None = None
        self._received_any = False
        self._last_arrival = 0.0
        self._head = bytearray()
        self._in_body = False
        self._chunked = False
        self._whole_events_first = False  # a chunked /generate body: try _whole_events
        self._remaining = -1  # Content-Length bytes left; -1: chunked or until close
        self._keep_alive = True
        self._raw = bytearray()  # chunked framing not yet decoded
        self._chunk_left = 0  # payload bytes left in the current HTTP chunk
        self._events = bytearray()  # SSE bytes not yet cut into events

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.reusable = True  # open and idle: ready for its first request

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.reusable = False
        if self._response is None:
            return
        if not self._received_any:
            self._fail(ConnectionDropped())
        elif self._in_body and self._remaining == -1 and not self._chunked:
            self._finish()  # a body delimited by the close
        elif exc is not None:
            self._fail(RequestFailed(f"connection broken (reset: {type(exc).__name__})"))
        else:
            self._fail(RequestFailed("connection broken (closed mid-response)"))

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost reports

    def data_received(self, data: bytes) -> None:
        now = _monotonic()
        self._last_arrival = now
        self._received_any = True
        if self._response is None:
            self._drop()  # bytes nobody asked for: never reuse this connection
            return
        try:
            if self._whole_events_first and self._chunk_left == 0 and not self._raw:
                at = self._whole_events(data, now, 0)
                if at < len(data):
                    self._chunked_data(data, now, at)
                return
            if not self._in_body:
                if not self._head:
                    data = data.lstrip(_CRLF)  # the last CRLF of the previous chunked body
                self._head += data
                end = self._head.find(_HEAD_END)
                if end < 0:
                    return
                data = bytes(self._head[end + 4 :])
                self._start_body(bytes(self._head[:end]))
                if not data:
                    if self._remaining == 0:
                        self._finish()
                    return
            if self._chunked:
                self._chunked_data(data, now)
            else:
                self._plain_data(data, now)
        except RequestFailed as exc:
            self._fail(exc)

    def _whole_events(self, data: bytes, now: float, at: int) -> int:
        """The hot path: the HTTP chunks from ``at`` in ``data`` that are each one whole
        SSE event of a non-final /generate chunk, read in place (no copies, one call each);
        returns where it stopped. Anything else (a cut chunk, the final chunk, several events
        in a chunk, an error) is left to the general path from that offset, which reads the
        same bytes the same way or decodes them in full."""
        response = self._response
        assert response is not None
        if self._events:
            return at
        size = len(data)
        while at < size:
            line_end = data.find(b"\r", at, at + 10)
            if line_end < 0:
                break
            try:
                start = line_end + 2
                end = start + int(data[at:line_end], 16)
            except ValueError:
                break
            if (
                end <= start
                or end + 2 > size
                or data[end - 3 : end + 2] != b"}\n\n\r\n"
                or not data.startswith(DATA_PREFIX, start)
                or data.find(b"\n", start, end - 2) >= 0
            ):
                break
            # The count: digits up to the next comma ("completion_tokens" is never meta_info's
            # last key in SGLang's chunks, nor in the reference servers'); finish_reason null.
            key = data.rfind(TOKENS_KEY, start, end)
            finish = data.rfind(FINISH_KEY, start, end)
            if key < 0 or finish < 0:
                break
            digits = key + TOKENS_KEY_LEN
            comma = data.find(b",", digits, digits + 24)
            value = finish + FINISH_KEY_LEN
            if comma < 0 or not (
                data.startswith(b"null", value) or data.startswith(b" null", value)
            ):
                break
            try:
                total = int(data[digits:comma])
            except ValueError:
                break
            new_tokens = total - response.last_tokens
            if new_tokens > 0:
                record = response.record
                if record.first_chunk is None:
                    record.first_chunk = now
                record.chunk_times.append(now)
                record.chunk_tokens.append(new_tokens)
                response.last_tokens = total
                record.completion_tokens = total
                if len(record.chunk_times) == 2 and response.on_second_chunk is not None:
                    response.on_second_chunk()
            else:
                response.tokens(total, now)
            at = end + 2
        return at

    @property
    def keeps_alive(self) -> bool:
        """False once the response in flight said the server will close the connection."""
        return self._keep_alive

    # one request

    async def exchange(self, request: bytes, response: Response) -> None:
        """Send one request and wait until its stream ended; raises RequestFailed."""
        self.begin(request, response)
        await self.wait()

    def begin(self, request: bytes, response: Response) -> None:
        """Write one request now, without yielding to the event loop; ``wait`` for its end.

        The request's clock (``record.start``) starts here, as its bytes go to the socket:
        connection set-up before it is the client's business, not the server's latency.
        """
        assert self.transport is not None
        self._response = response
        self._waiter = self._loop.create_future()
        self._received_any = False
        self._head.clear()
        self._in_body = False
        self._chunked = False
        self._whole_events_first = False
        self._remaining = -1
        self._keep_alive = True
        self._raw.clear()
        self._chunk_left = 0
        self._events.clear()
        self.reusable = False
        self._last_arrival = response.record.start = time.monotonic()
        self._stall_timer = self._loop.call_at(
            self._last_arrival + self.stall_timeout_s, self._check_stall
        )
        self.transport.write(request)

    async def wait(self) -> None:
        """Until the stream ``begin`` started has ended; raises RequestFailed."""
        assert self._waiter is not None and self._stall_timer is not None
        try:
            await self._waiter
        finally:
            self._stall_timer.cancel()
            if not self._waiter.done():  # cancelled (request timeout): the stream is abandoned
                self._drop()
            self._response = None
            self._waiter = None

    def _check_stall(self) -> None:
        due = self._last_arrival + self.stall_timeout_s
        if time.monotonic() >= due - 1e-3:  # uvloop's clock ticks in ms
            self._fail(RequestFailed("stalled stream (read timeout)"))
        else:
            self._stall_timer = self._loop.call_at(due, self._check_stall)

    def _start_body(self, head: bytes) -> None:
        lines = head.split(_CRLF)
        status_line = lines[0].split(b" ", 2)
        if len(status_line) < 2 or not status_line[0].startswith(b"HTTP/1."):
            raise RequestFailed("connection broken (not an HTTP/1.1 response)")
        status = int(status_line[1]) if status_line[1].isdigit() else 0
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        if status != 200:
            raise RequestFailed(f"HTTP {status}")
        content_type = headers.get(b"content-type", b"").decode("latin-1")
        if "text/event-stream" not in content_type:
            raise RequestFailed(f"wrong content type {content_type.split(';')[0] or 'none'}")
        self._in_body = True
        self._keep_alive = headers.get(b"connection", b"").lower() != b"close"
        if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
            self._chunked = True
            assert self._response is not None
            self._whole_events_first = not self._response.completions
        elif b"content-length" in headers:
            self._remaining = int(headers[b"content-length"])
        else:
            self._keep_alive = False

    def _plain_data(self, data: bytes, now: float) -> None:
        if self._remaining >= 0:
            data = data[: self._remaining]
            self._remaining -= len(data)
        self._sse(data, now)
        if self._remaining == 0:
            self._finish()

    def _chunked_data(self, data: bytes, now: float, at: int = 0) -> None:
        if self._raw:  # a size line or CRLF cut by the previous segment
            self._raw += data[at:]
            data = bytes(self._raw)
            self._raw.clear()
            at = 0
        size = len(data)
        whole_events = self._whole_events_first
        while at < size:
            left = self._chunk_left
            if left > 0:  # inside a chunk's payload
                end = at + left
                if end <= size:
                    self._sse(data[at:end], now)
                    self._chunk_left = -2  # the CRLF after the payload comes next
                else:
                    self._sse(data[at:], now)
                    self._chunk_left = end - size
                at = min(end, size)
                continue
            if left == -2:
                if size - at < 2:
                    break
                at += 2
                self._chunk_left = 0
                continue
            if whole_events:
                at = self._whole_events(data, now, at)
                if at >= size:
                    break
            line_end = data.find(_CRLF, at)
            if line_end < 0:
                break
            size_field = data[at:line_end].split(b";", 1)[0].strip()
            try:
                chunk_size = int(size_field, 16)
            except ValueError:
                raise RequestFailed("connection broken (bad chunk framing)") from None
            at = line_end + 2
            if chunk_size == 0:
                self._finish()
                return
            self._chunk_left = chunk_size
        if at < size:
            self._raw += data[at:]

    def _sse(self, data: bytes, now: float) -> None:
        # Events end with a blank line; JSON payloads hold no raw newline, so the first "\n"
        # of an event is its end. One-byte finds: bytes.find of a 2-byte pattern is ~40x
        # slower than memchr on chunks of cumulative text.
        response = self._response
        assert response is not None
        events = self._events
        if not events and data.find(b"\n") == len(data) - 2 and data.endswith(_EVENT_END):
            response.event(data[:-2], now)  # the common case: one whole event per chunk
            return
        events += data
        start = 0
        while True:
            cut = events.find(b"\n", start)
            if cut < 0 or cut + 1 >= len(events):
                break
            if events[cut + 1] != 10:  # a line break inside an event (several SSE fields)
                nxt = events.find(_EVENT_END, cut)
                if nxt < 0:
                    break
                cut = nxt
            response.event(bytes(events[start:cut]), now)
            start = cut + 2
        if start:
            del events[:start]

    def _finish(self) -> None:
        response, waiter = self._response, self._waiter
        if response is None or waiter is None or waiter.done():
            return
        leftover = bytes(self._events).strip()
        try:
            if leftover:
                response.event(leftover, self._last_arrival)
            response.close()
        except RequestFailed as exc:
            self._fail(exc)
            return
        self.reusable = self._keep_alive and not self.closed
        waiter.set_result(None)

    def _fail(self, exc: Exception) -> None:
        waiter = self._waiter
        self._drop()
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def _drop(self) -> None:
        self.reusable = False
        if self._stall_timer is not None:
            self._stall_timer.cancel()
        if self.transport is not None and not self.closed:
            self.transport.abort()
        self.closed = True


class BufferedConnection(Connection, asyncio.BufferedProtocol):
    """The same connection reading into one preallocated buffer, for asyncio's own loop.

    asyncio's selector loop gives a plain Protocol a fresh max_size (256 KiB) bytes per recv,
    which glibc serves by mmap/munmap: measured as the largest single cost per chunk when
    chunks arrive one at a time (paced). uvloop reads into its own buffer, and there the
    extra get_buffer call per read costs more than it saves.
    """

    def __init__(self, stall_timeout_s: float) -> None:
        super().__init__(stall_timeout_s)
        self._read_buffer = bytearray(_READ_BUFFER_BYTES)
        self._read_view = memoryview(self._read_buffer)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._read_view

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(bytes(self._read_view[:nbytes]))


class ConnectionDropped(Exception):
    """The server closed a connection before answering (a stale keep-alive): retry once."""
