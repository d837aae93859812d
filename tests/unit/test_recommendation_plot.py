"""results.recommendation_plot: recommendation.png beside the report."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.gate.recommend import recommend
from pytest_specperf.results.recommendation_plot import write_recommendation_plot
from tests.unit.test_recommend import DEEP, SHALLOW


def test_plot_is_a_png_when_there_is_a_schedule(tmp_path: Path) -> None:
    path, problem = write_recommendation_plot([SHALLOW, DEEP], recommend([SHALLOW, DEEP]), tmp_path)
    assert problem is None and path == tmp_path / "recommendation.png"
    assert path.read_bytes().startswith(b"\x89PNG")


def test_no_schedule_draws_nothing_and_removes_an_older_plot(tmp_path: Path) -> None:
    (tmp_path / "recommendation.png").write_bytes(b"old")
    assert write_recommendation_plot([SHALLOW], None, tmp_path) == (None, None)
    assert not (tmp_path / "recommendation.png").exists()
