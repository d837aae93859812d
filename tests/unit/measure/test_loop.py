"""measure.loop: the load generator's event loop, and SIGTERM while it runs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterator

import pytest

from pytest_specperf import interrupts
from pytest_specperf.measure import loop
from tests.support.signals import own_policy


@pytest.fixture(params=["uvloop", "asyncio"])
def event_loop_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    kind: str = request.param
    if kind == "asyncio":
        monkeypatch.setenv(loop.EVENT_LOOP_ENV, "asyncio")
    elif loop.loop_name() != "uvloop":
        pytest.skip("uvloop is not installed")
    return kind


@pytest.fixture
def policy(monkeypatch: pytest.MonkeyPatch) -> Iterator[interrupts.SignalPolicy]:
    with own_policy(monkeypatch) as fresh:
        yield fresh


class _KillsWhileReading(asyncio.Protocol):
    """Sends SIGTERM to this process from inside data_received, then keeps the callback busy
    long enough for a Python-level handler to run there."""

    def __init__(self, done: asyncio.Future[None]) -> None:
        self.done = done

    def data_received(self, data: bytes) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100_000):
            pass

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def _read_until_closed() -> str:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"x")
        await writer.drain()
        await asyncio.sleep(2)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    done = asyncio.get_running_loop().create_future()
    await asyncio.get_running_loop().create_connection(
        lambda: _KillsWhileReading(done), "127.0.0.1", port
    )
    await asyncio.wait_for(done, 5)
    server.close()
    return "finished"


@pytest.mark.usefixtures("event_loop_kind")
def test_sigterm_inside_a_protocol_callback_still_interrupts(
    policy: interrupts.SignalPolicy,
) -> None:
    """A SIGTERM that lands while a chunk is read ends the run with the interrupt (uvloop
    would otherwise take it for the connection's error and carry on)."""
    with pytest.raises(interrupts.Interrupted) as caught:
        loop.run(_read_until_closed())
    assert caught.value.signum == signal.SIGTERM


async def _swallows_its_cancellation() -> str:
    """Ctrl-C lands while the coroutine awaits something whose cancellation it suppresses
    (the client monitor's sampler did this at the end of every point)."""
    inner = asyncio.ensure_future(asyncio.sleep(5))
    asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGINT)
    with contextlib.suppress(asyncio.CancelledError):
        await inner
    return "measured on"


@pytest.mark.usefixtures("event_loop_kind")
def test_a_ctrl_c_whose_cancellation_was_swallowed_still_interrupts(
    policy: interrupts.SignalPolicy,
) -> None:
    """The observed loss: the coroutine finished normally after Ctrl-C, and the run went on."""
    with pytest.raises(interrupts.Interrupted) as caught:
        loop.run(_swallows_its_cancellation())
    assert caught.value.signum == signal.SIGINT


@pytest.mark.usefixtures("event_loop_kind")
def test_the_signal_handlers_are_back_after_a_run(policy: interrupts.SignalPolicy) -> None:
    async def nothing() -> int:
        return 7

    handlers = [signal.getsignal(signum) for signum in interrupts.SIGNALS]
    assert loop.run(nothing()) == 7
    assert [signal.getsignal(signum) for signum in interrupts.SIGNALS] == handlers
    assert interrupts.interrupted() is None


@pytest.mark.usefixtures("event_loop_kind")
def test_a_signal_before_the_loop_starts_interrupts_without_running_it(
    policy: interrupts.SignalPolicy,
) -> None:
    started: list[bool] = []

    async def measure() -> None:
        started.append(True)

    interrupts.ending()  # recorded, not raised (as in a deferred write)
    os.kill(os.getpid(), signal.SIGINT)
    policy.ending_now = False  # the run goes on to measure
    coroutine = measure()
    with pytest.raises(interrupts.Interrupted):
        loop.run(coroutine)
    coroutine.close()
    assert started == []
