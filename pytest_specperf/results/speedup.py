"""What speculation buys over the no-speculation control (depth 0), point by point.

Absolute tok/s drift with drivers, clocks and the runner; the ratio of a speculative depth
to the control measured on the same runner in the same run does not, so a floor on it
survives a hardware change that would move every absolute floor.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.results.schema import DepthRun, PointMetrics, Speedup


def control_run(runs: Sequence[DepthRun]) -> DepthRun | None:
    return next((run for run in runs if run.depth == CONTROL_DEPTH), None)


def point_speedup(depth: int, point: PointMetrics, control: PointMetrics) -> Speedup | None:
    """``point`` / ``control``; None when either measured nothing to divide.

    Per request, the median request's rate (1 / TPOT p50) is divided: the mean per-request
    rate is skewed by streams that end after a few tokens, as EOS-respecting workloads have.
    With repeats both points are already medians of their samples.
    """
    if point.ok == 0 or control.ok == 0 or control.agg_tok_s <= 0:
        return None
    per_req = None
    mine, theirs = point.median_request_tok_s, control.median_request_tok_s
    if mine is not None and theirs:
        per_req = mine / theirs
    return Speedup(
        depth=depth,
        concurrency=point.concurrency,
        agg=point.agg_tok_s / control.agg_tok_s,
        per_req=per_req,
    )


def depth_speedups(run: DepthRun, control: DepthRun) -> list[Speedup]:
    """Every point of ``run`` that the control measured too, by concurrency."""
    found: list[Speedup] = []
    for point in sorted(run.points, key=lambda p: p.concurrency):
        reference = control.point(point.concurrency)
        if reference is None:
            continue
        speedup = point_speedup(run.depth, point, reference)
        if speedup is not None:
            found.append(speedup)
    return found


def speedups(runs: Sequence[DepthRun]) -> list[Speedup]:
    """Every speculative depth against the control; empty without a control in the run."""
    control = control_run(runs)
    if control is None:
        return []
    found: list[Speedup] = []
    for run in sorted(runs, key=lambda r: r.depth):
        if run.depth != CONTROL_DEPTH:
            found.extend(depth_speedups(run, control))
    return found
