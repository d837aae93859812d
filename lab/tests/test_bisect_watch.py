"""lab/gpu/bisect_watch.py: a bisection's pairs copied as they land, and the bisection stopped
after the last pair that ends before the session's deadline."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from pytest_specperf.history.bisect_log import BisectLog
from pytest_specperf.history.store import HistoryStore
from tests.support.data import REPO
from tests.support.scripts import load_script


@pytest.fixture(scope="module")
def bisect_watch() -> ModuleType:
    return load_script(REPO / "lab" / "gpu" / "bisect_watch.py")


def record_pairs(store_path: Path, count: int) -> None:
    store = HistoryStore.open(store_path)
    try:
        log = BisectLog(store, "bisect-test", started_at="2026-12-06T00:00:00+00:00", commit="b")
        for pair in range(count):
            log.record(
                "step-1",
                pair=pair,
                base="a",
                head="b",
                boot_order="base,head",
                server_seconds=200.0,
                pair_json="{}",
            )
    finally:
        store.close()


def test_the_copy_is_one_file_holding_every_pair_the_store_holds(
    bisect_watch: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "bisect").mkdir()
    store = tmp_path / "bisect" / "history.sqlite"
    copy = tmp_path / "state" / "history.sqlite"
    assert bisect_watch.pairs_recorded(store) == 0
    bisect_watch.copy_store(store, copy)
    assert not copy.exists()
    record_pairs(store, 3)
    bisect_watch.copy_store(store, copy)
    assert bisect_watch.pairs_recorded(copy) == 3
    assert sorted(p.name for p in copy.parent.iterdir()) == ["history.sqlite"]
    reopened = HistoryStore.open(copy, read_only=True)
    try:
        assert len(reopened.bisect_pairs("bisect-test", "step-1")) == 3
    finally:
        reopened.close()


def test_it_stops_after_the_pair_past_which_another_would_not_end_in_time(
    bisect_watch: ModuleType,
) -> None:
    """1,000 s from the start; 2 pairs resumed from an earlier session; pairs of 300 s."""
    deadline = bisect_watch.Deadline(1000.0, 250.0, start=0.0, pairs=2)
    assert deadline.why_stop(100.0, 2) is None
    assert deadline.why_stop(300.0, 3) is None  # 300 + 300 ends in time
    assert deadline.why_stop(600.0, 4) is None  # 600 + 300
    why = deadline.why_stop(900.0, 5)  # 900 + 300 would not
    assert why == (
        "stopping after pair 3 of this run at 900 s: another of about 300 s would end past 1000 s"
    )


def test_past_the_deadline_it_stops_whatever_runs(bisect_watch: ModuleType) -> None:
    deadline = bisect_watch.Deadline(1000.0, 250.0, start=0.0, pairs=0)
    assert deadline.why_stop(700.0, 0) is None
    assert deadline.why_stop(1001.0, 0) == (
        "stopping at the deadline, 1000 s: the pair in flight is lost"
    )
    late = bisect_watch.Deadline(1000.0, 250.0, start=0.0, pairs=0)
    assert (
        late.why_stop(1010.0, 1) == "stopping at the deadline, 1000 s: the pair in flight is lost"
    )


def test_the_watched_process_gets_sigterm_at_the_deadline_and_the_copy_is_left(
    bisect_watch: ModuleType, tmp_path: Path
) -> None:
    store = tmp_path / "history.sqlite"
    record_pairs(store, 1)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        deadline = bisect_watch.Deadline(0.3, 10.0, start=time.monotonic(), pairs=1)
        bisect_watch.watch(
            sleeper.pid,
            store,
            tmp_path / "copy.sqlite",
            every_s=0.1,
            deadline=deadline,
            poll_s=0.05,
        )
        assert sleeper.wait(timeout=10) == -15
    finally:
        sleeper.kill()
    assert bisect_watch.pairs_recorded(tmp_path / "copy.sqlite") == 1


def test_a_bisection_that_ended_on_its_own_is_not_signalled(
    bisect_watch: ModuleType,
) -> None:
    """On the eleventh H100 the bisection ended with its last pair, the one the deadline would
    have stopped after: the SIGTERM then raised and the watch's last copy was never made."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait(timeout=30)
    assert bisect_watch.terminate(ended.pid) is False
