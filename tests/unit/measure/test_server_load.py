"""SGLang's /metrics, read for the running and queued requests and retractions."""

from __future__ import annotations

from pytest_specperf.measure.server_load import RETRACTED, RUNNING, parse_metrics

SAMPLE = """# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m a",engine_type="unified",dp_rank="0"} 12.0
sglang:num_running_reqs{model_name="m a",engine_type="unified",dp_rank="1"} 3.0
sglang:num_retracted_requests_total{model_name="m"} 4.0
"""


def test_families_sum_over_label_sets_even_with_spaces_in_values() -> None:
    values = parse_metrics(SAMPLE)
    assert values[RUNNING] == 15.0
    assert values[RETRACTED] == 4.0
