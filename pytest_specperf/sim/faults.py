"""Injected faults (--sim-fault): which requests they hit and what each one does.

A fault acts at one moment of a request's life: `before` (instead of serving it at all),
or when it ends, in `whole` (non-streaming: replaces the response) and `mid_stream`
(streaming: once half the tokens are out, or at the finish). A new fault is one `Fault`
member plus its functions registered in `ACTIONS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from aiohttp import web

from pytest_specperf.sim.wire import DONE, error_event, error_response


class Fault(StrEnum):
    HTTP_ERROR = "http-error"
    MALFORMED = "malformed"
    ERROR_CHUNK = "error-chunk"
    RESET = "reset"
    TRUNCATE = "truncate"
    STALL = "stall"
    WRONG_CONTENT_TYPE = "wrong-content-type"


def pick_fault(fault: Fault | None, rate: float, seed: int, arrival_index: int) -> Fault | None:
    """Deterministic per arrival index: same seed, same requests hit."""
    if fault is None:
        return None
    draw = random.Random(f"{seed}:fault:{arrival_index}").random()
    return fault if draw < rate else None


@dataclass(frozen=True)
class StreamInProgress:
    """What a mid-stream fault may act on."""

    request: web.Request
    response: web.StreamResponse
    abort: Callable[[], None]  # frees the request's scheduler slot


BeforeAction = Callable[[int], web.Response]
WholeAction = Callable[[web.Request, bytes], Awaitable[web.StreamResponse]]
# Returns True when the stream goes on normally afterwards.
MidStreamAction = Callable[[StreamInProgress], Awaitable[bool]]


@dataclass(frozen=True)
class FaultActions:
    before: BeforeAction | None = None
    whole: WholeAction | None = None
    mid_stream: MidStreamAction | None = None


def _error_json(message: str, status: int) -> web.Response:
    return error_response(message, status, "SimulatedError")


# ---- before ---------------------------------------------------------------------------


def _http_error(error_status: int) -> web.Response:
    resp = _error_json(f"simulated fault: HTTP {error_status}", error_status)
    if error_status == 429:
        resp.headers["Retry-After"] = "1"
    return resp


def _wrong_content_type(error_status: int) -> web.Response:
    return web.Response(
        status=200,
        content_type="text/html",
        text="<html><body><h1>502 Bad Gateway</h1>(simulated)</body></html>",
    )


# ---- non-streaming --------------------------------------------------------------------


async def _cut_body(request: web.Request, body: bytes) -> web.StreamResponse:
    return web.Response(status=200, content_type="application/json", body=body[:40])


async def _error_body(request: web.Request, body: bytes) -> web.StreamResponse:
    return _error_json("simulated fault: error", 500)


async def _reset_whole(request: web.Request, body: bytes) -> web.StreamResponse:
    hard_reset(request)
    return web.Response(status=500)


async def _stall_whole(request: web.Request, body: bytes) -> web.StreamResponse:
    await wait_closed(request)
    return web.Response(status=500)


# ---- mid-stream -----------------------------------------------------------------------


async def _malformed_chunk(stream: StreamInProgress) -> bool:
    await stream.response.write(b'data: {"text": "w1 w2, "meta_info": {"id": \n\n')
    return True


async def _error_event(stream: StreamInProgress) -> bool:
    stream.abort()
    await stream.response.write(error_event("simulated fault: error mid-stream", 500))
    await stream.response.write(DONE)
    await stream.response.write_eof()
    return False


async def _reset_stream(stream: StreamInProgress) -> bool:
    stream.abort()
    hard_reset(stream.request)
    return False


async def _truncate_stream(stream: StreamInProgress) -> bool:
    stream.abort()
    await stream.response.write_eof()
    return False


async def _stall_stream(stream: StreamInProgress) -> bool:
    stream.abort()
    await wait_closed(stream.request)
    return False


ACTIONS: dict[Fault, FaultActions] = {
    Fault.HTTP_ERROR: FaultActions(before=_http_error),
    Fault.WRONG_CONTENT_TYPE: FaultActions(before=_wrong_content_type),
    Fault.MALFORMED: FaultActions(whole=_cut_body, mid_stream=_malformed_chunk),
    Fault.TRUNCATE: FaultActions(whole=_cut_body, mid_stream=_truncate_stream),
    Fault.ERROR_CHUNK: FaultActions(whole=_error_body, mid_stream=_error_event),
    Fault.RESET: FaultActions(whole=_reset_whole, mid_stream=_reset_stream),
    Fault.STALL: FaultActions(whole=_stall_whole, mid_stream=_stall_stream),
}


def hard_reset(request: web.Request) -> None:
    """Close the connection with a TCP RST (SO_LINGER 0) instead of a FIN."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


async def wait_closed(request: web.Request) -> None:
    """Send nothing until the client gives up."""
    while True:
        transport = request.transport
        if transport is None or transport.is_closing():
            return
        await asyncio.sleep(0.2)
