"""One run per out dir (results/run_lock.py): a second holder is refused with one line that
names the first; a dead holder blocks nothing; a refused run changes nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_specperf.errors import UsageError
from pytest_specperf.results.previous_run import PREVIOUS_RUN_DIR
from pytest_specperf.results.run_lock import LOCK_FILE, OWNER_FILE, OutDirLock, this_process

HOLD = (
    "import sys, time; from pathlib import Path; "
    "from pytest_specperf.results.run_lock import OutDirLock, this_process; "
    "lock = OutDirLock(Path(sys.argv[1]), this_process('holder')); lock.acquire(); "
    "print('held', flush=True); time.sleep(60)"
)


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding tmp_path/out, as another run would."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "out"), "--marker-arg"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    yield proc
    proc.kill()
    proc.wait()


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_a_second_run_is_refused_naming_the_first(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    lock = OutDirLock(tmp_path / "out", this_process("second"))
    with pytest.raises(UsageError) as refused:
        lock.acquire()
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith(f"--specperf-out {tmp_path / 'out'}: another run is writing there")
    assert f"pid {holder.pid}, started " in line
    assert "--marker-arg" in line  # its command
    assert not lock.held


def test_a_refused_run_creates_and_changes_nothing(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    before = _snapshot(tmp_path / "out")
    assert set(before) == {LOCK_FILE, OWNER_FILE}
    with pytest.raises(UsageError):
        OutDirLock(tmp_path / "out", this_process("second")).acquire()
    assert _snapshot(tmp_path / "out") == before


def test_the_lock_of_a_killed_run_blocks_nothing(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    lock = OutDirLock(tmp_path / "out", this_process("next"))
    started = time.monotonic()
    lock.acquire()
    assert lock.held and time.monotonic() - started < 1.0
    assert b'"run_id":"next"' in (tmp_path / "out" / OWNER_FILE).read_bytes()
    lock.release()


def test_a_released_out_dir_can_be_taken_again_and_keeps_no_note(tmp_path: Path) -> None:
    first = OutDirLock(tmp_path / "out", this_process("first"))
    first.acquire()
    first.release()
    assert not (tmp_path / "out" / OWNER_FILE).exists()
    second = OutDirLock(tmp_path / "out", this_process("second"))
    second.acquire()
    assert second.held
    second.release()


def test_the_refusal_names_the_flag_that_named_the_directory(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    with pytest.raises(UsageError, match=r"^--out .*give this run its own --out$"):
        OutDirLock(tmp_path / "out", this_process(), option="--out").acquire()


def test_a_long_command_is_shown_by_its_start_and_its_end() -> None:
    owner = this_process()
    long = type(owner)(1, "now", "python -m pytest " + "x " * 300 + "--specperf-out=mine")
    shown = long.describe()
    assert shown.startswith("pid 1, started now, command: python -m pytest x")
    assert shown.endswith("--specperf-out=mine") and "..." in shown
    assert len(shown) < 260


def test_the_note_shows_no_secret_of_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = [
        "pytest",
        "--specperf-server-arg=--api-key=sk-123",
        "--specperf-base-url=http://me:pw@host:1",
        "--api-key",
        "sk-456",
    ]
    monkeypatch.setattr(sys, "orig_argv", argv)
    command = this_process().command
    assert "sk-123" not in command and "sk-456" not in command and "pw" not in command
    assert "--api-key=***" in command and "http://***@host:1" in command


def test_taking_the_out_dir_sets_the_previous_runs_files_aside(tmp_path: Path) -> None:
    """The run that takes the folder finds it holding only what it will write: the previous
    run's files are in previous/, and the lock says which it moved."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("{}")
    (out / "server-steps1.log").write_text("log")
    lock = OutDirLock(out, this_process("next"))
    lock.acquire()
    try:
        assert sorted(p.name for p in out.iterdir()) == sorted(
            [LOCK_FILE, OWNER_FILE, PREVIOUS_RUN_DIR]
        )
        assert (out / PREVIOUS_RUN_DIR / "server-steps1.log").read_text() == "log"
        assert lock.set_aside == ["results.json", "server-steps1.log"]
    finally:
        lock.release()


def test_a_refused_run_sets_nothing_of_the_running_ones_aside(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    """The files of the run that holds the folder stay where it writes them."""
    (tmp_path / "out" / "server-steps3.log").write_text("the holder's")
    before = _snapshot(tmp_path / "out")
    with pytest.raises(UsageError):
        OutDirLock(tmp_path / "out", this_process("second")).acquire()
    assert _snapshot(tmp_path / "out") == before
