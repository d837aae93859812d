"""pytest_specperf.results.speculation_plots: the speedup and per-position figures."""

from __future__ import annotations

from pathlib import Path

import matplotlib

from pytest_specperf.results.plots import write_plots
from pytest_specperf.results.schema import DepthRun
from pytest_specperf.results.speculation_plots import position_acceptance_figure, speedup_figure
from tests.support.points import make_point

matplotlib.use("Agg", force=True)


def run(depth: int, agg: float, rates: list[float]) -> DepthRun:
    point = make_point(1, agg)
    return DepthRun(
        depth=depth, profile="p", backend="sim", hardware="h", workload={},
        points=[point], position_accept_rate=rates,
    )  # fmt: skip


def test_figures_are_drawn_from_a_run_with_the_control(tmp_path: Path) -> None:
    """With depth 0 and a speculative depth, both figures draw and save as PNG."""
    runs = [run(0, 100.0, []), run(3, 250.0, [0.9, 0.8, 0.7])]
    for name, figure in (
        ("s.png", speedup_figure(runs)),
        ("p.png", position_acceptance_figure(runs)),
    ):
        assert figure is not None
        figure.savefig(tmp_path / name)
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG")


def test_nothing_to_draw_without_control_or_histograms() -> None:
    """No control: no speedup figure; no per-position rates: no acceptance figure."""
    runs = [run(1, 100.0, []), run(3, 250.0, [])]
    assert speedup_figure(runs) is None
    assert position_acceptance_figure(runs) is None


def test_write_plots_saves_both_pngs_and_names_them(tmp_path: Path) -> None:
    """With the control in the run, speedup.png and position-acceptance.png land in out."""
    written = write_plots([run(0, 100.0, []), run(3, 250.0, [0.9])], tmp_path)
    files = [plot.file for plot in written.plots]
    assert "speedup.png" in files and "position-acceptance.png" in files
    assert (tmp_path / "speedup.png").read_bytes().startswith(b"\x89PNG")


def test_write_plots_removes_a_stale_figure_when_nothing_is_drawn(tmp_path: Path) -> None:
    """An earlier run's speedup.png does not survive a run without the control."""
    (tmp_path / "speedup.png").write_bytes(b"old")
    written = write_plots([run(3, 250.0, [])], tmp_path)
    assert "speedup.png" not in [plot.file for plot in written.plots]
    assert not (tmp_path / "speedup.png").exists()
