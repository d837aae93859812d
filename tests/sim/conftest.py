"""Boot the simulator as a real subprocess in its own session; always kill its group."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "sglang-0.5.12-h200"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SimServer:
    """A booted simulator."""

    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, timeout=10, **kw)

    def post(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.post(self.url + path, timeout=30, **kw)

    def stderr(self) -> str:
        return self.log.read_text()

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


def start_sim(
    args: list[str], log: Path, *, wait_healthy: bool = True, timeout: float = 10.0
) -> SimServer:
    port = free_port()
    fh = log.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_specperf.sim", "--port", str(port), *args],
        stdout=fh,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = SimServer(proc, port, log)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"sim exited {proc.returncode}: {log.read_text()}")
        try:
            code = httpx.get(server.url + "/health_generate", timeout=1).status_code
            if not wait_healthy and code in (200, 503):
                return server
            if code == 200:
                return server
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(f"sim not healthy after {timeout}s: {log.read_text()}")
        time.sleep(0.05)


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Callable[..., SimServer]]:
    """Factory: sim([...flags], wait_healthy=True) -> SimServer; all killed at teardown."""
    started: list[SimServer] = []

    def factory(args: list[str] | None = None, **kw: Any) -> SimServer:
        server = start_sim(args or [], tmp_path / f"sim{len(started)}.log", **kw)
        started.append(server)
        return server

    yield factory
    for server in started:
        server.kill()


def load_json(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def load_stream(name: str) -> list[str]:
    """The `data:` payloads of a recorded stream."""
    return [json.loads(line)["line"][6:] for line in (DATA / name).read_text().splitlines()]


@pytest.fixture(scope="module")
def module_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., SimServer]]:
    """Like `sim`, shared by a module's tests."""
    started: list[SimServer] = []
    tmp = tmp_path_factory.mktemp("sim")

    def factory(args: list[str] | None = None, **kw: Any) -> SimServer:
        server = start_sim(args or [], tmp / f"sim{len(started)}.log", **kw)
        started.append(server)
        return server

    yield factory
    for server in started:
        server.kill()


def sse_payloads(body: str) -> list[str]:
    """`data:` payloads of an SSE body, in order."""
    return [block[6:] for block in body.split("\n\n") if block.startswith("data: ")]
