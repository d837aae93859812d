"""recommendation.png: each depth's throughput against concurrency, over the schedule's bands.

Drawn by results/plots.py (matplotlib, the optional ``plots`` extra). Left: aggregate tok/s
per depth with the schedule's concurrency ranges shaded in the colour of the depth they
recommend. Right: goodput under the SLOs when the run had some, else per-request tok/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_specperf.results.schema import DepthRun, PointMetrics, Recommendation

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

RECOMMENDATION_PNG = "recommendation.png"


def _color(depth: int) -> Any:
    import matplotlib

    return matplotlib.colormaps["tab10"](depth % 10)


def _goodput(point: PointMetrics) -> float | None:
    return point.goodput.goodput_tok_s if point.goodput is not None else None


def _series(ax: Axes, runs: Sequence[DepthRun], value: Any, label: str) -> None:
    for run in runs:
        points = [
            (p.concurrency, v)
            for p in sorted(run.points, key=lambda p: p.concurrency)
            if (v := value(p)) is not None
        ]
        if not points:
            continue
        xs, ys = zip(*points, strict=True)
        ax.plot(xs, ys, marker="o", color=_color(run.depth), label=f"steps={run.depth}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrency")
    ax.set_ylabel(label)
    ax.grid(True, color="#dddddd", linewidth=0.8)
    ax.legend(fontsize=8)


def _bands(ax: Axes, recommendation: Recommendation, top: int) -> None:
    for item in recommendation.schedule:
        low = item.min_concurrency - 0.5 if item.min_concurrency > 1 else 1
        high = (item.max_concurrency or top) + 0.5
        ax.axvspan(low, high, color=_color(item.depth), alpha=0.12, linewidth=0)
        ax.text(
            (low * high) ** 0.5,
            0.02,
            f"steps={item.depth}",
            transform=ax.get_xaxis_transform(),
            ha="center",
            fontsize=8,
        )


def recommendation_figure(
    runs: Sequence[DepthRun], recommendation: Recommendation | None
) -> Figure | None:
    """Left: aggregate tok/s per depth over the schedule's bands; right: goodput under the SLOs
    when the run had some, else per-request tok/s. None without a schedule."""
    if recommendation is None or not recommendation.schedule:
        return None
    import matplotlib.pyplot as plt

    ordered = sorted(runs, key=lambda r: r.depth)
    top = max((p.concurrency for r in ordered for p in r.points), default=1)
    figure, (left, right) = plt.subplots(1, 2, figsize=(12.8, 4.4), facecolor="white")
    _series(left, ordered, lambda p: p.agg_tok_s, "aggregate tok/s")
    _bands(left, recommendation, top)
    left.set_title(f"schedule by {recommendation.metric}", fontsize=10)
    if any(_goodput(p) is not None for r in ordered for p in r.points):
        _series(right, ordered, _goodput, "goodput tok/s (requests meeting the SLOs)")
    else:
        _series(
            right, ordered, lambda p: p.median_request_tok_s, "per-request tok/s (median request)"
        )
    return figure
