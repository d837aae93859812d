"""The site's charts as Plotly figures (plain JSON: ``{"data": [...], "layout": {...}}``).

Plotly draws them in the browser from the plotly.min.js shipped beside the pages. A trace
over runs carries the runs' indices as ``customdata``; the page's script fills its x (the
run's start time) and its hover text (run id, commit, SGLang version, runner, fingerprint)
from the one table of runs on the page, so a store of 1,000 runs does not repeat them in
every trace.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pytest_specperf.history.changes import step_text
from pytest_specperf.history.site.data import (
    ChangeView,
    Panel,
    PointView,
    RunView,
    SpeculationGroup,
)
from pytest_specperf.results.formats import ratio_of, relative_change

Figure = dict[str, Any]
# One colour per concurrency (by its place in the panel's sorted list), the same in every
# chart of a page: Plotly's default sequence.
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
CHANGE_COLOR = "#c0392b"
DENSE_RUNS = 150
METRIC_TITLES = {
    "agg_tok_s": "Aggregate tok/s",
    "per_req_tok_s": "Per-request tok/s",
    "goodput_tok_s": "Goodput tok/s",
    "speedup_agg": "Speedup over the control (aggregate)",
}


def figure_size(value: float | None) -> float | None:
    """A figure kept to 4 significant digits: what a chart can show, a quarter of the bytes."""
    if value is None:
        return None
    return float(f"{value:.4g}")


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _layout(title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "title": {"text": title, "x": 0.01, "font": {"size": 15}},
        "xaxis": {"type": "date", "title": {"text": "run start (UTC)"}},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero", "separatethousands": True},
        "hovermode": "closest",
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.25},
        "margin": {"l": 64, "r": 16, "t": 56, "b": 40},
        "height": 360,
        "font": {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 12},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
    }
    layout["xaxis"].update({"gridcolor": "#eef0f3", "linecolor": "#c9ced6"})
    layout["yaxis"].update({"gridcolor": "#eef0f3", "linecolor": "#c9ced6", "automargin": True})
    layout.update(extra)
    return layout


def runs_trace(
    name: str,
    runs: Sequence[int],
    values: Sequence[float | None],
    *,
    y_format: str = ",.1f",
    unit: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """A line over runs: x and hover text are filled in the page from its table of runs."""
    trace: dict[str, Any] = {
        "type": "scatter",
        # Markers on a long series only hide the line (and slow the page).
        "mode": "lines+markers" if len(runs) <= DENSE_RUNS else "lines",
        "name": name,
        "customdata": list(runs),
        "y": [figure_size(v) for v in values],
        "marker": {"size": 5},
        "line": {"width": 1.6},
        "hovertemplate": f"<b>{html.escape(name)}</b>: %{{y:{y_format}}}{unit}<br>%{{text}}"
        "<extra></extra>",
    }
    trace.update(extra)
    return trace


def concurrency_trace(
    index: int,
    concurrency: int,
    items: Sequence[Any],
    value_of: Callable[[Any], float | None],
    *,
    width: float = 1.6,
    **extra: Any,
) -> dict[str, Any]:
    """One concurrency's line over runs, in the colour of its ``index``: ``items`` (each with
    its ``run``) oldest first, ``value_of`` an item's figure; ``extra`` as for `runs_trace`."""
    style: dict[str, Any] = {
        "line": {"width": width, "color": color(index)},
        "marker": {"size": 5, "color": color(index)},
    }
    runs = [item.run for item in items]
    return runs_trace(
        f"C={concurrency}", runs, [value_of(item) for item in items], **style, **extra
    )


def _interval_bars(
    points: Sequence[PointView], values: Sequence[float | None], get: Callable[[PointView], Any]
) -> dict[str, Any] | None:
    intervals = [get(p) for p in points]
    if not any(intervals):
        return None
    above = [
        figure_size(i[1] - v) if i and v is not None else 0
        for i, v in zip(intervals, values, strict=True)
    ]
    below = [
        figure_size(v - i[0]) if i and v is not None else 0
        for i, v in zip(intervals, values, strict=True)
    ]
    return {
        "type": "data",
        "symmetric": False,
        "array": above,
        "arrayminus": below,
        "thickness": 1,
        "width": 2,
    }


def _by_concurrency(panel: Panel) -> list[tuple[int, int, list[PointView]]]:
    """(colour index, concurrency, its points oldest first)."""
    return [
        (index, concurrency, [p for p in panel.points if p.concurrency == concurrency])
        for index, concurrency in enumerate(panel.concurrencies)
    ]


