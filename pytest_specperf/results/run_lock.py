"""One run per out dir at a time: the run's lock on its artifact directory.

Two runs writing one results.json would mix their points (issue 34). A run takes an OS lock
(``flock`` through filelock) on ``<out>/.specperf-run.lock`` before it boots anything and
holds it until it ends; the kernel releases it when the process dies, so a killed run's lock
never blocks the next one. Beside it, ``.specperf-run.json`` says who holds it (pid, start
time, command): a second run reads it and refuses with one line naming the first.

The lock file is not truncated or removed by a run that fails to take it, and that run
creates nothing: it only reads the holder's note.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shlex
import sys
import time
from pathlib import Path

import msgspec
import psutil
from filelock import FileLock, Timeout

from pytest_specperf.errors import UsageError
from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.results.previous_run import set_aside_previous_run

LOCK_FILE = ".specperf-run.lock"
OWNER_FILE = ".specperf-run.json"
# A holder writes its note just after it takes the lock: a run that finds the lock taken
# waits this long for a note that names a live process before it names what it has.
_NOTE_WAIT_S = 2.0
_COMMAND_CHARS = 200


class RunOwner(msgspec.Struct, frozen=True):
    """Who holds an out dir: written by the holder, read by a run that is refused."""

    pid: int
    started_at: str  # local time, to the second
    command: str
    run_id: str = ""

    def describe(self) -> str:
        command = " ".join(self.command.split())  # one line, whatever the argv held
        if len(command) > _COMMAND_CHARS:  # its start and its end: the program, the options
            half = (_COMMAND_CHARS - 3) // 2
            command = f"{command[:half]}...{command[-half:]}"
        return f"pid {self.pid}, started {self.started_at}, command: {command}"


# What a command line may carry that must not be shown: an API key's value, a URL's password.
_SECRETS = (
    (re.compile(r"(api[-_]key[=\s]+)[^\s']+", re.IGNORECASE), r"\1***"),
    (re.compile(r"(://)[^/@\s]+@"), r"\1***@"),
)


def this_process(run_id: str = "") -> RunOwner:
    started = dt.datetime.now().astimezone().isoformat(sep=" ", timespec="seconds")
    command = shlex.join(sys.orig_argv)
    for pattern, replacement in _SECRETS:
        command = pattern.sub(replacement, command)
    return RunOwner(os.getpid(), started, command, run_id)


class OutDirLock:
    """The lock of one out dir, held from :meth:`acquire` until :meth:`release` or exit."""

    def __init__(self, out_dir: Path, owner: RunOwner, *, option: str = "--specperf-out") -> None:
        self.out_dir = out_dir
        self.owner = owner
        self.option = option  # the flag that named the directory, for the refusal's line
        self._lock = FileLock(str(out_dir / LOCK_FILE), timeout=0)
        # The previous run's files this run moved into previous/ when it took the folder.
        self.set_aside: list[str] = []

    @property
    def held(self) -> bool:
        return self._lock.is_locked

    def acquire(self) -> None:
        """Take the folder for this run: the lock, then the previous run's files set aside
        into previous/, so that the folder holds only what this run writes; or raise
        UsageError naming the run that holds it (changing nothing)."""
        if self.held:
            return
        if not (self.out_dir / LOCK_FILE).exists():
            self.out_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + _NOTE_WAIT_S
        while True:
            try:
                self._lock.acquire()
            except Timeout:
                holder = _read_owner(self.out_dir / OWNER_FILE)
                if (holder is not None and psutil.pid_exists(holder.pid)) or (
                    time.monotonic() >= deadline
                ):
                    raise UsageError(self._refusal(holder)) from None
                time.sleep(0.05)
                continue
            except OSError as exc:
                raise UsageError(
                    f"{self.option} {self.out_dir}: cannot lock it ({exc.strerror or exc})"
                ) from None
            break
        try:
            atomic_write_bytes(self.out_dir / OWNER_FILE, msgspec.json.encode(self.owner))
            self.set_aside = set_aside_previous_run(self.out_dir)
        except OSError as exc:
            self._lock.release()
            raise UsageError(
                f"{self.option} {self.out_dir}: cannot write in it ({exc.strerror or exc})"
            ) from None

    def release(self) -> None:
        if not self.held:
            return
        # The note goes first: a run that takes the lock next writes its own.
        if _read_owner(self.out_dir / OWNER_FILE) == self.owner:
            with contextlib.suppress(OSError):
                (self.out_dir / OWNER_FILE).unlink()
        self._lock.release()

    def _refusal(self, holder: RunOwner | None) -> str:
        who = holder.describe() if holder is not None else "its pid is not recorded"
        return (
            f"{self.option} {self.out_dir}: another run is writing there ({who}); wait for "
            f"it to end, or give this run its own {self.option}"
        )


def _read_owner(path: Path) -> RunOwner | None:
    try:
        return msgspec.json.decode(path.read_bytes(), type=RunOwner)
    except (OSError, msgspec.DecodeError):
        return None
