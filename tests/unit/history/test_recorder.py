"""The end of a nightly run with a history store: marked complete, its section in report.md."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.history.recorder import HistoryRecorder
from pytest_specperf.history.rows import RunContext
from tests.support.history_writer import sample_point, sample_results

NIGHTLY = RunContext(run_profile="nightly")


def night(recorder: HistoryRecorder, number: int, agg: float) -> None:
    run_id = f"n{number:02d}"
    recorder.start(run_id, f"night{number:02d}")
    recorder.record(sample_results(run_id, [sample_point(16, agg)], commit=f"night{number:02d}"))


def test_the_night_that_shows_a_change_reports_it_as_new(tmp_path: Path) -> None:
    recorder = HistoryRecorder(str(tmp_path / "h.sqlite"), NIGHTLY)
    (tmp_path / "report.md").write_text("# report\n")
    for number, agg in enumerate([1000, 1001, 999, 1000, 900, 901], start=1):
        night(recorder, number, agg)
        outcome = recorder.finish(f"n{number:02d}", complete=True, out_dir=tmp_path)
    assert outcome.new_changes
    report = (tmp_path / "report.md").read_text()
    assert report.startswith("# report\n")
    assert "## Since last night / change points" in report
    assert "New with this run:" in report and "night05" in report


def test_an_interrupted_run_stays_incomplete(tmp_path: Path) -> None:
    recorder = HistoryRecorder(str(tmp_path / "h.sqlite"), NIGHTLY)
    night(recorder, 1, 1000.0)
    outcome = recorder.finish("n01", complete=False, out_dir=tmp_path)
    assert not outcome.new_changes
    assert [r["status"] for r in recorder.store.runs()] == ["incomplete"]
