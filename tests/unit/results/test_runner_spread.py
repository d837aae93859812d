"""results/runner_spread.py: the spread between a runner's runs, robust to one bad night."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from pytest_specperf.results.runner_spread import robust_spread, run_levels, runner_spread


def _runs(levels: list[float]) -> list[dict[int, float]]:
    return [{1: 100.0 * math.exp(x), 4: 380.0 * math.exp(x)} for x in levels]


def test_a_run_level_is_its_log_ratio_to_the_median_run_at_every_point() -> None:
    levels = run_levels(_runs([0.0, 0.1, -0.1]))
    assert levels == pytest.approx([0.0, 0.1, -0.1])


def test_one_bad_night_moves_the_standard_deviation_not_the_mad() -> None:
    rng = random.Random(1)
    levels = [rng.gauss(0, 0.05) for _ in range(10)]
    bad = [*levels[1:], math.log(0.7)]
    # The true spread is 5%: one night 30% slow takes the standard deviation past 1.5x it,
    # while the MAD stays under it.
    assert statistics.stdev(bad) > 0.075 > robust_spread(bad)


def test_fewer_than_five_runs_give_no_spread() -> None:
    assert runner_spread(_runs([0.0, 0.01, 0.02, 0.03]), "p") is None
    found = runner_spread(_runs([0.0, 0.01, -0.01, 0.02, -0.02]), "p on h")
    assert found is not None and found.runs == 5 and found.dof == 4
    assert found.text() == f"5 history runs (spread {found.spread:.1%}, MAD)"
