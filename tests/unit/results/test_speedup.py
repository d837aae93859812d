"""pytest_specperf.results.speedup: each depth's points over the control's (depth 0)."""

from __future__ import annotations

import pytest

from pytest_specperf.results.schema import DepthRun, Percentiles, PointMetrics
from pytest_specperf.results.speedup import speedups
from tests.support.points import make_point


def point(concurrency: int, agg: float, per_req: float | None, ok: int = 2) -> PointMetrics:
    return make_point(concurrency, agg, per_req, requests=2, failed=2 - ok, tokens=100)


def run(depth: int, *points: PointMetrics) -> DepthRun:
    return DepthRun(
        depth=depth, profile="p", backend="sim", hardware="h", workload={}, points=list(points)
    )


def test_speedup_divides_each_point_by_the_controls_point_of_the_same_concurrency() -> None:
    """agg and per-req tok/s of a depth over the control's, per concurrency."""
    found = speedups(
        [
            run(0, point(1, 100.0, 110.0), point(4, 400.0, 100.0)),
            run(3, point(4, 600.0, 250.0), point(1, 230.0, 240.0)),
        ]
    )
    assert [(s.depth, s.concurrency) for s in found] == [(3, 1), (3, 4)]
    assert found[0].agg == pytest.approx(2.3) and found[0].per_req == pytest.approx(240 / 110)
    assert found[1].agg == pytest.approx(1.5) and found[1].per_req == pytest.approx(2.5)


def test_no_control_no_speedup() -> None:
    """Without depth 0 in the run there is nothing to divide by."""
    assert speedups([run(1, point(1, 100.0, 100.0)), run(3, point(1, 200.0, 200.0))]) == []


def test_points_the_control_lacks_or_failed_are_left_out() -> None:
    """A concurrency the control did not measure, or where nothing succeeded, has no ratio."""
    found = speedups(
        [
            run(0, point(1, 100.0, 100.0), point(4, 0.0, None, ok=0)),
            run(2, point(1, 150.0, None), point(4, 500.0, 120.0), point(16, 900.0, 60.0)),
        ]
    )
    assert [(s.concurrency, s.per_req) for s in found] == [(1, None)]


def test_per_request_speedup_divides_the_median_requests_rates() -> None:
    """With TPOT measured, per-request speedup is (1 / TPOT p50) over the control's: a few
    near-empty streams that inflate the mean per-request rate do not move it."""
    control, deeper = point(64, 4000.0, 990.0), point(64, 6000.0, 390.0)
    control.tpot_s = Percentiles(p50=0.005, p90=0.006, p99=0.008, mean=0.005)
    deeper.tpot_s = Percentiles(p50=0.0025, p90=0.003, p99=0.004, mean=0.0025)
    (found,) = speedups([run(0, control), run(3, deeper)])
    assert found.per_req == pytest.approx(2.0)
