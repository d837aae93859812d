"""results.recommendation_plot: recommendation.png, drawn by write_plots beside the report."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.gate.recommend import recommend
from pytest_specperf.results.plots import write_plots
from pytest_specperf.results.recommendation_plot import recommendation_figure
from tests.unit.gate.test_recommend import DEEP, SHALLOW


def test_plot_is_a_png_when_there_is_a_schedule(tmp_path: Path) -> None:
    written = write_plots([SHALLOW, DEEP], tmp_path, recommend([SHALLOW, DEEP]))
    assert "recommendation.png" in [plot.file for plot in written.plots]
    assert (tmp_path / "recommendation.png").read_bytes().startswith(b"\x89PNG")


def test_no_schedule_draws_nothing() -> None:
    assert recommendation_figure([SHALLOW], None) is None


def test_no_schedule_removes_an_older_plot_without_a_note(tmp_path: Path) -> None:
    (tmp_path / "recommendation.png").write_bytes(b"old")
    written = write_plots([SHALLOW, DEEP], tmp_path, None)
    assert not (tmp_path / "recommendation.png").exists()
    assert not any("recommendation.png" in note for note in written.notes)
