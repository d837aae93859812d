"""pytest_specperf.results.plots: PNGs beside report.md, and a run without matplotlib."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

from pytest_specperf.results import plots
from pytest_specperf.results.plots import PLOTS_HINT, write_plots
from pytest_specperf.results.schema import DepthRun
from tests.unit.results_samples import sample_point, sample_run, sample_verdict

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _runs_with_verdicts() -> list[DepthRun]:
    return [
        sample_run(
            depth,
            interval=True,
            verdicts=[
                sample_verdict(depth, 1, "agg_tok_s", "pass"),
                sample_verdict(depth, 4, "per_req_tok_s", "regression"),
            ],
        )
        for depth in (1, 2, 3)
    ]


def test_every_plot_is_a_png_beside_the_report(tmp_path: Path) -> None:
    """With points, intervals, KV, accept length and floors, all five plots are written."""
    written = write_plots(_runs_with_verdicts(), tmp_path)
    files = [plot.file for plot in written.plots]
    assert files == [
        "throughput.png",
        "pareto.png",
        "kv-capacity.png",
        "floors.png",
        "accept-length.png",
    ]
    assert written.notes == []
    for name in files:
        assert (tmp_path / name).read_bytes().startswith(PNG_MAGIC)


def test_floors_plot_needs_verdicts_and_says_so(tmp_path: Path) -> None:
    """Without verdicts there is no floor to draw: the note says why; no old floors.png is left."""
    (tmp_path / "floors.png").write_bytes(PNG_MAGIC)  # an earlier run's
    written = write_plots([sample_run(3)], tmp_path)
    assert "floors.png" not in [plot.file for plot in written.plots]
    assert written.notes == ["plots: floors.png not drawn: no verdict with a floor was recorded"]
    assert written.problems == []
    assert not (tmp_path / "floors.png").exists()


def test_no_points_no_plots(tmp_path: Path) -> None:
    """Runs without a measured point draw nothing."""
    run = DepthRun(depth=3, profile="p", backend="sim", hardware="h", workload={})
    assert write_plots([run], tmp_path).plots == []
    assert list(tmp_path.iterdir()) == []


def test_without_matplotlib_it_says_how_to_get_plots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without matplotlib nothing is drawn and the one note names the extra to install."""
    monkeypatch.setattr(plots, "matplotlib_available", lambda: False)
    written = write_plots(_runs_with_verdicts(), tmp_path)
    assert written.plots == [] and written.notes == written.problems == [PLOTS_HINT]
    assert 'pip install "pytest-specperf[plots]"' in PLOTS_HINT
    assert list(tmp_path.iterdir()) == []


def test_a_failing_plot_becomes_a_note_and_the_others_are_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error while drawing one plot is reported as a note; it does not stop the rest."""

    def broken(runs: list[DepthRun]) -> None:
        raise ValueError("bad data")

    monkeypatch.setattr(plots, "_pareto_figure", broken)
    written = write_plots([sample_run(3)], tmp_path)
    assert written.problems == ["plots: pareto.png not drawn: ValueError: bad data"]
    assert "throughput.png" in [plot.file for plot in written.plots]


def test_pareto_labels_merge_points_that_sit_on_each_other() -> None:
    """Saturated points (same place on the chart) share one label: C=16/32."""
    points = [sample_point(1, 100.0), sample_point(16, 1000.0), sample_point(32, 1010.0)]
    points[2].per_req_tok_s = points[1].per_req_tok_s
    labels = [label for label, _, _ in plots._pareto_labels(points, 1010.0, 100.0)]
    assert labels == ["C=1", "C=16/32"]


def _legend_labels(figure: Figure) -> list[str]:
    legends = [*figure.legends, *(ax.get_legend() for ax in figure.axes if ax.get_legend())]
    return [text.get_text() for legend in legends for text in legend.get_texts()]


def test_floors_plot_draws_what_the_gate_judged(tmp_path: Path) -> None:
    """floors.png comes from the verdicts: per point the judged figure (bar) with its
    interval, the floor and the baseline; a regression is marked."""
    figure = plots._floors_figure(_runs_with_verdicts())
    assert figure is not None
    agg_ax = figure.axes[0]
    heights = [bar.get_height() for bar in agg_ax.patches]
    assert heights == [90.0, 90.0, 90.0]  # the verdicts' measured figure, one per depth
    assert any(isinstance(c, ErrorbarContainer) for c in agg_ax.containers)
    labels = _legend_labels(figure)
    for label in ("floor", "baseline", "95% interval", "below floor (regression)"):
        assert label in labels
    assert "improvement" not in labels
    plt.close(figure)


@pytest.mark.parametrize("repeated", [True, False])
def test_throughput_plot_draws_intervals_only_from_repeats(repeated: bool) -> None:
    """Repeated points get error bars from their intervals; single samples get none."""
    figure = plots._throughput_figure([sample_run(3, interval=repeated)])
    agg_ax = figure.axes[0]
    bars = [c for c in agg_ax.containers if isinstance(c, ErrorbarContainer)]
    assert [c.has_yerr for c in bars] == [repeated]
    plt.close(figure)


def test_every_plot_a_run_can_draw_is_listed_in_plot_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PLOT_FILES names every PNG write_plots can draw: a new run sets exactly those of the
    previous run aside (results/previous_run.py), so a plot missing from it would stay
    beside the next run's report."""
    drawers = [
        "_throughput_figure",
        "_pareto_figure",
        "_capacity_figure",
        "_floors_figure",
        "_accept_figure",
        "speedup_figure",
        "position_acceptance_figure",
        "recommendation_figure",
        "ab_forest_figure",
    ]
    for name in drawers:
        monkeypatch.setattr(plots, name, lambda *args, **kwargs: plt.figure())
    saved: list[str] = []
    monkeypatch.setattr(plots, "_save", lambda figure, path: saved.append(path.name))
    written = write_plots(_runs_with_verdicts(), tmp_path)
    plt.close("all")
    assert sorted(saved) == sorted(plots.PLOT_FILES) == sorted(p.file for p in written.plots)
