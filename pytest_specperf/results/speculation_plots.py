"""Plots of what speculation buys: speedup over the control, acceptance per draft position.

Each ``*_figure`` function draws one matplotlib figure from the runs, or returns None when the
runs hold nothing to draw; results/plots.py saves them beside report.md.
matplotlib is imported lazily: it is the optional ``plots`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_specperf.results.plot_style import (
    concurrency_axis,
    depth_color,
    depth_label,
    depth_marker,
    depth_style,
    new_figure,
)
from pytest_specperf.results.schema import DepthRun
from pytest_specperf.results.speedup import speedups

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SPEEDUP_PNG = "speedup.png"
POSITION_ACCEPT_PNG = "position-acceptance.png"


def speedup_figure(runs: Sequence[DepthRun]) -> Figure | None:
    """Agg and per-request speedup over steps=0 vs concurrency, one line per depth."""
    found = speedups(runs)
    if not found:
        return None
    figure, (agg_ax, per_req_ax) = new_figure(columns=2)
    for depth in sorted({s.depth for s in found}):
        mine = sorted((s for s in found if s.depth == depth), key=lambda s: s.concurrency)
        marker, color, label = depth_marker(depth), depth_color(depth), depth_label(depth)
        agg_ax.plot(
            [s.concurrency for s in mine],
            [s.agg for s in mine],
            marker=marker,
            color=color,
            label=label,
        )
        per_req = [(s.concurrency, s.per_req) for s in mine if s.per_req is not None]
        per_req_ax.plot(
            [c for c, _ in per_req],
            [v for _, v in per_req],
            marker=marker,
            color=color,
            label=label,
        )
    concurrencies = sorted({s.concurrency for s in found})
    for ax, what in ((agg_ax, "agg tok/s"), (per_req_ax, "per-req tok/s (median request)")):
        ax.axhline(1.0, color=depth_color(0), linewidth=1, linestyle="--", label="steps=0 (1x)")
        concurrency_axis(ax, concurrencies)
        ax.set_ylabel(f"{what}, depth / steps=0")
        ax.set_ylim(bottom=0)
        ax.legend(title="speculation depth")
    agg_ax.set_title("Aggregate speedup over no speculation")
    per_req_ax.set_title("Per-request speedup over no speculation")
    return figure


def position_acceptance_figure(runs: Sequence[DepthRun]) -> Figure | None:
    """Acceptance rate of draft positions 1..N, one line per depth."""
    rows = [run for run in sorted(runs, key=lambda r: r.depth) if run.position_accept_rate]
    if not rows:
        return None
    figure, (ax,) = new_figure(width=6.4)
    # Depths often accept alike: the shallower ones are drawn last, in smaller markers, so
    # every line stays visible on top of the deeper one it shares its points with.
    for order, run in enumerate(sorted(rows, key=lambda r: -r.depth)):
        positions = list(range(1, len(run.position_accept_rate) + 1))
        ax.plot(
            positions,
            run.position_accept_rate,
            markersize=10 - 2 * min(order, 3),
            **depth_style(run.depth),
        )
    longest = max(len(run.position_accept_rate) for run in rows)
    ax.set_xticks(list(range(1, longest + 1)))
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("draft position k")
    ax.set_ylabel("share of verify steps accepting k drafts or more")
    ax.set_title("Acceptance per draft position")
    handles, labels = ax.get_legend_handles_labels()
    order_by_depth = sorted(range(len(labels)), key=lambda i: labels[i])
    ax.legend(
        [handles[i] for i in order_by_depth],
        [labels[i] for i in order_by_depth],
        title="speculation depth",
        loc="lower left",
    )
    return figure
