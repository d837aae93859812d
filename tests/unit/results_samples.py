"""Small results for the report, plot and export tests: three depths, intervals, verdicts."""

from __future__ import annotations

import msgspec

from pytest_specperf.results.schema import (
    DepthRun,
    Interval,
    Percentiles,
    PointMetrics,
    ServerSummary,
    Verdict,
    VerdictOutcome,
)
from tests.support.points import make_run, seed_point


def sample_point(concurrency: int, agg: float, *, interval: bool = False) -> PointMetrics:
    """One point; with ``interval``, a repeated one: three samples and the interval of agg."""
    point = seed_point(
        concurrency,
        agg,
        accept_length=2.5,
        ttft_s=Percentiles(p50=0.02, p90=0.03, p99=0.04, mean=0.025),
    )
    if not interval:
        return point
    point.intervals = {"agg_tok_s": Interval(low=agg - 10, high=agg + 12, level=0.95, method="t")}
    point.samples = [
        msgspec.structs.replace(point, agg_tok_s=agg + delta, intervals={})
        for delta in (-8.0, 0.0, 9.0)
    ]
    return point


def sample_verdict(
    depth: int,
    concurrency: int | None,
    metric: str,
    outcome: VerdictOutcome,
    *,
    remeasured: bool = False,
    refresh_command: str | None = None,
) -> Verdict:
    return Verdict(
        depth=depth,
        concurrency=concurrency,
        metric=metric,
        outcome=outcome,
        measured=90.0,
        floor=95.0 if outcome == "regression" else 80.0,
        baseline=100.0,
        interval=Interval(low=88.0, high=92.0, level=0.95, method="t"),
        samples=[89.0, 91.0, 90.5],
        noise_source="no noise recorded: fixed tolerance 10%",
        remeasured=remeasured,
        confirmed=remeasured and outcome == "regression",
        refresh_command=refresh_command,
        message=f"steps={depth}: {outcome}",
    )


def sample_run(
    depth: int,
    *,
    kv_tokens: int = 1000,
    interval: bool = False,
    verdicts: list[Verdict] | None = None,
) -> DepthRun:
    server = ServerSummary(
        url="u", max_total_num_tokens=kv_tokens, max_running_requests=48, version="0.5.12"
    )
    points = [
        sample_point(c, agg * depth, interval=interval)
        for c, agg in ((1, 250.0), (4, 900.0), (16, 3000.0))
    ]
    return make_run(depth, points, server=server, verdicts=verdicts or [])
