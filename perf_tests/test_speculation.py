"""What each speculation depth buys: the run-scoped accept length."""

import pytest

from pytest_specperf import SpecperfGate
from pytest_specperf.results.schema import DepthRun


@pytest.mark.specperf_phase(2)
def test_accept_length_floor(specperf_sweep: DepthRun, specperf_gate: SpecperfGate) -> None:
    """sum(completion tokens) / sum(verify steps) over every point of this depth stays above
    the baseline's floor (the server's lifetime average is not used: it spans warm-ups)."""
    specperf_gate.require_accept_length(specperf_sweep)


@pytest.mark.specperf_phase(2)
def test_position_acceptance_floor(specperf_sweep: DepthRun, specperf_gate: SpecperfGate) -> None:
    """The acceptance rate of each draft position (share of verify steps that accepted it),
    over every point of this depth, stays above the baseline's floor."""
    specperf_gate.require_position_acceptance(specperf_sweep)
