"""PNG plots of a run, written beside report.md (matplotlib, the optional ``plots`` extra).

Every figure is drawn on a white background with the Agg backend (no display needed): the
throughput sweep, the Pareto view of per-request vs aggregate speed, what each depth costs in
KV capacity, measured vs floor per point, and the accept length per depth; with the control in
the run the speedup over it, with per-request histograms the acceptance per draft position, and
with a recommendation the schedule over each depth's throughput. Without matplotlib
``write_plots`` draws nothing and says how to get the plots.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_specperf.results import plot_style as style
from pytest_specperf.results.ab_plot import ab_forest_figure
from pytest_specperf.results.ab_report import AB_FOREST_PNG
from pytest_specperf.results.formats import METRIC_LABELS
from pytest_specperf.results.plot_style import Plot
from pytest_specperf.results.recommendation_plot import RECOMMENDATION_PNG, recommendation_figure
from pytest_specperf.results.schema import (
    AbComparison,
    DepthRun,
    Interval,
    PointMetrics,
    Recommendation,
)
from pytest_specperf.results.speculation_plots import (
    POSITION_ACCEPT_PNG,
    SPEEDUP_PNG,
    position_acceptance_figure,
    speedup_figure,
)
from pytest_specperf.results.stats import MIN_SAMPLES_FOR_INTERVAL, is_min_max

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOTS_HINT = 'plots: not drawn (matplotlib is not installed): pip install "pytest-specperf[plots]"'
THROUGHPUT_PNG = "throughput.png"
PARETO_PNG = "pareto.png"
CAPACITY_PNG = "kv-capacity.png"
FLOORS_PNG = "floors.png"
ACCEPT_PNG = "accept-length.png"
# Every PNG a run may draw beside report.md (a new run sets the previous run's aside).
PLOT_FILES = (
    THROUGHPUT_PNG,
    PARETO_PNG,
    CAPACITY_PNG,
    FLOORS_PNG,
    ACCEPT_PNG,
    SPEEDUP_PNG,
    POSITION_ACCEPT_PNG,
    RECOMMENDATION_PNG,
    AB_FOREST_PNG,
)
_DPI = 110


@dataclass(frozen=True)
class PlotsWritten:
    plots: list[Plot]
    # Why some or all plots were not drawn (one line each), for the report.
    notes: list[str]
    # The notes the user has to act on (no matplotlib, a plot that failed): for the terminal.
    problems: list[str] = field(default_factory=list)


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def write_plots(
    runs: Sequence[DepthRun],
    out_dir: Path,
    recommendation: Recommendation | None = None,
    ab: Sequence[AbComparison] = (),
) -> PlotsWritten:
    """Draw every plot the runs have data for into ``out_dir``; never raises for missing data."""
    if not matplotlib_available():
        return PlotsWritten([], [PLOTS_HINT], [PLOTS_HINT])
    ordered = sorted((run for run in runs if run.points), key=lambda run: run.depth)
    if not ordered:
        return PlotsWritten([], [])
    import matplotlib

    matplotlib.use("Agg", force=True)
    drawers: list[tuple[str, str, Callable[[list[DepthRun]], Figure | None]]] = [
        ("Throughput vs concurrency", THROUGHPUT_PNG, _throughput_figure),
        ("Per-request vs aggregate throughput (Pareto)", PARETO_PNG, _pareto_figure),
        ("KV capacity per depth", CAPACITY_PNG, _capacity_figure),
        ("Measured vs floor per point", FLOORS_PNG, _floors_figure),
        ("Accept length per depth", ACCEPT_PNG, _accept_figure),
        ("Speedup over no speculation", SPEEDUP_PNG, speedup_figure),
        ("Acceptance per draft position", POSITION_ACCEPT_PNG, position_acceptance_figure),
        (
            "Which depth at which load",
            RECOMMENDATION_PNG,
            lambda ordered: recommendation_figure(ordered, recommendation),
        ),
        ("A/B: change per point", AB_FOREST_PNG, lambda ordered: ab_forest_figure(ab)),
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Plot] = []
    notes: list[str] = []
    problems: list[str] = []
    for title, file_name, draw in drawers:
        # A picture of an earlier run in the same directory must not pass for this run's.
        (out_dir / file_name).unlink(missing_ok=True)
        try:
            figure = draw(ordered)
            if figure is None:
                # The optional figures (no control, no histograms, no recommendation in this
                # run) are left out without a note.
                if file_name in _MISSING:
                    notes.append(f"plots: {file_name} not drawn: {_MISSING[file_name]}")
                continue
            _save(figure, out_dir / file_name)
        except Exception as exc:  # a picture must never cost the run its report
            problem = f"plots: {file_name} not drawn: {type(exc).__name__}: {exc}"
            notes.append(problem)
            problems.append(problem)
            _close_all()
            continue
        written.append(Plot(title=title, file=file_name))
    return PlotsWritten(written, notes, problems)


def _close_all() -> None:
    import matplotlib.pyplot as plt

    plt.close("all")


_MISSING = {
    THROUGHPUT_PNG: "no point measured",
    PARETO_PNG: "no point with a per-request figure",
    CAPACITY_PNG: "no server reported its KV capacity",
    FLOORS_PNG: "no verdict with a floor was recorded",
    ACCEPT_PNG: "no accept length was measured",
}


def _save(figure: Figure, path: Path) -> None:
    import matplotlib.pyplot as plt

    # A figure-level legend sits above the panels: keep the panels below it.
    figure.tight_layout(rect=(0, 0, 1, 0.9) if figure.legends else (0, 0, 1, 1))
    # Written under a temporary name and renamed: a reader never sees half a PNG.
    partial = path.with_name(path.name + ".partial")
    figure.savefig(partial, format="png", dpi=_DPI, facecolor="white")
    plt.close(figure)
    partial.replace(path)


def _points(run: DepthRun) -> list[PointMetrics]:
    return sorted(run.points, key=lambda point: point.concurrency)


def _error_bars(
    values: Sequence[float | None], intervals: Sequence[Interval | None]
) -> list[list[float]] | None:
    """Asymmetric error bars from intervals; None when no point has one."""
    if all(interval is None for interval in intervals):
        return None
    below, above = [], []
    for value, interval in zip(values, intervals, strict=True):
        if value is None or interval is None:
            below.append(0.0)
            above.append(0.0)
        else:
            below.append(max(value - interval.low, 0.0))
            above.append(max(interval.high - value, 0.0))
    return [below, above]


def _throughput_figure(runs: list[DepthRun]) -> Figure:
    figure, (agg_ax, per_req_ax) = style.new_figure(columns=2)
    concurrencies = sorted({p.concurrency for run in runs for p in run.points})
    for run in runs:
        points = _points(run)
        xs = [p.concurrency for p in points]
        for ax, metric in ((agg_ax, "agg_tok_s"), (per_req_ax, "per_req_tok_s")):
            values: list[float | None] = [getattr(p, metric) for p in points]
            shown = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
            if not shown:
                continue
            errors = _error_bars(values, [p.intervals.get(metric) for p in points])
            ax.errorbar(
                [x for x, _ in shown],
                [v for _, v in shown],
                yerr=None if errors is None else _keep_shown(errors, values),
                capsize=4,
                **style.depth_style(run.depth),
            )
    if any(is_min_max(i) for run in runs for p in run.points for i in p.intervals.values()):
        figure.text(0.5, 0.005, f"error bars: {MIN_MAX_LABEL}", ha="center", fontsize=8)
    agg_ax.set_title("Aggregate throughput")
    agg_ax.set_ylabel("aggregate tok/s (all requests)")
    per_req_ax.set_title("Per-request throughput")
    per_req_ax.set_ylabel("per-request tok/s (mean over requests)")
    for ax in (agg_ax, per_req_ax):
        style.concurrency_axis(ax, concurrencies)
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(style.thousands())
        ax.legend(title="speculation depth")
    return figure


def _keep_shown(errors: list[list[float]], values: Sequence[float | None]) -> list[list[float]]:
    keep = [i for i, value in enumerate(values) if value is not None]
    return [[side[i] for i in keep] for side in errors]


def _pareto_figure(runs: list[DepthRun]) -> Figure | None:
    figure, (ax,) = style.new_figure(width=7.2)
    curves = [(run, [p for p in _points(run) if p.per_req_tok_s is not None]) for run in runs]
    curves = [(run, points) for run, points in curves if points]
    x_span = max((p.agg_tok_s for _, points in curves for p in points), default=0.0) or 1.0
    y_span = max((p.per_req_tok_s or 0.0 for _, points in curves for p in points), default=0.0)
    for run, points in curves:
        xs = [p.agg_tok_s for p in points]
        ys = [p.per_req_tok_s or 0.0 for p in points]
        ax.plot(
            xs,
            ys,
            **style.depth_style(run.depth),
        )
        for label, x, y in _pareto_labels(points, x_span, y_span or 1.0):
            ax.annotate(
                label,
                (x, y),
                textcoords="offset points",
                xytext=(5, 5),
                fontsize=8,
                color=style.depth_color(run.depth),
            )
    if not curves:
        import matplotlib.pyplot as plt

        plt.close(figure)
        return None
    ax.set_title("Per-request speed vs aggregate throughput (up and right is better)")
    ax.set_xlabel("aggregate tok/s (all requests)")
    ax.set_ylabel("per-request tok/s")
    # Room above and to the right for the "C=..." labels of the outermost points.
    ax.set_xlim(left=0, right=ax.get_xlim()[1] * 1.08)
    ax.set_ylim(bottom=0, top=ax.get_ylim()[1] * 1.06)
    ax.xaxis.set_major_formatter(style.thousands())
    ax.yaxis.set_major_formatter(style.thousands())
    ax.legend(title="speculation depth")
    return figure


def _pareto_labels(
    points: Sequence[PointMetrics], x_span: float, y_span: float
) -> list[tuple[str, float, float]]:
    """One "C=..." label per group of points that sit on top of each other.

    Past saturation, points of higher concurrency land where the last one did; their labels
    are merged ("C=16/32/64") instead of printed over each other.
    """
    labels: list[tuple[list[int], float, float]] = []
    for point in points:
        x, y = point.agg_tok_s, point.per_req_tok_s or 0.0
        if labels:
            _, first_x, first_y = labels[-1]
            if abs(x - first_x) < 0.08 * x_span and abs(y - first_y) < 0.05 * y_span:
                labels[-1][0].append(point.concurrency)
                continue
        labels.append(([point.concurrency], x, y))
    return [("C=" + "/".join(map(str, group)), x, y) for group, x, y in labels]


def _capacity_figure(runs: list[DepthRun]) -> Figure | None:
    known = [run for run in runs if run.server is not None]
    tokens = [(run.depth, run.server.max_total_num_tokens) for run in known if run.server]
    running = [(run.depth, run.server.max_running_requests) for run in known if run.server]
    if all(value is None for _, value in tokens + running):
        return None
    figure, (tokens_ax, running_ax) = style.new_figure(columns=2, width=5.2)
    for ax, pairs, ylabel, title in (
        (tokens_ax, tokens, "KV cache capacity (tokens)", "KV capacity (max_total_num_tokens)"),
        (running_ax, running, "max running requests", "Max running requests"),
    ):
        shown = [(depth, value) for depth, value in pairs if value is not None]
        labels = [f"steps={depth}" for depth, _ in shown]
        bars = ax.bar(
            labels,
            [value for _, value in shown],
            color=[style.depth_color(depth) for depth, _ in shown],
        )
        ax.bar_label(bars, labels=[f"{value:,}" for _, value in shown], fontsize=8)
        ax.set_title(title)
        ax.set_xlabel("speculation depth")
        ax.set_ylabel(ylabel)
        ax.ticklabel_format(axis="y", style="plain")
        ax.yaxis.set_major_formatter(style.thousands())
        ax.margins(y=0.15)
    return figure


def _floors_figure(runs: list[DepthRun]) -> Figure | None:
    """Per point, from the gate's verdicts: the figure it judged (the geometric mean of the
    samples) with their interval, the floor it was held to and the baseline."""
    metrics = ("agg_tok_s", "per_req_tok_s")
    judged = [
        v
        for run in runs
        for v in run.verdicts
        if v.metric in metrics and v.concurrency is not None and v.floor is not None
    ]
    if not judged:
        return None
    figure, axes = style.new_figure(columns=2)
    for ax, metric in zip(axes, metrics, strict=True):
        verdicts = sorted(
            (v for v in judged if v.metric == metric),
            key=lambda v: (v.depth, v.concurrency or 0),
        )
        positions = list(range(len(verdicts)))
        measured = [v.measured or 0.0 for v in verdicts]
        ax.bar(
            positions,
            measured,
            color=[style.depth_color(v.depth) for v in verdicts],
            edgecolor=[_OUTCOME_LOOK.get(v.outcome, ("none", ""))[0] for v in verdicts],
            hatch=[_OUTCOME_LOOK.get(v.outcome, ("none", ""))[1] for v in verdicts],
            linewidth=1.5,
        )
        errors = _error_bars([v.measured for v in verdicts], [v.interval for v in verdicts])
        if errors is not None:
            ax.errorbar(
                positions, measured, yerr=errors, fmt="none", ecolor="black", capsize=3, zorder=3
            )
        ax.scatter(
            positions,
            [v.floor or 0.0 for v in verdicts],
            marker="_",
            s=600,
            linewidths=2.5,
            color="black",
            zorder=4,
        )
        ax.scatter(
            positions,
            [v.baseline if v.baseline is not None else float("nan") for v in verdicts],
            marker="D",
            s=22,
            facecolor="white",
            edgecolor="#444444",
            zorder=5,
        )
        ax.set_xticks(positions)
        ax.set_xticklabels(
            [f"s{v.depth} C={v.concurrency}" for v in verdicts], rotation=45, ha="right", fontsize=8
        )
        label = METRIC_LABELS.get(metric, metric)
        ax.set_title(f"{label}: measured vs floor")
        ax.set_xlabel("point (speculation depth s, concurrency C)")
        repeated = any(len(v.samples) > 1 for v in verdicts)
        ax.set_ylabel(f"{label} (geometric mean of the samples)" if repeated else label)
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(style.thousands())
    _floors_legend(
        figure,
        sorted({v.depth for v in judged}),
        outcomes={v.outcome for v in judged},
        interval_level=next(
            (v.interval.level for v in judged if v.interval and not is_min_max(v.interval)),
            None,
        ),
        min_max=any(v.interval is not None and is_min_max(v.interval) for v in judged),
    )
    return figure


MIN_MAX_LABEL = (
    f"min-max of the samples where a point has fewer than {MIN_SAMPLES_FOR_INTERVAL} "
    "(too few for a 95% interval)"
)
_REGRESSION_RED = "#b00020"
_IMPROVEMENT_GREEN = "#1b7f3b"
# Outcome -> (bar edge colour, hatch); a pass is a plain bar.
_OUTCOME_LOOK = {
    "regression": (_REGRESSION_RED, "///"),
    "improvement": (_IMPROVEMENT_GREEN, "..."),
}


def _floors_legend(
    figure: Figure,
    depths: Sequence[int],
    *,
    outcomes: set[str],
    interval_level: float | None,
    min_max: bool = False,
) -> None:
    """One legend above both panels: bar colour = depth, floor, baseline, interval, and the
    look of a regression or an improvement when there is one."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = [
        Patch(color=style.depth_color(depth), label=style.depth_label(depth)) for depth in depths
    ]
    handles.append(Line2D([], [], color="black", linewidth=2.5, label="floor"))
    handles.append(
        Line2D(
            [],
            [],
            marker="D",
            linestyle="",
            markerfacecolor="white",
            markeredgecolor="#444444",
            label="baseline",
        )
    )
    if interval_level is not None:
        handles.append(
            Line2D([], [], color="black", marker="|", label=f"{interval_level:.0%} interval")
        )
    if min_max:
        handles.append(
            Line2D([], [], color="black", marker="|", label=MIN_MAX_LABEL, linestyle=":")
        )
    names = {"regression": "below floor (regression)", "improvement": "improvement"}
    for outcome, (edge, hatch) in _OUTCOME_LOOK.items():
        if outcome in outcomes:
            handles.append(
                Patch(facecolor="white", edgecolor=edge, hatch=hatch, label=names[outcome])
            )
    figure.legend(handles=handles, loc="upper center", ncol=min(len(handles), 7), frameon=False)


