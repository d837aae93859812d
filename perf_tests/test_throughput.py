"""Throughput floors per (speculation depth, concurrency): the seed's table, gated."""

from pytest_specperf.gate.pytest_gate import SpecperfGate
from pytest_specperf.results.schema import PointMetrics


def test_throughput_floor(specperf_point: PointMetrics, specperf_gate: SpecperfGate) -> None:
    """Every request succeeds, and agg and per-request tok/s (and goodput, under the
    baseline's SLOs) stay above the baseline's floors."""
    specperf_gate.require_success(specperf_point)
    specperf_gate.require_throughput(specperf_point)
    specperf_gate.require_goodput(specperf_point)
