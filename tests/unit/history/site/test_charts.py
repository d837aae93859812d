"""history/site/charts.py: the Plotly figures built from the gathered data."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.history.site.charts import (
    DENSE_RUNS,
    metric_figure,
    runs_trace,
    schedule_figure,
    series_figures,
    sparkline,
    stops_paying_figure,
)
from pytest_specperf.history.site.data import SiteData, gather
from pytest_specperf.history.store import HistoryStore
from tests.support.step_nights import STEP_AT


def _site(path: Path, repo_url: str | None = None) -> SiteData:
    store = HistoryStore.open(path)
    try:
        return gather(store, repo_url=repo_url)
    finally:
        store.close()


def test_throughput_has_a_trace_per_concurrency_with_its_intervals(store_path: Path) -> None:
    panel = _site(store_path).panels[1]
    figure = metric_figure(panel, "agg_tok_s")
    assert figure is not None
    assert [t["name"] for t in figure["data"]] == ["C=1", "C=4"]
    trace = figure["data"][0]
    assert trace["customdata"] == list(range(10))  # run indices: the page fills x and hover
    assert trace["error_y"]["array"][0] > 0 and trace["error_y"]["arrayminus"][0] > 0


def test_a_change_point_is_a_line_at_its_first_run_labelled_with_its_linked_commit(
    store_path: Path,
) -> None:
    site = _site(store_path, repo_url="https://github.com/o/r")
    figure = metric_figure(site.panels[1], "agg_tok_s")
    assert figure is not None
    first = site.runs[STEP_AT]
    (line,) = figure["layout"]["shapes"]
    assert line["x0"] == first.when and line["line"]["dash"] == "dash"
    (label,) = figure["layout"]["annotations"]
    assert f'<a href="https://github.com/o/r/commit/{first.commit}">' in label["text"]
    assert "C=1 -15.0%" in label["text"] and "C=4 -15.0%" in label["text"]


def test_every_chart_of_a_speculative_series_is_drawn(store_path: Path) -> None:
    names = [name for name, _ in series_figures(_site(store_path).panels[1])]
    assert names == [
        "agg",
        "per-req",
        "speedup",
        "ttft",
        "itl",
        "accept-length",
        "positions",
        "step-time",
        "kv",
    ]


def test_the_control_has_no_acceptance_charts(store_path: Path) -> None:
    names = [name for name, _ in series_figures(_site(store_path).panels[0])]
    assert "accept-length" not in names and "positions" not in names and "speedup" not in names
    assert "step-time" in names


def test_long_series_are_drawn_as_lines_without_markers() -> None:
    assert runs_trace("C=1", [0, 1], [1.0, 2.0])["mode"] == "lines+markers"
    many = list(range(DENSE_RUNS + 1))
    assert runs_trace("C=1", many, [1.0] * len(many))["mode"] == "lines"


def test_sparkline_traces_name_their_concurrency_for_the_filter(store_path: Path) -> None:
    figure = sparkline(_site(store_path).panels[1])
    assert [t["meta"] for t in figure["data"]] == [1, 4]


def test_stops_paying_puts_every_c_on_its_own_row(store_path: Path) -> None:
    site = _site(store_path)
    figure = stops_paying_figure(site.speculation[0])
    assert figure is not None
    (trace,) = figure["data"]
    assert trace["y"] == ["paid at every C"] * STEP_AT + ["C=4"] * 5
    assert figure["layout"]["yaxis"]["categoryarray"] == ["C=4", "paid at every C"]


def test_the_schedule_is_a_depth_per_concurrency_and_run(store_path: Path) -> None:
    site = _site(store_path)
    figure = schedule_figure(site.speculation[0], site.runs)
    assert figure is not None
    (heatmap,) = figure["data"]
    assert heatmap["y"] == ["C=1", "C=4"] and heatmap["z"] == [[3] * 10, [3] * 10]
