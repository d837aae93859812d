"""The history store under several writer processes and under SIGKILL (real processes).

The PostgreSQL test runs against the server SPECPERF_TEST_POSTGRES_URL names (its tables are
dropped first: give it a database of its own) and skips, saying why, when none is set or
reachable.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from pytest_specperf.errors import SpecperfError
from pytest_specperf.history.store import HistoryStore, database_url
from tests.support.data import REPO

POSTGRES_ENV = "SPECPERF_TEST_POSTGRES_URL"
WRITERS = 4
RUNS_EACH = 50
POINTS = 3


def _writer(store: str, name: str, runs: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.history_writer", store, name, str(runs), *extra],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _write_concurrently(store: str) -> None:
    writers = [_writer(store, f"w{n}", RUNS_EACH, "--points", str(POINTS)) for n in range(WRITERS)]
    for writer in writers:
        _out, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err


def _assert_every_run_whole(store: HistoryStore) -> None:
    runs = store.runs()
    assert len(runs) == WRITERS * RUNS_EACH
    assert {r["run_id"] for r in runs} == {
        f"w{w}-{n:03d}" for w in range(WRITERS) for n in range(RUNS_EACH)
    }
    assert {r["status"] for r in runs} == {"complete"}
    per_run: dict[int, int] = {}
    for point in store.points():
        per_run[point["run_seq"]] = per_run.get(point["run_seq"], 0) + 1
    assert sorted(set(per_run.values())) == [POINTS]
    assert len(per_run) == len(runs)


def test_four_sqlite_writers_lose_no_run(tmp_path: Path) -> None:
    path = str(tmp_path / "h.sqlite")
    _write_concurrently(path)
    _assert_every_run_whole(HistoryStore.open(path))


def _postgres_url() -> str:
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set: no PostgreSQL server to test against")
    engine = sa.create_engine(database_url(url), poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("DROP TABLE IF EXISTS points, runs, alembic_version")
    except sa.exc.DBAPIError as exc:
        pytest.skip(f"{POSTGRES_ENV}: server not reachable ({str(exc.orig).splitlines()[0]})")
    finally:
        engine.dispose()
    return url


def test_four_postgres_writers_lose_no_run() -> None:
    url = _postgres_url()
    _write_concurrently(url)
    store = HistoryStore.open(url)
    _assert_every_run_whole(store)
    store.close()


def test_a_run_killed_midway_stays_readable_and_incomplete(tmp_path: Path) -> None:
    path = str(tmp_path / "h.sqlite")
    writer = _writer(path, "k", 3, "--points", "4", "--hang-after-points", "2")
    assert writer.stdout is not None
    lines = [writer.stdout.readline().strip() for _ in range(3)]
    assert lines[-1] == "HUNG k-002", lines
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    store = HistoryStore.open(path)
    statuses = {r["run_id"]: r["status"] for r in store.runs()}
    assert statuses == {"k-000": "complete", "k-001": "complete", "k-002": "incomplete"}
    killed = next(r["seq"] for r in store.runs() if r["run_id"] == "k-002")
    assert len(store.points([killed])) == 2


def test_sigkill_at_any_moment_of_writing_never_corrupts(tmp_path: Path) -> None:
    path = str(tmp_path / "h.sqlite")
    for attempt, delay in enumerate((0.0, 0.3, 0.7)):
        writer = _writer(path, f"x{attempt}", 10_000, "--points", "5")
        assert writer.stdout is not None
        writer.stdout.readline()  # one run done: it is writing now
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    try:
        store = HistoryStore.open(path)
    except SpecperfError as exc:
        pytest.fail(f"the store did not open after SIGKILL: {exc}")
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    runs = store.runs()
    points = store.points()
    complete = [r for r in runs if r["status"] == "complete"]
    assert len(complete) >= 3
    for run in complete:
        assert sum(p["run_seq"] == run["seq"] for p in points) == 5
    assert all(r["status"] in ("complete", "incomplete") for r in runs)
