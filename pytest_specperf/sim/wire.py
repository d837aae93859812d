"""Bytes on the wire shared by every route: JSON responses, SSE events, SGLang's errors."""

from __future__ import annotations

from typing import Any

import msgspec
from aiohttp import web

ENCODER = msgspec.json.Encoder()
DONE = b"data: [DONE]\n\n"


def json_response(obj: Any, status: int = 200) -> web.Response:
    return web.Response(body=ENCODER.encode(obj), status=status, content_type="application/json")


def error_response(message: str, status: int, kind: str = "BadRequestError") -> web.Response:
    """SGLang's OpenAI-style error object."""
    return json_response(
        {"object": "error", "message": message, "type": kind, "param": None, "code": status},
        status,
    )


def sse(obj: Any) -> bytes:
    """One server-sent event carrying `obj` as JSON."""
    return b"data: " + ENCODER.encode(obj) + b"\n\n"


def error_event(message: str, code: int) -> bytes:
    """The error event SGLang sends when a stream fails after it started."""
    return sse(
        {"error": {"message": message, "type": "SimulatedError", "code": code, "retryable": False}}
    )
