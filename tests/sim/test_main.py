"""`python -m pytest_specperf.sim` stopped with streams open, as a run's end or Ctrl-C stops it:
a real simulator process, real client processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from tests.support.sim import SimServer

STREAMS = 16
# A client process holding STREAMS streams of the simulator open, printing a line as each
# receives its first bytes; its streams end when it is killed, as the load generator's do.
CLIENT = """
import sys, threading, httpx
url, count = sys.argv[1], int(sys.argv[2])
said = threading.Lock()
def say(word):
    with said:
        print(word, flush=True)
def stream():
    body = {"text": "w1 w2 w3", "stream": True,
            "sampling_params": {"max_new_tokens": 100000, "ignore_eos": True}}
    try:
        with httpx.stream("POST", url + "/generate", json=body, timeout=None) as response:
            for index, _ in enumerate(response.iter_raw()):
                if index == 0:
                    say("open")
    except httpx.HTTPError:
        pass
    say("ended")
threads = [threading.Thread(target=stream) for _ in range(count)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
"""


@pytest.fixture
def streaming_client() -> Iterator[Callable[[str], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(url: str) -> subprocess.Popen[str]:
        client = subprocess.Popen(
            [sys.executable, "-c", CLIENT, url, str(STREAMS)],
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(client)
        assert client.stdout is not None
        opened = [client.stdout.readline() for _ in range(STREAMS)]
        assert opened == ["open\n"] * STREAMS
        return client

    yield start
    for client in started:
        if client.poll() is None:
            client.kill()
        client.wait()


def _log_after_ready(server: SimServer) -> list[str]:
    """The simulator's log once it is down, from the line after its ready line."""
    server.kill()  # the stop saves the log (a no-op for the process once it has exited)
    lines = server.server.log_path.read_text(encoding="utf-8").splitlines()
    ready = next(i for i, line in enumerate(lines) if "ready to roll" in line)
    return lines[ready + 1 :]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_with_streams_open_ends_them_at_once_in_one_line(
    sim: Callable[..., SimServer],
    streaming_client: Callable[[str], subprocess.Popen[str]],
    signum: signal.Signals,
) -> None:
    """SIGTERM (how a run stops its server) or SIGINT with 16 streams open: the streams end
    and the simulator exits within seconds (it waited out aiohttp's 60 s shutdown), its log
    saying so in one line, no traceback."""
    server = sim(["--sim-speedup", "5"])
    client = streaming_client(server.url)
    started = time.monotonic()
    os.kill(server.proc.pid, signum)
    server.proc.wait(timeout=30)
    assert time.monotonic() - started < 5
    assert client.wait(timeout=10) == 0  # every stream ended
    assert _log_after_ready(server) == [f"[sim] shutting down: {STREAMS} requests in flight cut"]


def test_clients_killed_mid_stream_then_a_stop_leave_no_traceback(
    sim: Callable[..., SimServer],
    streaming_client: Callable[[str], subprocess.Popen[str]],
) -> None:
    """Ctrl-C: the client processes die with their streams open, then the run stops the
    simulator. Each stream cut by its client ends quietly: no "Cannot write to closing
    transport" traceback per stream (there were 16), at most one line for them all."""
    server = sim(["--sim-speedup", "5"])
    client = streaming_client(server.url)
    client.send_signal(signal.SIGKILL)
    client.wait()
    time.sleep(0.5)  # the simulator writes into the closed streams meanwhile
    os.kill(server.proc.pid, signal.SIGTERM)
    server.proc.wait(timeout=30)
    after = _log_after_ready(server)
    assert not any("Traceback" in line or "Error handling request" in line for line in after)
    assert len(after) <= 2, after
