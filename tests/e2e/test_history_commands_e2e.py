"""Issue 34, case 3, replayed as a user types it: the history commands in a directory without
a store end with a clear error and create nothing; the store a pytest run records into is
the one the command reads ($SPECPERF_HISTORY); `export | head` ends quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.store import HistoryStore
from tests.support.data import REPO
from tests.support.history_writer import sample_point, sample_results

SPECPERF = [sys.executable, "-m", "pytest_specperf.cli"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SPECPERF_HISTORY"}
    return {**env, "PYTHONPATH": str(REPO), **extra}


def _specperf(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SPECPERF, *args], cwd=cwd, env=_env(**env), capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    "args", [["history", "show"], ["history", "changes", "--fail-on-new"]], ids=" ".join
)
def test_a_history_command_in_an_empty_directory_is_an_error_creating_nothing(
    tmp_path: Path, args: list[str]
) -> None:
    done = _specperf(tmp_path, *args)
    assert done.returncode == 2, done
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"specperf: error: history store {tmp_path / '.specperf'}")
    assert "no store there" in line
    assert list(tmp_path.iterdir()) == []


def _store_with(path: Path, runs: dict[str, str]) -> None:
    store = HistoryStore.open(path)
    for run_id, kind in runs.items():
        results = sample_results(run_id, [sample_point(1)])
        store.record(results, RunContext(run_profile=kind))
        store.finish_run(run_id)
    store.close()


def test_pytest_and_the_command_read_one_specperf_history(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """SPECPERF_HISTORY set once: the run records into it, the command reads it back."""
    pytester.makepyfile("def test_point(specperf_depth): pass")
    store = tmp_path / "team" / "history.sqlite"
    store.parent.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--spec-steps=3", "-p", "no:cacheprovider"],
        cwd=pytester.path,
        env=_env(SPECPERF_HISTORY=str(store)),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shown = _specperf(pytester.path, "history", "show", SPECPERF_HISTORY=str(store))
    assert shown.returncode == 0, shown.stderr
    assert " complete " in shown.stdout.splitlines()[1]


def test_export_into_head_ends_quietly(tmp_path: Path) -> None:
    """The reader gone before the first write (`head -n 0` reads nothing): no traceback,
    the status of a Unix tool killed by SIGPIPE."""
    _store_with(tmp_path / "h.sqlite", {"n1": "nightly"})
    done = subprocess.run(
        f"{' '.join(SPECPERF)} history export --history h.sqlite | head -n 0; "
        'echo "status=${PIPESTATUS[0]}"',
        shell=True,
        executable="/bin/bash",
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stderr == ""  # no BrokenPipeError traceback
    assert done.stdout == "status=141\n"
