"""A bisection's pairs in the history store: found again by the bisection's name alone."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.history.bisect_log import BisectLog
from pytest_specperf.history.store import HistoryStore


def log_pair(log: BisectLog, step: str, pair: int, seconds: float) -> None:
    log.record(
        step,
        pair=pair,
        base="a" * 40,
        head="b" * 40,
        boot_order="base,head",
        server_seconds=seconds,
        pair_json="{}",
    )


def test_a_bisections_pair_seconds_span_its_steps_and_no_other_bisection(tmp_path: Path) -> None:
    store = HistoryStore.open(tmp_path / "h.sqlite")
    one = BisectLog(store, "bisect-one", started_at="2026-12-06T19:53:32+00:00", commit="c8")
    other = BisectLog(store, "bisect-other", started_at="2026-12-06T19:53:32+00:00", commit="c8")
    log_pair(one, "step1", 0, 199.2)
    log_pair(one, "step1", 1, 168.0)
    log_pair(one, "step2", 0, 181.5)
    log_pair(other, "step1", 0, 12.0)
    assert sorted(one.pair_seconds()) == [168.0, 181.5, 199.2]
    assert other.pair_seconds() == [12.0]
    assert [row["server_seconds"] for row in one.recorded("step1")] == [199.2, 168.0]
    store.close()