def change_marks(changes: Iterable[ChangeView]) -> dict[str, list[dict[str, Any]]]:
    """Each change point's first run a dashed line, labelled with its commit (a link where
    the repository is known) and the step of each concurrency that changed there."""
    by_run: dict[int, list[ChangeView]] = {}
    for change in changes:
        by_run.setdefault(change.run.index, []).append(change)
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for number, run_index in enumerate(sorted(by_run)):
        found = sorted(by_run[run_index], key=lambda c: c.concurrency)
        run = found[0].run
        label = html.escape(run.commit_label)
        if run.commit_url:
            label = f'<a href="{html.escape(run.commit_url)}">{label}</a>'
        steps = "<br>".join(f"C={c.concurrency} {relative_change(ratio_of(c.step))}" for c in found)
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": run.when,
                "x1": run.when,
                "y0": 0,
                "y1": 1,
                "line": {"color": CHANGE_COLOR, "width": 1.5, "dash": "dash"},
            }
        )
        annotations.append(
            {
                "x": run.when,
                "xref": "x",
                # Alternate heights, so that two change points close together stay readable.
                "y": 1.0 if number % 2 == 0 else 0.45,
                "yref": "paper",
                "xanchor": "left",
                "yanchor": "top",
                "showarrow": False,
                "align": "left",
                "font": {"color": CHANGE_COLOR, "size": 11},
                "bgcolor": "rgba(255,255,255,0.85)",
                "text": f"{label}<br>{steps}",
                "hovertext": html.escape(run.run_id)
                + "<br>"
                + "<br>".join(
                    f"C={c.concurrency}: {step_text(c.step, c.step_low, c.step_high)}"
                    + (f", {c.attribution}" if c.attribution else "")
                    for c in found
                ),
            }
        )
    return {"shapes": shapes, "annotations": annotations}


def metric_figure(panel: Panel, metric: str) -> Figure | None:
    """One throughput metric per concurrency over runs, its intervals, its change points."""
    getters: dict[str, tuple[Callable[[PointView], Any], Callable[[PointView], Any] | None]] = {
        "agg_tok_s": (lambda p: p.agg_tok_s, lambda p: p.agg_interval),
        "per_req_tok_s": (lambda p: p.per_req_tok_s, lambda p: p.per_req_interval),
        "goodput_tok_s": (lambda p: p.goodput_tok_s, None),
        "speedup_agg": (lambda p: p.speedup_agg, None),
    }
    value_of, interval_of = getters[metric]
    traces = []
    for index, concurrency, points in _by_concurrency(panel):
        shown = [p for p in points if value_of(p) is not None]
        if not shown:
            continue
        values = [value_of(p) for p in shown]
        trace = concurrency_trace(
            index,
            concurrency,
            shown,
            value_of,
            y_format=".3f" if metric == "speedup_agg" else ",.1f",
            unit="x" if metric == "speedup_agg" else " tok/s",
        )
        bars = _interval_bars(shown, values, interval_of) if interval_of else None
        if bars is not None:
            trace["error_y"] = {**bars, "color": color(index)}
        traces.append(trace)
    if not traces:
        return None
    marks = change_marks(c for c in panel.changes if c.metric == metric)
    unit = "x" if metric == "speedup_agg" else "tok/s"
    layout = _layout(METRIC_TITLES[metric], unit, **marks)
    if metric == "speedup_agg":
        layout["yaxis"]["rangemode"] = "normal"
        layout["shapes"].append(_reference_line(1.0))
    return {"data": traces, "layout": layout}


def _reference_line(y: float) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "yref": "y",
        "y0": y,
        "y1": y,
        "line": {"color": "#7f8c8d", "width": 1, "dash": "dot"},
    }


def latency_figure(panel: Panel, which: str) -> Figure | None:
    """TTFT or ITL percentiles (p50 solid, p99 dotted) per concurrency, in ms."""
    traces = []
    for index, concurrency, points in _by_concurrency(panel):
        found = [(p, getattr(p, which)) for p in points if getattr(p, which) is not None]
        if not found:
            continue
        for percentile, dash in (("p50", "solid"), ("p99", "dot")):
            traces.append(
                runs_trace(
                    f"C={concurrency} {percentile}",
                    [p.run for p, _ in found],
                    [getattr(value, percentile) for _, value in found],
                    y_format=",.1f",
                    unit=" ms",
                    legendgroup=f"C={concurrency}",
                    line={"width": 1.4, "color": color(index), "dash": dash},
                    marker={"size": 4, "color": color(index)},
                )
            )
    if not traces:
        return None
    title = "Time to first token" if which == "ttft_ms" else "Inter-token latency"
    return {"data": traces, "layout": _layout(f"{title} (p50 solid, p99 dotted)", "ms")}


