"""Kills a server's process group when the process that launched it dies.

The server runs in its own session so that a Ctrl-C reaches the suite first and the suite
tears it down in order. That also means nothing kills it if the suite itself is killed
(SIGKILL, an xdist worker crash, an OOM kill): this watchdog does. It runs in its own session,
polls, and exits once the server's group is gone. Given the server's live log and the
artifact path, it also saves the log there (secrets, read from the environment variable
SPECPERF_WATCHDOG_SECRETS, one per line, replaced by ***), as the suite would have.

    python -m pytest_specperf.server.watchdog PARENT_PID SERVER_PGID [GRACE_S [LIVE_LOG SAVED_LOG]]
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

POLL_S = 0.5
SECRETS_ENV = "SPECPERF_WATCHDOG_SECRETS"
USAGE = (
    "usage: python -m pytest_specperf.server.watchdog PARENT_PID SERVER_PGID [GRACE_S [LIVE SAVED]]"
)


def redact(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def save_redacted_log(live_log: Path, saved_log: Path, secrets: Sequence[str]) -> None:
    """Copy the live log to ``saved_log`` with secrets replaced, then delete the live copy."""
    try:
        text = live_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    saved_log.parent.mkdir(parents=True, exist_ok=True)
    saved_log.write_text(redact(text, secrets), encoding="utf-8")
    with contextlib.suppress(OSError):
        live_log.unlink()
        live_log.parent.rmdir()


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_members(pgid: int) -> list[psutil.Process]:
    """The server and its descendants, wherever their process group is."""
    try:
        leader = psutil.Process(pgid)
        return [leader, *leader.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def kill_group(pgid: int, grace_s: float, escaped: Sequence[psutil.Process] = ()) -> None:
    """SIGTERM the group, then SIGKILL whatever is left after ``grace_s``.

    ``escaped``: descendants seen earlier; those that left the group are killed too.
    """
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and group_alive(pgid):
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    for proc in escaped:
        with contextlib.suppress(psutil.Error):
            proc.kill()


class LogSilence:
    """How long a live log has gone without growing. Bytes, not lines: a progress bar
    (SGLang's CUDA graph capture draws one with carriage returns) is a sign of life too."""

    def __init__(self, log: Path, now: float | None = None) -> None:
        self.log = log
        self._size = self._current_size()
        self._since = time.monotonic() if now is None else now

    def _current_size(self) -> int:
        try:
            return self.log.stat().st_size
        except OSError:
            return 0

    def silent_for(self, now: float | None = None) -> float:
        """Seconds since the log last grew (measured from the first call or creation)."""
        now = time.monotonic() if now is None else now
        size = self._current_size()
        if size != self._size:
            self._size, self._since = size, now
        return now - self._since


def _wait_channel(pid: int) -> str | None:
    """The kernel function a sleeping process waits in (Linux /proc; None elsewhere or 0)."""
    try:
        text = Path(f"/proc/{pid}/wchan").read_text().strip()
    except OSError:
        return None
    return text if text and text != "0" else None


def describe_tree(root_pid: int, window_s: float = 1.0) -> str:
    """What each process of a server's tree is doing now: its state, its CPU use over
    ``window_s`` (share of one core), its resident memory and, asleep, the kernel call it waits
    in; e.g. ``sglang::scheduler pid 812: sleeping, 0% CPU, 5.1 GB RSS, waits in futex_wait``.
    """
    try:
        root = psutil.Process(root_pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return f"pid {root_pid}: gone"
    before: dict[int, float] = {}
    for proc in tree:
        with contextlib.suppress(psutil.Error):
            times = proc.cpu_times()
            before[proc.pid] = times.user + times.system
    time.sleep(window_s)
    lines = []
    for proc in tree:
        try:
            with proc.oneshot():
                name = _process_name(proc)
                status = proc.status()
                times = proc.cpu_times()
                rss = proc.memory_info().rss
        except psutil.Error:
            lines.append(f"pid {proc.pid}: gone")
            continue
        share = times.user + times.system - before.get(proc.pid, times.user + times.system)
        parts = [f"{status}", f"{share / window_s:.0%} CPU", f"{rss / 1e9:.1f} GB RSS"]
        channel = _wait_channel(proc.pid) if status != psutil.STATUS_RUNNING else None
        if channel:
            parts.append(f"waits in {channel}")
        lines.append(f"{name} pid {proc.pid}: {', '.join(parts)}")
    return "\n".join(lines)


def _process_name(proc: psutil.Process) -> str:
    """SGLang's own titles (``sglang::scheduler``) are argv[0]; others their executable."""
    with contextlib.suppress(psutil.Error, IndexError):
        first = proc.cmdline()[0]
        if first:
            return Path(first).name
    return proc.name()


def _parent_gone(parent: psutil.Process, started: float) -> bool:
    try:
        return parent.create_time() != started or parent.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def watch(
    parent_pid: int,
    pgid: int,
    grace_s: float,
    live_log: Path | None = None,
    saved_log: Path | None = None,
    secrets: Sequence[str] = (),
) -> None:
    """Until the server's group is gone: if the parent dies, kill the group and save the log."""
    members = _group_members(pgid)
    parent: psutil.Process | None
    try:
        parent = psutil.Process(parent_pid)
        started = parent.create_time()
    except psutil.NoSuchProcess:
        parent, started = None, 0.0
    while parent is not None and not _parent_gone(parent, started):
        if not group_alive(pgid):
            return  # the server ended on its own; its parent is alive and saves the log
        members = _group_members(pgid) or members
        time.sleep(POLL_S)
    kill_group(pgid, grace_s, escaped=members[1:])
    if live_log is not None and saved_log is not None:
        save_redacted_log(live_log, saved_log, secrets)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3, 5):
        print(USAGE)
        return 2
    grace = float(argv[2]) if len(argv) >= 3 else 10.0
    live, saved = (Path(argv[3]), Path(argv[4])) if len(argv) == 5 else (None, None)
    secrets = [line for line in os.environ.get(SECRETS_ENV, "").splitlines() if line]
    watch(int(argv[0]), int(argv[1]), grace, live, saved, secrets)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
