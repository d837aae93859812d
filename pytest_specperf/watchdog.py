"""Kills a server's process group when the process that launched it dies.

The server runs in its own session so that a Ctrl-C reaches the suite first and the suite
tears it down in order. That also means nothing kills it if the suite itself is killed
(SIGKILL, an xdist worker crash, an OOM kill): this watchdog does. It runs in its own session,
polls, and exits once the server's group is gone.

    python -m pytest_specperf.watchdog PARENT_PID SERVER_PGID [GRACE_S]
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

import psutil

POLL_S = 0.5


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_group(pgid: int, grace_s: float) -> None:
    """SIGTERM the group, then SIGKILL whatever is left after ``grace_s``."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def watch(parent_pid: int, pgid: int, grace_s: float) -> None:
    try:
        parent = psutil.Process(parent_pid)
        parent_started = parent.create_time()
    except psutil.NoSuchProcess:
        kill_group(pgid, grace_s)
        return
    while group_alive(pgid):
        try:
            gone = parent.create_time() != parent_started or parent.status() == "zombie"
        except psutil.NoSuchProcess:
            gone = True
        if gone:
            kill_group(pgid, grace_s)
            return
        time.sleep(POLL_S)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: python -m pytest_specperf.watchdog PARENT_PID SERVER_PGID [GRACE_S]")
        return 2
    grace = float(argv[2]) if len(argv) == 3 else 10.0
    watch(int(argv[0]), int(argv[1]), grace)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
