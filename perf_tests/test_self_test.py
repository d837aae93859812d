"""The gate proves itself on the server under test (with --specperf-self-test)."""

import pytest

from pytest_specperf import SpecperfGate
from pytest_specperf.results.schema import DepthRun


@pytest.mark.specperf_phase(4)
def test_gate_catches_injected_slowdown(
    specperf_sweep: DepthRun, specperf_gate: SpecperfGate
) -> None:
    """A known sleep per forward pass set through /slow_down makes the throughput floors fail;
    once it is reset the server is back to its speed. Last of each depth: it slows the server."""
    specperf_gate.require_self_test()
