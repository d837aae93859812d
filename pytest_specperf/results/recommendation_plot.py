"""recommendation.png: each depth's throughput against concurrency, over the schedule's bands.

Drawn by results/plots.py (matplotlib, the optional ``plots`` extra). Left: aggregate tok/s
per depth with the schedule's concurrency ranges shaded in the colour of the depth they
recommend. Right: goodput under the SLOs when the run had some, else per-request tok/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_specperf.results import plot_style as style
from pytest_specperf.results.recommendation_report import SCHEDULE_METRIC_LABELS
from pytest_specperf.results.schema import DepthRun, PointMetrics, Recommendation

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

RECOMMENDATION_PNG = "recommendation.png"


def _goodput(point: PointMetrics) -> float | None:
    return point.goodput.goodput_tok_s if point.goodput is not None else None


def _series(
    ax: Axes, runs: Sequence[DepthRun], value: Any, label: str, concurrencies: Sequence[int]
) -> None:
    for run in runs:
        points = [
            (p.concurrency, v)
            for p in sorted(run.points, key=lambda p: p.concurrency)
            if (v := value(p)) is not None
        ]
        if not points:
            continue
        xs, ys = zip(*points, strict=True)
        ax.plot(
            xs,
            ys,
            **style.depth_style(run.depth),
        )
    style.concurrency_axis(ax, concurrencies)
    ax.set_ylabel(label)
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(style.thousands())
    ax.legend(title="speculation depth", fontsize=8)


def _bands(ax: Axes, recommendation: Recommendation, top: int) -> None:
    """Each range of the schedule shaded in the colour of the depth it recommends."""
    for item in recommendation.schedule:
        low = item.min_concurrency - 0.5 if item.min_concurrency > 1 else 1
        high = (item.max_concurrency or top) + 0.5
        ax.axvspan(low, high, color=style.depth_color(item.depth), alpha=0.12, linewidth=0)
        ax.text(
            (low * high) ** 0.5,
            0.03,
            f"best: {style.depth_label(item.depth)}",
            transform=ax.get_xaxis_transform(),
            ha="center",
            fontsize=8,
            color=style.depth_color(item.depth),
        )


def recommendation_figure(
    runs: Sequence[DepthRun], recommendation: Recommendation | None
) -> Figure | None:
    """Left: aggregate tok/s per depth over the schedule's bands; right: goodput under the SLOs
    when the run had some, else per-request tok/s. None without a schedule."""
    if recommendation is None or not recommendation.schedule:
        return None
    ordered = sorted(runs, key=lambda r: r.depth)
    concurrencies = sorted({p.concurrency for r in ordered for p in r.points})
    top = max(concurrencies, default=1)
    figure, (left, right) = style.new_figure(columns=2)
    _series(left, ordered, lambda p: p.agg_tok_s, "aggregate tok/s", concurrencies)
    _bands(left, recommendation, top)
    metric = SCHEDULE_METRIC_LABELS.get(recommendation.metric, recommendation.metric)
    left.set_title(f"Which depth at which load (shaded: the schedule, by {metric})")
    if any(_goodput(p) is not None for r in ordered for p in r.points):
        label = "goodput tok/s (requests meeting the SLOs)"
        _series(right, ordered, _goodput, label, concurrencies)
        right.set_title("Goodput under the SLOs")
    else:
        label = "per-request tok/s (median request)"
        _series(right, ordered, lambda p: p.median_request_tok_s, label, concurrencies)
        right.set_title("Per-request speed (median request)")
    return figure
