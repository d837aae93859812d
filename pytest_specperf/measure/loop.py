"""The event loop the load generator runs on: uvloop's where it is installed, else asyncio's.

Streaming C=64 paced from the reference server, the client's CPU per token on uvloop was about
two thirds of that on asyncio's selector loop (docs/explanation/load-generator.md): the
per-read cost of the loop itself is most of what is left once parsing is lean.
SPECPERF_EVENT_LOOP=asyncio forces asyncio's loop (to compare, or if uvloop misbehaves somewhere).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
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
    """Like asyncio.run (Ctrl-C included), on the loop loop_factory picks.

    A Python SIGTERM handler (the plugin's raises an interrupt so that teardown saves the
    results) is run after the loop, not inside it: uvloop treats an exception raised in a
    protocol callback as that connection's fatal error and goes on, so a SIGTERM that landed
    while a chunk was being read was lost (seen: a cancelled run measured on to the end). While
    the loop runs, SIGTERM cancels the coroutine instead, as Ctrl-C does; then the handler runs.
    """
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        handler = signal.getsignal(signal.SIGTERM)
        if threading.current_thread() is not threading.main_thread() or not callable(handler):
            return runner.run(main)
        received: list[int] = []
        try:
            result = runner.run(_cancelled_by_sigterm(main, received))
        except asyncio.CancelledError:
            if received:
                handler(signal.SIGTERM, None)  # raises, as it would have had it run in time
            raise
        if received:  # the coroutine finished anyway: the signal still counts
            handler(signal.SIGTERM, None)
        return result


async def _cancelled_by_sigterm(main: Coroutine[Any, Any, T], received: list[int]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm() -> None:
        received.append(signal.SIGTERM)
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError):  # a loop without signal support (Windows)
        return await main
    try:
        return await main
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        # remove_signal_handler leaves the default action; the Python handler comes back.
        signal.signal(signal.SIGTERM, previous)
