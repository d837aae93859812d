"""pytest_specperf.results.artifacts: what a finished run leaves beside results.json."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.results.artifacts import PLOTS_LEFT_OUT, write_run_artifacts
from pytest_specperf.results.schema import RunResults
from pytest_specperf.results.store import REPORT_FILE
from tests.unit.results_samples import sample_run


def _results() -> RunResults:
    return RunResults(
        run_id="r",
        started_at="2026-12-07T04:00:00+00:00",
        tool_version="0",
        runs=[sample_run(depth, interval=True) for depth in (1, 3)],
    )


def test_a_run_leaves_its_plots_the_report_and_the_benchmark_files(tmp_path: Path) -> None:
    problems = write_run_artifacts(_results(), tmp_path)

    assert problems == []
    assert list(tmp_path.glob("*.png"))
    assert (tmp_path / REPORT_FILE).is_file()
    assert list(tmp_path.glob("benchmark-*.json"))


def test_without_plots_no_picture_is_drawn_and_the_report_says_why(tmp_path: Path) -> None:
    problems = write_run_artifacts(_results(), tmp_path, plots=False)

    assert problems == []
    assert not list(tmp_path.glob("*.png"))
    assert PLOTS_LEFT_OUT in (tmp_path / REPORT_FILE).read_text()
    assert list(tmp_path.glob("benchmark-*.json"))
