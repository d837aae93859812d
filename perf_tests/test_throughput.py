"""Throughput per (speculation depth, concurrency), and of each depth as a whole: gated."""

import pytest

from pytest_specperf import SpecperfGate
from pytest_specperf.results.schema import DepthRun, PointMetrics


def test_throughput_floor(specperf_point: PointMetrics, specperf_gate: SpecperfGate) -> None:
    """Every request succeeds, and neither agg nor per-request tok/s is a regression against
    the baseline (judged against its recorded noise; a published figure: its fixed floor),
    nor goodput under the baseline's SLOs (fixed tolerance)."""
    specperf_gate.require_success(specperf_point)
    specperf_gate.require_throughput(specperf_point)
    specperf_gate.require_goodput(specperf_point)


@pytest.mark.specperf_phase(2)
def test_throughput_depth(specperf_sweep: DepthRun, specperf_gate: SpecperfGate) -> None:
    """Every point's change against the baseline, pooled: a slowdown too small to show at any
    one point, but present at all of them, is a regression of the depth."""
    specperf_gate.require_depth_throughput(specperf_sweep)
