"""Open-loop points (a trace replayed at its timestamps, --specperf-request-rate): gated as
the closed-loop points are, and each depth's highest rate meeting the SLOs."""

import pytest

from pytest_specperf import SpecperfGate
from pytest_specperf.results.schema import PointMetrics, RateSearch


def test_open_loop_floor(specperf_open_point: PointMetrics, specperf_gate: SpecperfGate) -> None:
    """Every request succeeds, and neither agg nor per-request tok/s at this offered load is a
    regression against the baseline's point of the same load (in an open loop a slower server
    gets the same requests: its per-request rate and latency show it, its agg tok/s only once
    it cannot keep up)."""
    specperf_gate.require_success(specperf_open_point)
    specperf_gate.require_open_throughput(specperf_open_point)


@pytest.mark.specperf_phase(2)
@pytest.mark.specperf_rate_search
def test_slo_rate_not_below_baseline(
    specperf_rate_search: RateSearch, specperf_gate: SpecperfGate
) -> None:
    """The highest request rate at which this depth met the SLOs (bracketed, then bisected)
    is not below the baseline's, less the throughput tolerance."""
    specperf_gate.require_rate_capacity(specperf_rate_search)
