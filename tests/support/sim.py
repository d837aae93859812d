"""A simulator booted by the suite's own launch code, and the fixtures that hand one out.

`boot_sim` builds the command with `build_launch` (backend "sim") and starts it with
`launch` / `ServerProcess`, so the tests exercise the same argv, process group, watchdog
and teardown as a real run. Tests add simulator flags; those come last and win.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_specperf.errors import ServerStartError
from pytest_specperf.server.launch import LaunchCommand, build_launch
from pytest_specperf.server.process import ServerProcess, free_port, launch
from pytest_specperf.server.profiles import Profile
from pytest_specperf.sim.model import DEFAULT_PROFILE, PROFILES

HOST = "127.0.0.1"
# The seed's speculation at depth 3, as SGLang's flags (NEXTN, topk 1, 4 draft tokens).
SPEC_DEPTH3_ARGS = [
    "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
]  # fmt: skip
BOOT_TIMEOUT_S = 30.0

# The simulator as `python -m pytest_specperf.sim` starts with no flags: no speculation,
# the default performance profile and its model path. Tests add the flags they need.
PLAIN_SIM = Profile(
    name="test-plain-sim",
    model_path=PROFILES[DEFAULT_PROFILE].model_path,
    sim_profile=DEFAULT_PROFILE,
)


@dataclass
class SimServer:
    """A booted simulator."""

    server: ServerProcess

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def proc(self) -> subprocess.Popen[bytes]:
        assert self.server.process is not None
        return self.server.process

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, timeout=10, **kw)

    def post(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.post(self.url + path, timeout=30, **kw)

    def kill(self) -> None:
        """Stop the process group (and the watchdog); a no-op once stopped."""
        self.server.stop()


def sim_command(args: Sequence[str], port: int) -> LaunchCommand:
    return build_launch(PLAIN_SIM, 1, backend="sim", host=HOST, port=port, server_args=args)


def boot_sim(args: Sequence[str], log: Path, *, wait_healthy: bool = True) -> SimServer:
    """Start a simulator; wait until healthy, or with `wait_healthy=False` until it answers."""
    if wait_healthy:
        server = launch(
            lambda port: sim_command(args, port),
            host=HOST,
            log_path=log,
            launch_timeout_s=BOOT_TIMEOUT_S,
            api_key=None,
        )
        return SimServer(server)
    port = free_port(HOST)
    server = ServerProcess(
        sim_command(args, port), host=HOST, port=port, log_path=log, stop_grace_s=5.0
    )
    server.start()
    try:
        _wait_answering(server)
    except BaseException:
        server.stop()
        raise
    return SimServer(server)


def _wait_answering(server: ServerProcess) -> None:
    """Until /health_generate answers at all (200 or 503: a server that is still booting)."""
    deadline = time.monotonic() + BOOT_TIMEOUT_S
    while time.monotonic() < deadline:
        if not server.alive():
            raise ServerStartError(f"simulator exited {server.exit_code()}: {server.log_tail()}")
        with contextlib.suppress(httpx.TransportError):
            httpx.get(server.url + "/health_generate", timeout=1, trust_env=False)
            return
        time.sleep(0.05)
    raise ServerStartError(f"simulator not answering after {BOOT_TIMEOUT_S:g} s")


SimFactory = Callable[..., SimServer]


@contextlib.contextmanager
def _factory(directory: Path) -> Iterator[SimFactory]:
    started: list[SimServer] = []

    def start(args: Sequence[str] = (), **kw: Any) -> SimServer:
        server = boot_sim(args, directory / f"sim{len(started)}.log", **kw)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.kill()


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[SimFactory]:
    """Factory: sim([...flags], wait_healthy=True) -> SimServer; all stopped at teardown."""
    with _factory(tmp_path) as start:
        yield start


@pytest.fixture(scope="module")
def module_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimFactory]:
    """Like `sim`, shared by a module's tests."""
    with _factory(tmp_path_factory.mktemp("sim")) as start:
        yield start
