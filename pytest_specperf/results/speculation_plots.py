"""Plots of what speculation buys: speedup over the control, acceptance per draft position.

Each ``*_figure`` function draws one matplotlib figure from the runs, or returns None when the
runs hold nothing to draw; results/plots.py saves them beside report.md.
matplotlib is imported lazily: it is the optional ``plots`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_specperf.measure.speedup import speedups
from pytest_specperf.results.schema import DepthRun

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SPEEDUP_PNG = "speedup.png"
POSITION_ACCEPT_PNG = "position-acceptance.png"


def speedup_figure(runs: Sequence[DepthRun]) -> Figure | None:
    """Agg and per-request speedup over steps=0 vs concurrency, one line per depth."""
    found = speedups(runs)
    if not found:
        return None
    import matplotlib.pyplot as plt

    figure, (agg_ax, per_req_ax) = plt.subplots(1, 2, figsize=(12.8, 4.4), facecolor="white")
    for depth in sorted({s.depth for s in found}):
        mine = sorted((s for s in found if s.depth == depth), key=lambda s: s.concurrency)
        xs = [s.concurrency for s in mine]
        agg_ax.plot(xs, [s.agg for s in mine], marker="o", label=f"steps={depth}")
        per_req = [(s.concurrency, s.per_req) for s in mine if s.per_req is not None]
        per_req_ax.plot(
            [c for c, _ in per_req], [v for _, v in per_req], marker="o", label=f"steps={depth}"
        )
    concurrencies = sorted({s.concurrency for s in found})
    for ax, what in ((agg_ax, "agg tok/s"), (per_req_ax, "per-req tok/s")):
        ax.axhline(1.0, color="#888888", linewidth=1, linestyle="--")
        ax.set_xscale("log", base=2)
        ax.set_xticks(concurrencies, [str(c) for c in concurrencies])
        ax.minorticks_off()
        ax.set_xlabel("concurrency C")
        ax.set_ylabel(f"{what} / steps=0")
        ax.grid(True, color="#dddddd", linewidth=0.8)
        ax.legend()
    agg_ax.set_title("Aggregate speedup over no speculation")
    per_req_ax.set_title("Per-request speedup over no speculation")
    return figure


def position_acceptance_figure(runs: Sequence[DepthRun]) -> Figure | None:
    """Acceptance rate of draft positions 1..N, one line per depth."""
    rows = [run for run in sorted(runs, key=lambda r: r.depth) if run.position_accept_rate]
    if not rows:
        return None
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(6.4, 4.4), facecolor="white")
    for run in rows:
        positions = list(range(1, len(run.position_accept_rate) + 1))
        ax.plot(positions, run.position_accept_rate, marker="o", label=f"steps={run.depth}")
    longest = max(len(run.position_accept_rate) for run in rows)
    ax.set_xticks(list(range(1, longest + 1)))
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("draft position")
    ax.set_ylabel("share of verify steps that accepted it")
    ax.set_title("Acceptance per draft position")
    ax.grid(True, color="#dddddd", linewidth=0.8)
    ax.legend()
    return figure
