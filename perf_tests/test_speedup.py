"""What speculation buys over no speculation: the speedup against the control (steps=0)."""

import pytest

from pytest_specperf import SpecperfGate
from pytest_specperf.results.schema import DepthRun


@pytest.mark.specperf_phase(3)
def test_speedup_floor(specperf_sweep: DepthRun, specperf_gate: SpecperfGate) -> None:
    """Each depth's agg and per-request tok/s divided by the control's, point by point, stay
    above the baseline's speedup floors: a ratio measured on one runner in one run, so a
    driver or clock change that moves every absolute figure leaves it standing."""
    specperf_gate.require_speedup()