def simple_figure(
    panel: Panel,
    title: str,
    y_title: str,
    value_of: Callable[[PointView], float | None],
    *,
    y_format: str = ",.2f",
    unit: str = "",
) -> Figure | None:
    traces = []
    for index, concurrency, points in _by_concurrency(panel):
        shown = [p for p in points if value_of(p) is not None]
        if shown:
            trace = concurrency_trace(
                index, concurrency, shown, value_of, y_format=y_format, unit=unit
            )
            traces.append(trace)
    if not traces:
        return None
    return {"data": traces, "layout": _layout(title, y_title)}


def position_figure(panel: Panel) -> Figure | None:
    """Acceptance of each draft position over runs (the mean over the run's concurrencies)."""
    by_run: dict[int, list[tuple[float, ...]]] = {}
    for point in panel.points:
        if point.position_accept:
            by_run.setdefault(point.run, []).append(point.position_accept)
    if not by_run:
        return None
    width = max(len(rates) for rows in by_run.values() for rates in rows)
    traces = []
    for position in range(width):
        runs, values = [], []
        for run in sorted(by_run):
            rates = [r[position] for r in by_run[run] if len(r) > position]
            if rates:
                runs.append(run)
                values.append(sum(rates) / len(rates))
        traces.append(
            runs_trace(
                f"position {position + 1}",
                runs,
                values,
                y_format=".3f",
                line={"width": 1.6, "color": color(position)},
                marker={"size": 5, "color": color(position)},
            )
        )
    layout = _layout("Acceptance per draft position (mean over concurrencies)", "accepted share")
    layout["yaxis"]["range"] = [0, 1.02]
    return {"data": traces, "layout": layout}


def kv_figure(panel: Panel) -> Figure | None:
    """The server's KV capacity (tokens) and its running-request limit, per run."""
    per_run: dict[int, PointView] = {}
    for point in panel.points:
        if point.kv_max_total_tokens is not None:
            per_run.setdefault(point.run, point)
    if not per_run:
        return None
    runs = sorted(per_run)
    traces = [
        runs_trace(
            "KV tokens",
            runs,
            [per_run[r].kv_max_total_tokens for r in runs],
            y_format=",.0f",
            line={"width": 1.6, "color": color(0), "shape": "hv"},
        )
    ]
    running = [r for r in runs if per_run[r].max_running_requests is not None]
    if running:
        traces.append(
            runs_trace(
                "max running requests",
                running,
                [per_run[r].max_running_requests for r in running],
                y_format=",.0f",
                yaxis="y2",
                line={"width": 1.4, "color": color(1), "dash": "dot", "shape": "hv"},
            )
        )
    layout = _layout("KV capacity", "max total tokens")
    layout["yaxis2"] = {
        "title": {"text": "max running requests"},
        "overlaying": "y",
        "side": "right",
        "rangemode": "tozero",
        "showgrid": False,
        "tickformat": ",d",
    }
    layout["margin"]["r"] = 64
    return {"data": traces, "layout": layout}


def series_figures(panel: Panel) -> list[tuple[str, Figure]]:
    """Every chart of a panel's page, by anchor name, leaving out those with nothing to show."""
    candidates: list[tuple[str, Figure | None]] = [
        ("agg", metric_figure(panel, "agg_tok_s")),
        ("per-req", metric_figure(panel, "per_req_tok_s")),
        ("goodput", metric_figure(panel, "goodput_tok_s")),
        ("speedup", metric_figure(panel, "speedup_agg")),
        ("ttft", latency_figure(panel, "ttft_ms")),
        ("itl", latency_figure(panel, "itl_ms")),
        (
            "accept-length",
            simple_figure(
                panel,
                "Accept length (tokens per verify step)",
                "tokens",
                lambda p: p.accept_length,
                y_format=".3f",
            ),
        ),
        ("positions", position_figure(panel)),
        (
            "step-time",
            simple_figure(
                panel,
                "Step time: tokens per verify step / per-request tok/s",
                "ms per verify step",
                lambda p: p.step_ms,
                y_format=",.2f",
                unit=" ms",
            ),
        ),
        ("kv", kv_figure(panel)),
    ]
    return [(name, figure) for name, figure in candidates if figure is not None]


def sparkline(panel: Panel) -> Figure:
    """The index card's small chart: aggregate tok/s per concurrency, no axes."""
    traces = []
    for index, concurrency, points in _by_concurrency(panel):
        shown = [p for p in points if p.agg_tok_s is not None]
        trace = concurrency_trace(
            index,
            concurrency,
            shown,
            lambda p: p.agg_tok_s,
            width=1.4,
            unit=" tok/s",
            mode="lines",
            meta=concurrency,
        )
        traces.append(trace)
    marks = change_marks(c for c in panel.changes if c.metric == "agg_tok_s")
    return {
        "data": traces,
        "layout": {
            "height": 90,
            "margin": {"l": 2, "r": 2, "t": 4, "b": 4},
            "showlegend": False,
            "xaxis": {"type": "date", "visible": False},
            "yaxis": {"visible": False, "rangemode": "tozero"},
            "hovermode": "closest",
            "paper_bgcolor": "rgba(0,0,0,0)",
            "plot_bgcolor": "rgba(0,0,0,0)",
            "shapes": marks["shapes"],
        },
    }


