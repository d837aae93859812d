"""Trend plots: a series' nightly medians with their intervals, change points marked.

One PNG per series (history/series.py), for each series with a change point or every one
(``write_trend_plots``: ``specperf history plot`` and a nightly run's recording both call it);
matplotlib is optional (the plots extra), and without it no plot is drawn and the caller says
so.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_specperf.history.changes import ChangePoint
from pytest_specperf.history.series import Series
from pytest_specperf.results.formats import ratio_of, relative_change
from pytest_specperf.results.plot_style import depth_color, depth_marker, new_figure, thousands

if TYPE_CHECKING:
    from pytest_specperf.history.report import HistoryFindings
    from pytest_specperf.history.store import HistoryStore


def have_matplotlib() -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        return False
    return True


# Room left in a file name (255 bytes) for the digest and the suffix.
_READABLE_CHARS = 200


def plot_name(series: Series) -> str:
    """The series' trend plot file: every part of its key, readable, then a digest of the key.

    The readable part alone can collide (a name's characters outside ``[A-Za-z0-9_.=-]``
    become ``_``, parts may hold the ``-`` that joins them, a filesystem may ignore case);
    the digest of the exact key cannot, so no plot overwrites another series' plot.
    """
    key = series.key
    point = key.load.replace("=", "") if key.load else f"c{key.concurrency}"
    readable = re.sub(
        r"[^A-Za-z0-9_.=-]+",
        "_",
        f"trend-{key.profile}-{key.hardware}-{key.workload}-steps{key.depth}-{point}-{key.metric}",
    )[:_READABLE_CHARS]
    exact = json.dumps(
        [key.profile, key.hardware, key.workload, key.depth, key.concurrency, key.metric, key.load]
    )
    return f"{readable}-{hashlib.sha256(exact.encode()).hexdigest()[:10]}.png"


def _interval_bounds(
    points: Sequence[Mapping[str, Any]] | None, metric: str, count: int
) -> list[tuple[float, float] | None]:
    if points is None:
        return [None] * count
    bounds: list[tuple[float, float] | None] = []
    for point in points:
        interval = json.loads(point.get("intervals_json") or "{}").get(metric)
        bounds.append(None if interval is None else (interval["low"], interval["high"]))
    return bounds


def draw_trend(
    series: Series,
    changes: Sequence[ChangePoint],
    path: Path,
    point_rows: Sequence[Mapping[str, Any]] | None = None,
) -> Path:
    """The series' medians (intervals where recorded), each change point a labelled line."""
    import matplotlib.pyplot as plt

    figure, (ax,) = new_figure(width=8.0)
    xs = list(range(len(series.values)))
    color = depth_color(series.key.depth)
    bounds = _interval_bounds(point_rows, series.key.metric, len(xs))
    lows = [v - b[0] if b else 0.0 for v, b in zip(series.values, bounds, strict=True)]
    highs = [b[1] - v if b else 0.0 for v, b in zip(series.values, bounds, strict=True)]
    ax.errorbar(
        xs,
        series.values,
        yerr=[lows, highs],
        color=color,
        marker=depth_marker(series.key.depth),
        capsize=3,
        linewidth=1.2,
    )
    for change in changes:
        ax.axvline(change.index - 0.5, color="#c0392b", linestyle="--", linewidth=1.2)
        ax.annotate(
            f"{change.night.label}\n{relative_change(ratio_of(change.step))}",
            xy=(change.index - 0.5, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(4, -4),
            textcoords="offset points",
            va="top",
            fontsize=8,
            color="#c0392b",
        )
    ax.set_xticks(xs)
    ax.set_xticklabels(
        [f"{n.date[5:]} {n.label[:8]}" for n in series.nights], rotation=60, fontsize=7
    )
    ax.set_xlabel("run (date, tested commit)")
    ax.set_ylabel(series.key.metric)
    if series.key.metric.endswith("tok_s"):
        ax.yaxis.set_major_formatter(thousands())
    ax.set_title(str(series.key), fontsize=9)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_trend_plots(
    store: HistoryStore, found: HistoryFindings, out_dir: Path, *, every: bool = False
) -> list[Path]:
    """The trend plot of each series with a change point (every series with ``every``)."""
    if not have_matplotlib():
        return []
    rows = {
        (p["run_seq"], p["depth"], p["concurrency"], p.get("load") or ""): p for p in store.points()
    }
    written = []
    for series in found.series:
        changes = [c for c in found.changes if c.key == series.key]
        if not changes and not every:
            continue
        point_rows = [
            rows[(n.seq, series.key.depth, series.key.concurrency, series.key.load)]
            for n in series.nights
        ]
        path = out_dir / plot_name(series)
        written.append(draw_trend(series, changes, path, point_rows))
    return written
