"""The event loop the load generator runs on: uvloop's where it is installed, else asyncio's.

Streaming C=64 paced from the reference server, the client's CPU per token on uvloop was about
two thirds of that on asyncio's selector loop (docs/explanation/load-generator.md): the
per-read cost of the loop itself is most of what is left once parsing is lean.
SPECPERF_EVENT_LOOP=asyncio forces asyncio's loop (to compare, or if uvloop misbehaves somewhere).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from pytest_specperf import interrupts

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
    """Like asyncio.run, on the loop loop_factory picks; a SIGINT or SIGTERM ends it.

    With the run's signal policy installed (pytest_specperf.interrupts), a signal while the
    loop runs cancels the coroutine (uvloop takes an exception raised inside a protocol
    callback for that connection's error and goes on), and the interrupt is raised after the
    loop, also when the coroutine swallowed the cancellation and finished. Without the policy
    (a client worker process, a thread) this is asyncio.run on the chosen loop.
    """
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        if not interrupts.installed() or threading.current_thread() is not threading.main_thread():
            return runner.run(main)
        interrupts.checkpoint()
        try:
            result = runner.run(_cancelled_on_signal(main))
        except asyncio.CancelledError:
            interrupts.checkpoint()  # raises the interrupt that cancelled it
            raise
        interrupts.checkpoint()  # the coroutine finished anyway: the signal still counts
        return result


async def _cancelled_on_signal(main: Coroutine[Any, Any, T]) -> T:
    task = asyncio.current_task()
    assert task is not None
    with interrupts.cancelling(task):
        return await main