def _accept_figure(runs: list[DepthRun]) -> Figure | None:
    measured = [run for run in runs if run.accept_length is not None]
    if not measured:
        return None
    figure, (ax,) = style.new_figure(width=7.2)
    positions = list(range(len(measured)))
    bars = ax.bar(
        positions,
        [run.accept_length or 0.0 for run in measured],
        color=[style.depth_color(run.depth) for run in measured],
        alpha=0.6,
    )
    ax.bar_label(
        bars,
        labels=[f"{run.accept_length:.2f}" for run in measured],
        label_type="center",
        fontsize=10,
    )
    for position, run in zip(positions, measured, strict=True):
        values = [p.accept_length for p in _points(run) if p.accept_length is not None]
        ax.scatter([position] * len(values), values, color="black", s=14, zorder=3)
    ax.set_xticks(positions)
    ax.set_xticklabels([f"steps={run.depth}" for run in measured])
    ax.set_title("Accept length (completion tokens per verify step)")
    ax.set_xlabel("speculation depth")
    ax.set_ylabel("accept length (tokens per step)")
    ax.set_ylim(bottom=0)
    ax.margins(y=0.15)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Patch(color="#999999", alpha=0.6, label="whole run (bar, value inside)"),
            Line2D([], [], color="black", marker="o", linestyle="", label="one point (one C)"),
        ],
        loc="upper left",
    )
    return figure