def speedup_figures(group: SpeculationGroup) -> list[tuple[int, Figure]]:
    """Per depth: the speedup over the control per concurrency over runs, 1.0 marked."""
    figures = []
    for depth in sorted({s.depth for s in group.speedups}):
        items = [s for s in group.speedups if s.depth == depth]
        traces = []
        for index, concurrency in enumerate(sorted({s.concurrency for s in items})):
            shown = sorted((s for s in items if s.concurrency == concurrency), key=lambda s: s.run)
            trace = concurrency_trace(
                index, concurrency, shown, lambda s: s.agg, y_format=".3f", unit="x"
            )
            traces.append(trace)
        layout = _layout(f"steps={depth}: speedup over no speculation (agg tok/s)", "x")
        layout["yaxis"]["rangemode"] = "normal"
        layout["shapes"] = [_reference_line(1.0)]
        figures.append((depth, {"data": traces, "layout": layout}))
    return figures


NEVER_STOPS = "paid at every C"


def stops_paying_figure(group: SpeculationGroup) -> Figure | None:
    """Per pair of depths: the lowest concurrency from which the deeper one stops paying
    (the top row: it paid at every concurrency measured)."""
    pairs = sorted({(s.shallower, s.deeper) for s in group.stops_paying})
    if not pairs:
        return None
    traces = []
    for index, (shallower, deeper) in enumerate(pairs):
        items = sorted(
            (s for s in group.stops_paying if (s.shallower, s.deeper) == (shallower, deeper)),
            key=lambda s: s.run,
        )
        base = "no speculation" if shallower == 0 else f"steps {shallower}"
        trace = runs_trace(
            f"steps {deeper} over {base}",
            [s.run for s in items],
            [None for _ in items],
            line={"width": 1.6, "color": color(index), "shape": "hv"},
            marker={"size": 7, "color": color(index)},
        )
        trace["y"] = [NEVER_STOPS if s.concurrency is None else f"C={s.concurrency}" for s in items]
        trace["hovertemplate"] = (
            f"<b>{html.escape(trace['name'])}</b> stops paying: %{{y}}<br>%{{text}}<extra></extra>"
        )
        traces.append(trace)
    levels = sorted({s.concurrency for s in group.stops_paying if s.concurrency is not None})
    layout = _layout("Where each extra depth stops paying", "from concurrency")
    layout["yaxis"] = {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": [*(f"C={c}" for c in levels), NEVER_STOPS],
        "title": {"text": "stops paying from"},
        "gridcolor": "#eef0f3",
        "automargin": True,
    }
    layout["height"] = 320
    layout["legend"]["y"] = -0.4
    return {"data": traces, "layout": layout}


def schedule_figure(group: SpeculationGroup, runs: Sequence[RunView]) -> Figure | None:
    """The recommended depth at each concurrency, run by run (a heatmap)."""
    schedules = [s for s in group.schedules if s.depth_at]
    if not schedules:
        return None
    concurrencies = sorted({c for s in schedules for c, _ in s.depth_at})
    x = [runs[s.run].when for s in schedules]
    z = [[dict(s.depth_at).get(concurrency) for s in schedules] for concurrency in concurrencies]
    text = [[html.escape(runs[s.run].run_id) for s in schedules] for _ in concurrencies]
    depths = sorted({d for s in schedules for _, d in s.depth_at})
    trace = {
        "type": "heatmap",
        "x": x,
        "y": [f"C={c}" for c in concurrencies],
        "z": z,
        "text": text,
        "colorscale": "Blues",
        "reversescale": True,
        "zmin": 0,
        "zmax": max(max(depths), 1),
        "texttemplate": "%{z}",
        "xgap": 1,
        "ygap": 1,
        "colorbar": {"title": {"text": "steps"}, "dtick": 1},
        "hovertemplate": "%{y}: steps %{z}<br>run %{text}<br>%{x}<extra></extra>",
    }
    layout = _layout("Recommended depth (steps) at each concurrency", "concurrency")
    layout["yaxis"] = {"type": "category", "title": {"text": "concurrency"}, "automargin": True}
    layout["showlegend"] = False
    layout["height"] = 120 + 36 * len(concurrencies)
    return {"data": [trace], "layout": layout}
