"""history/site/data.py: what the site shows, gathered from a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import sqlalchemy as sa

from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.site.data import (
    PanelKey,
    commit_url,
    gather,
    step_time_ms,
    worst_outcome,
)
from pytest_specperf.history.store import HistoryStore
from tests.support.step_nights import STEP_AT, night, write_nights


def _gather(path: Path, **kwargs: object) -> object:
    store = HistoryStore.open(path)
    try:
        return gather(store, **kwargs)  # type: ignore[arg-type]
    finally:
        store.close()


def test_one_panel_per_profile_hardware_workload_and_depth(store_path: Path) -> None:
    site = _gather(store_path)
    assert [p.key for p in site.panels] == [  # type: ignore[attr-defined]
        PanelKey("prof", "sim-x5", "greedy-synthetic", 0),
        PanelKey("prof", "sim-x5", "greedy-synthetic", 3),
    ]
    assert [p.runs for p in site.panels] == [list(range(10))] * 2  # type: ignore[attr-defined]


def test_a_change_point_is_named_by_its_first_run_and_commit(store_path: Path) -> None:
    site = _gather(store_path, repo_url="https://github.com/o/r")
    (panel,) = [p for p in site.panels if p.key.depth == 3]  # type: ignore[attr-defined]
    agg = [c for c in panel.changes if c.metric == "agg_tok_s"]
    assert {c.run.run_id for c in agg} == {f"run{STEP_AT:02d}"}
    change = agg[0]
    assert change.run.commit_url == f"https://github.com/o/r/commit/{change.run.commit}"
    assert change.step == pytest.approx(-0.15, abs=0.01)
    assert change.step_low <= change.step <= change.step_high
    assert change.attribution == "step time"
    assert not change.in_latest_run


def test_a_commit_is_linked_only_when_it_is_a_commit_id_of_a_known_repository() -> None:
    assert (
        commit_url("https://github.com/o/r/", "a1b2c3d") == "https://github.com/o/r/commit/a1b2c3d"
    )
    assert commit_url(None, "a1b2c3d") is None
    assert commit_url("https://github.com/o/r", "night04") is None


def test_step_time_is_tokens_per_verify_step_over_the_request_rate() -> None:
    assert step_time_ms(3, 2.5, 100.0) == pytest.approx(25.0)
    assert step_time_ms(0, None, 100.0) == pytest.approx(10.0)  # one token per step
    assert step_time_ms(3, None, 100.0) is None


def test_the_latest_verdict_is_the_worst_of_the_latest_run() -> None:
    assert worst_outcome(["pass", None, "regression", "improvement"]) == "regression"
    assert worst_outcome([None]) is None


def test_points_carry_latency_in_ms_intervals_and_kv(store_path: Path) -> None:
    site = _gather(store_path)
    point = site.panels[1].points[0]  # type: ignore[attr-defined]
    assert point.ttft_ms.p50 == pytest.approx(20.0)
    assert point.itl_ms.p99 == pytest.approx(8.0)
    assert point.agg_interval == pytest.approx((point.agg_tok_s * 0.98, point.agg_tok_s * 1.02))
    assert point.kv_max_total_tokens == 297_000
    assert point.position_accept == (0.8, 0.6, 0.4)


def test_speculation_shows_speedups_and_when_stops_paying_moved(store_path: Path) -> None:
    (group,) = _gather(store_path).speculation  # type: ignore[attr-defined]
    assert {(s.depth, s.concurrency) for s in group.speedups} == {(3, 1), (3, 4)}
    assert [s.concurrency for s in group.stops_paying] == [None] * STEP_AT + [4] * 5
    (moved,) = group.moved
    assert moved.run.run_id == f"run{STEP_AT:02d}"
    assert (moved.before, moved.after) == ("at no C measured", "at C=4")
    assert group.latest_schedule.depth_at == ((1, 3), (4, 3))


def test_hover_shows_the_fingerprint_where_a_run_recorded_one(tmp_path: Path) -> None:
    results = night(0)
    raw = msgspec.json.decode(msgspec.json.encode(results))
    raw["testbed"] = {"gpu_name": "NVIDIA H200", "cpu_model": "Xeon", "nvml": None}
    with_print = msgspec.json.decode(msgspec.json.encode(raw), type=type(results))
    store = HistoryStore.open(tmp_path / "h.sqlite")
    store.record(with_print, RunContext(run_profile="nightly"))
    store.finish_run(with_print.run_id)
    # results.json's own fields are kept: write the raw text the way a newer run stores it.
    with store.engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE runs SET results_json = :raw"),
            {"raw": msgspec.json.encode(raw).decode()},
        )
    try:
        (run,) = gather(store).runs
    finally:
        store.close()
    fields = dict(run.hover_fields())
    assert fields["gpu_name"] == "NVIDIA H200" and fields["cpu_model"] == "Xeon"
    assert "nvml" not in fields
    assert fields["SGLang"] == "0.5.23" and fields["runner"]
    assert "SGLang commit" not in fields  # not recorded: left out


def test_only_complete_runs_of_the_kind_are_shown(tmp_path: Path) -> None:
    path = write_nights(tmp_path / "h.sqlite", count=3)
    store = HistoryStore.open(path)
    try:
        store.record(night(7), RunContext(run_profile="pr"))
        store.finish_run("run07")
        store.record(night(8), RunContext(run_profile="nightly"))  # never finished
        assert [r.run_id for r in gather(store).runs] == ["run00", "run01", "run02"]
        assert len(gather(store, kind=None).runs) == 4
    finally:
        store.close()


def test_the_store_is_read_in_two_queries_however_many_runs(store_path: Path) -> None:
    store = HistoryStore.open(store_path)
    statements: list[str] = []
    sa.event.listen(
        store.engine,
        "before_cursor_execute",
        lambda _c, _cur, statement, *_: statements.append(statement),
    )
    try:
        gather(store)
    finally:
        store.close()
    assert [s.split()[0] for s in statements if s.startswith("SELECT")] == ["SELECT"] * 2
