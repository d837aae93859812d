"""The event loop the load generator runs on: uvloop's where it is installed, else asyncio's.

Streaming C=64 paced from the reference server, the client's CPU per token on uvloop was about
two thirds of that on asyncio's selector loop (docs/load-generator.md): the per-read cost of
the loop itself is most of what is left once parsing is lean. SPECPERF_EVENT_LOOP=asyncio
forces asyncio's loop (to compare, or if uvloop misbehaves somewhere).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
EVENT_LOOP_ENV = "SPECPERF_EVENT_LOOP"


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's new_event_loop, or None (asyncio's default) when absent or turned off."""
    if os.environ.get(EVENT_LOOP_ENV, "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def loop_name() -> str:
    return "asyncio" if loop_factory() is None else "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    """Like asyncio.run (Ctrl-C included), on the loop loop_factory picks."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
