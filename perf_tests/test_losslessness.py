"""Speculative decoding is lossless: greedy outputs do not depend on the depth."""

import pytest

from pytest_specperf import SpecperfGate


@pytest.mark.specperf_phase(3)
def test_greedy_outputs_equal_across_depths(specperf_gate: SpecperfGate) -> None:
    """At temperature 0 the fixed prompt set's output ids equal those of every other depth
    (the control included); a mismatch names the prompt and the first differing token."""
    specperf_gate.require_lossless()
