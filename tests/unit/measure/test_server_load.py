"""SGLang's /metrics, read for the running and queued requests and retractions."""

from __future__ import annotations

import asyncio

import pytest

from pytest_specperf.measure.server_load import RETRACTED, RUNNING, LoadWatch, parse_metrics

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


class _SlowToStop(LoadWatch):
    """A watcher whose task takes a moment to end once cancelled (a poll finishing)."""

    async def _loop(self) -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.sleep(0.2)
            raise


def test_a_cancellation_arriving_while_the_watcher_stops_reaches_the_caller() -> None:
    async def point() -> None:
        running = asyncio.current_task()
        assert running is not None
        async with _SlowToStop("http://127.0.0.1:9") as watch:
            watch.served = False  # nothing listens there: no last poll
            await asyncio.sleep(0.01)  # the watcher's task starts
            asyncio.get_running_loop().call_later(0.05, running.cancel)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(point())
