"""server.process under the signal policy: a second Ctrl-C hurries teardown, leaving nothing."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_specperf import interrupts
from pytest_specperf.server.process import ServerProcess
from tests.support.signals import own_policy
from tests.unit.server.test_process import live_group_members, python_server

# A server that ignores SIGTERM: only the grace period's end (SIGKILL) stops it.
STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"


@pytest.fixture
def policy(monkeypatch: pytest.MonkeyPatch) -> Iterator[interrupts.SignalPolicy]:
    with own_policy(monkeypatch) as fresh:
        yield fresh


def stubborn_server(tmp_path: Path, *, stop_grace_s: float) -> tuple[ServerProcess, int]:
    """A started server that ignores SIGTERM, so only the SIGKILL after the grace ends it;
    and its process id."""
    server = python_server(STUBBORN, tmp_path, stop_grace_s=stop_grace_s)
    server.start()
    assert server.process is not None
    return server, server.process.pid


@pytest.mark.usefixtures("policy")
def test_a_second_signal_ends_the_stop_grace_period_and_leaves_no_process(
    tmp_path: Path,
) -> None:
    server, pid = stubborn_server(tmp_path, stop_grace_s=120)
    time.sleep(0.5)  # the SIGTERM handler of the server is in place
    interrupts.ending()  # the first Ctrl-C is being handled: teardown runs
    os.kill(os.getpid(), signal.SIGINT)
    os.kill(os.getpid(), signal.SIGINT)  # the second one
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 60  # not the 120 s grace period
    assert live_group_members(pid) == []


@pytest.mark.usefixtures("policy")
def test_a_signal_during_stop_is_raised_once_the_server_is_down(tmp_path: Path) -> None:
    """Raised in the middle of the grace period, the interrupt would skip the SIGKILL."""
    server, pid = stubborn_server(tmp_path, stop_grace_s=3)
    time.sleep(0.5)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    with pytest.raises(interrupts.Interrupted):
        server.stop()
    timer.join()
    assert live_group_members(pid) == []
