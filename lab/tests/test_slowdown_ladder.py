"""lab/gpu/slowdown_ladder.py picks the /slow_down sleep an A/B of "head about 10% slower" takes."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.support.data import REPO
from tests.support.scripts import load_script

# The lent H200's ladder (docs/runs/2026-12-05-ladder-slow10-h200): seed class, C=64.
H200_LADDER = [
    (0.0, 5663.3),
    (0.024, 3290.6),
    (0.027, 3203.5),
    (0.030, 2985.0),
    (0.033, 2936.3),
    (0.036, 2762.6),
]


@pytest.fixture(scope="module")
def ladder() -> ModuleType:
    return load_script(REPO / "lab" / "gpu" / "slowdown_ladder.py")


def test_a_measured_sleep_near_the_target_is_taken_as_measured(ladder: ModuleType) -> None:
    choice = ladder.choose_sleep([(0.0, 6000.0), (0.002, 5700.0), (0.003, 5300.0)], 0.10)
    assert choice.sleep == 0.003
    assert choice.line == "nearest -10%: 3.00 ms (-11.7%)"


def test_sleeps_between_the_target_give_a_fitted_sleep_said_as_fitted(
    ladder: ModuleType,
) -> None:
    """-3.3% at 2 ms and -15% at 6 ms: agg0 / agg - 1 goes 0.034 to 0.176, and a straight line
    through them reaches 1 / 0.9 - 1 = 0.111 (-10%) at 4.16 ms."""
    choice = ladder.choose_sleep([(0.0, 6000.0), (0.002, 5800.0), (0.006, 5100.0)], 0.10)
    assert choice.line.startswith("no sleep came within 3% of -10% (nearest 6.00 ms, -15.0%)")
    assert "fitted (not measured)" in choice.line
    assert choice.sleep == pytest.approx(0.004159, abs=0.000001)


def test_sleeps_that_all_cost_far_more_choose_none(ladder: ModuleType) -> None:
    """The H200's ladder: 24 ms cost 42%; its line crosses -10% at 2 ms, far under 24 ms,
    where nothing was measured (0.12 ms had cost nothing): try shorter sleeps instead."""
    choice = ladder.choose_sleep(H200_LADDER, 0.10)
    assert choice.sleep is None
    assert choice.line.startswith("no sleep came within 3% of -10% (nearest 24.00 ms, -41.9%)")
    assert choice.line.endswith("under half the shortest sleep tried: try shorter ones")


def test_one_far_sleep_or_sleeps_that_cost_little_or_nothing_choose_none(
    ladder: ModuleType,
) -> None:
    assert ladder.choose_sleep([(0.0, 6000.0), (0.024, 3300.0)], 0.10).sleep is None
    flat = ladder.choose_sleep([(0.0, 6000.0), (0.001, 5990.0), (0.002, 6000.0)], 0.10)
    assert flat.sleep is None
    assert flat.line.endswith("the slowdowns do not grow with the sleep")
    little = ladder.choose_sleep([(0.0, 6000.0), (0.001, 5990.0), (0.002, 5980.0)], 0.10)
    assert little.sleep is None
    assert little.line.endswith("past twice the longest sleep tried: try longer ones")
    stopped = ladder.choose_sleep([(0.0, 6000.0), (0.5, 0.0)], 0.10)
    assert stopped == ladder.Choice(None, "no sleep left the server serving")
