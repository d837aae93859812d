"""What each speculation depth costs: KV capacity, checked before any load is sent."""

import pytest

from pytest_specperf import SpecperfGate


@pytest.mark.specperf_phase(0)
def test_kv_capacity_not_below_baseline(specperf_gate: SpecperfGate) -> None:
    """max_total_num_tokens and max_running_requests from /server_info never fall below the
    baseline's: a server change that silently costs KV capacity is a regression."""
    specperf_gate.require_kv_capacity()
