"""measure.loop: the load generator's event loop, and SIGTERM while it runs."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from types import FrameType

import pytest

from pytest_specperf.measure import loop


class Stopped(KeyboardInterrupt):
    """What the test's SIGTERM handler raises, as the plugin's Terminated does."""


@pytest.fixture(params=["uvloop", "asyncio"])
def event_loop_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    kind: str = request.param
    if kind == "asyncio":
        monkeypatch.setenv(loop.EVENT_LOOP_ENV, "asyncio")
    elif loop.loop_name() != "uvloop":
        pytest.skip("uvloop is not installed")
    return kind


@pytest.fixture
def raising_sigterm_handler() -> Iterator[list[int]]:
    calls: list[int] = []

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        calls.append(signum)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Stopped("SIGTERM")

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield calls
    finally:
        signal.signal(signal.SIGTERM, previous)


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
    raising_sigterm_handler: list[int],
) -> None:
    """A SIGTERM that lands while a chunk is read ends the run with the handler's interrupt
    (uvloop would otherwise take it for the connection's error and carry on)."""
    with pytest.raises(Stopped):
        loop.run(_read_until_closed())
    assert raising_sigterm_handler == [signal.SIGTERM]


@pytest.mark.usefixtures("event_loop_kind")
def test_the_sigterm_handler_is_back_after_a_run(raising_sigterm_handler: list[int]) -> None:
    async def nothing() -> int:
        return 7

    handler = signal.getsignal(signal.SIGTERM)
    assert loop.run(nothing()) == 7
    assert signal.getsignal(signal.SIGTERM) is handler
    assert raising_sigterm_handler == []
