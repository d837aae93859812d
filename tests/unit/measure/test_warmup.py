"""measure/warmup.py: rounds over the sweep until two agree, or a bound; what each round saw.

measure_point is replaced by a script of figures (no server); the warm-up against a real
simulator with cold shapes is in tests/e2e/test_warmup_e2e.py.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_specperf.measure.warmup import WarmupPlan, settled, warm_up
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.schema import Warmup
from tests.support.points import make_point


class Script:
    """measure_point's stand-in: the next figure of each concurrency, in order."""

    def __init__(self, figures: dict[int, list[float]], sleep_s: float = 0.0) -> None:
        self.figures = {level: iter(values) for level, values in figures.items()}
        self.sleep_s = sleep_s
        self.workloads: list[tuple[int, Workload]] = []

    async def __call__(self, base_url: str, workload: Workload, level: int, **_: Any) -> Any:
        self.workloads.append((level, workload))
        if self.sleep_s:
            time.sleep(self.sleep_s)
        agg = next(self.figures[level])
        return make_point(level, agg, agg, requests=1, tokens=1)


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    def install(figures: dict[int, list[float]], sleep_s: float = 0.0) -> Script:
        fake = Script(figures, sleep_s)
        monkeypatch.setattr("pytest_specperf.measure.warmup.measure_point", fake)
        return fake

    yield install


def run(levels: list[int], plan: WarmupPlan) -> Warmup:
    return asyncio.run(warm_up("http://127.0.0.1:1", Workload(), levels, plan))


def test_rounds_go_on_until_two_consecutive_rounds_agree(script: Any) -> None:
    script({1: [80.0, 97.0, 96.0, 96.0], 4: [270.0, 340.0, 345.0, 345.0]})
    warmup = run([4, 1], WarmupPlan(max_rounds=5, tolerance=0.05))
    assert warmup.rounds == 3 and warmup.settled and warmup.stopped_by == "settled"
    assert warmup.concurrency == [1, 4]
    assert warmup.agg_tok_s == [[80.0, 270.0], [97.0, 340.0], [96.0, 345.0]]


def test_one_concurrency_still_moving_keeps_the_warmup_going(script: Any) -> None:
    script({1: [96.0, 96.0, 96.0], 16: [850.0, 1000.0, 1005.0]})
    warmup = run([1, 16], WarmupPlan(max_rounds=5, tolerance=0.05))
    assert warmup.rounds == 3


def test_max_rounds_bounds_a_warmup_that_never_settles(script: Any) -> None:
    script({4: [100.0, 200.0, 100.0, 200.0]})
    warmup = run([4], WarmupPlan(max_rounds=3, tolerance=0.05))
    assert warmup.rounds == 3 and not warmup.settled and warmup.stopped_by == "rounds"


def test_max_seconds_stops_before_a_round_that_would_end_past_it(script: Any) -> None:
    script({4: [100.0, 200.0, 100.0, 200.0]}, sleep_s=0.2)
    warmup = run([4], WarmupPlan(max_rounds=10, max_seconds=0.3, tolerance=0.05))
    assert warmup.rounds == 1 and warmup.stopped_by == "seconds"


def test_a_round_measures_each_point_as_a_sample_does(script: Any) -> None:
    fake = script({4: [100.0, 100.0]})
    workload = Workload(max_new_tokens=256, min_point_seconds=2.0)
    asyncio.run(warm_up("http://127.0.0.1:1", workload, [4], WarmupPlan()))
    assert fake.workloads == [(4, workload), (4, workload)]


@pytest.mark.parametrize(
    ("previous", "current", "expected"),
    [
        ([100.0, 200.0], [104.0, 196.0], True),
        ([100.0, 200.0], [106.0, 200.0], False),
        ([100.0], [], False),
        ([], [100.0], False),
        ([0.0], [0.0], False),  # every request failed: nothing settled
    ],
)
def test_settled(previous: list[float], current: list[float], expected: bool) -> None:
    assert settled(previous, current, 0.05) is expected
