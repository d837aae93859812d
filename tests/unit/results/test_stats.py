"""pytest_specperf.results.stats: the ratio bound the acceptance floors use."""

from __future__ import annotations

import random

import pytest

from pytest_specperf.results.stats import ratio_upper_bound


def test_identical_ratios_give_a_bound_at_the_ratio() -> None:
    """Samples that agree exactly leave no spread: the bound is the ratio itself."""
    assert ratio_upper_bound([1.0, 2.0, 3.0], [10.0, 20.0, 30.0], 0.99) == pytest.approx(0.1)


def test_under_two_samples_or_no_denominator_gives_none() -> None:
    """One sample has no spread to measure; no denominator has no ratio."""
    assert ratio_upper_bound([1.0], [10.0], 0.99) is None
    assert ratio_upper_bound([0.0, 0.0], [0.0, 0.0], 0.99) is None


def test_the_bound_covers_the_true_ratio_about_as_often_as_asked() -> None:
    """Over replicates of binomial counts, the 90% upper bound is at or above the true rate
    in about 90% of trials (seeded: 2,000 trials of 9 samples)."""
    rng = random.Random(7)
    true_rate, trials, covered = 0.19, 2000, 0
    for _ in range(trials):
        steps = [rng.randint(150, 500) for _ in range(9)]
        accepted = [sum(rng.random() < true_rate for _ in range(n)) for n in steps]
        bound = ratio_upper_bound([float(a) for a in accepted], [float(n) for n in steps], 0.9)
        covered += bound is not None and bound >= true_rate
    assert 0.87 < covered / trials < 0.93
