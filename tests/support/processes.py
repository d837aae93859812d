"""Processes for tests that read other processes."""

from __future__ import annotations

import subprocess
import sys


def pid_of_an_ended_process() -> int:
    """The pid a process had: it has exited (and been reaped) by the time this returns."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)
