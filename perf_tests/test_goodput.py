"""Goodput under the SLOs of --specperf-slo: what each depth serves within them."""

import pytest

from pytest_specperf import SpecperfGate
from pytest_specperf.results.schema import DepthRun


@pytest.mark.specperf_phase(2)
def test_slo_capacity_not_below_baseline(
    specperf_sweep: DepthRun, specperf_gate: SpecperfGate
) -> None:
    """The largest concurrency at which this depth (and every lower concurrency) met the SLOs
    is not below the baseline's, under the same SLOs."""
    specperf_gate.require_slo_capacity(specperf_sweep)
