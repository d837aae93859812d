"""gate/ab/prior.py (and gate/ab/verdict.py's look with it), the runner's history: the pieces of the
pooled model and its prior."""

from __future__ import annotations

import math
import random

import pytest

from pytest_specperf.gate.ab.estimate import AbSettings, BootPoint, Pair, estimate, pooled_change
from pytest_specperf.gate.ab.prior import (
    PRIOR_DATA_RATIO,
    PRIOR_DOF,
    PairPrior,
    estimate_with_prior,
    pair_variance,
    prior_looks,
    prior_weight,
)
from pytest_specperf.gate.ab.sequential import scheduled_t_multiplier, spent, z_boundaries
from pytest_specperf.gate.ab.verdict import decided_by, look, outcome_of
from pytest_specperf.results.runner_spread import RunnerSpread


def _pair(base: float, head: float, points: tuple[int, ...] = (1, 4)) -> Pair:
    def side(level: float) -> dict[int, BootPoint]:
        return {c: BootPoint(c, [100.0 * c * math.exp(level)] * 2) for c in points}

    return Pair(base=side(base), head=side(head))


def test_with_a_prior_the_looks_are_every_first_look_pairs_and_the_last() -> None:
    assert prior_looks(AbSettings(max_pairs=12)) == (3, 6, 9, 12)
    assert prior_looks(AbSettings(max_pairs=8)) == (3, 6, 8)


def test_the_pair_variance_comes_from_the_boots_on_twice_the_degrees_of_freedom() -> None:
    pairs = [_pair(0.0, 0.0), _pair(0.1, 0.0), _pair(0.0, 0.1)]
    changes = [0.0, -0.1, 0.1]
    variance, dof = pair_variance(pairs, changes)
    assert dof == 4
    # Each side's levels 0, 0.1, 0 (in some order): SS = 2 x 0.00667; x 2 / 4 dof.
    assert variance == pytest.approx(2 * (2 * 0.02 / 3) / 4)


def test_the_prior_keeps_its_weight_when_the_pairs_agree_and_loses_it_when_they_do_not() -> None:
    prior = PairPrior(0.03, 14, "test")
    assert prior_weight(0.03**2, 4, prior, first_look=True) == pytest.approx(8)
    assert prior_weight(0.03**2 / 2, 10, prior, first_look=False) == pytest.approx(14)
    assert prior_weight((10 * 0.03) ** 2, 4, prior, first_look=True) < 0.01


def test_the_prior_counts_at_most_twice_the_boots_degrees_of_freedom() -> None:
    prior = PairPrior(0.03, PRIOR_DOF, "test")
    assert PRIOR_DATA_RATIO == 2
    assert prior_weight(0.03**2 / 2, 4, prior, first_look=True) == pytest.approx(8)
    assert prior_weight(0.03**2 / 2, 10, prior, first_look=False) == pytest.approx(PRIOR_DOF)
    assert prior_weight(0.03**2 / 2, 10, PairPrior(0.03, 9, "t"), first_look=False) == 9


def test_after_the_first_look_the_pairs_must_agree_with_the_prior_more_closely() -> None:
    # Pairs spreading 1.5x the prior's spread: within its predictive range on the 4 degrees
    # of freedom of the first look, beyond it on 10 (the weight falls).
    prior = PairPrior(0.03, PRIOR_DOF, "test")
    variance = (1.5 * 0.03) ** 2
    assert prior_weight(variance, 4, prior, first_look=True) == pytest.approx(8)
    later = prior_weight(variance, 10, prior, first_look=False)
    assert 0 < later < PRIOR_DOF / 2
    assert prior_weight(variance, 10, prior, first_look=True) == pytest.approx(PRIOR_DOF)


def test_the_first_look_uses_the_lenient_conflict_check_and_later_looks_the_strict_one() -> None:
    rng = random.Random(2)
    sd = 1.5 * 0.03 / math.sqrt(2)
    pairs = [_pair(rng.gauss(0, sd), rng.gauss(0, sd)) for _ in range(6)]
    prior = PairPrior(0.03, PRIOR_DOF, "test")
    for n, first in ((3, True), (6, False)):
        changes = [c.total for c in (pooled_change(p) for p in pairs[:n]) if c is not None]
        _, used = estimate_with_prior(pairs[:n], changes, AbSettings(), prior)
        assert used is not None
        variance, dof = pair_variance(pairs[:n], changes)
        assert used.prior_dof == pytest.approx(prior_weight(variance, dof, prior, first_look=first))
        assert used.prior_dof != pytest.approx(
            prior_weight(variance, dof, prior, first_look=not first)
        )


def test_a_prior_from_runs_is_sqrt_2_times_their_spread_and_its_weight_is_capped() -> None:
    runs = RunnerSpread(spread=0.05, runs=40, where="p on h")
    prior = PairPrior.from_runner(runs)
    assert prior.spread == pytest.approx(math.sqrt(2) * 0.05)
    assert prior.dof == PRIOR_DOF
    pairs = RunnerSpread(spread=0.05, runs=10, where="p on h", pair_spread=0.04, pairs=6)
    assert PairPrior.from_runner(pairs).spread == 0.04
    assert PairPrior.from_runner(pairs).dof == 5


def test_kim_demets_spends_level_times_t_squared_and_the_t_multiplier_tends_to_z() -> None:
    assert spent(0.02, 0.5, "kim-demets") == pytest.approx(0.005)
    z = z_boundaries(0.02, (0.25, 0.5, 0.75, 1.0), "kim-demets")[0]
    assert scheduled_t_multiplier(0.02, 3, (3, 6, 9, 12), "kim-demets", 1e9) == pytest.approx(z)
    with pytest.raises(ValueError, match="not one of the looks"):
        scheduled_t_multiplier(0.02, 4, (3, 6, 9, 12), "kim-demets", 10.0)


def test_between_looks_there_is_no_interval() -> None:
    rng = random.Random(0)
    pairs = [_pair(rng.gauss(0, 0.02), rng.gauss(0, 0.02)) for _ in range(4)]
    changes = [0.0] * 4
    found, used = estimate_with_prior(pairs, changes, AbSettings(), PairPrior(0.03, 14, "t"))
    assert found.wide is None and used is None
    assert outcome_of(found, AbSettings()) == "continue"


def test_a_10_percent_slowdown_at_3_percent_spread_is_red_at_3_pairs_only_with_the_prior() -> None:
    rng = random.Random(5)
    sd = 0.03 / math.sqrt(2)
    pairs = [_pair(rng.gauss(0, sd), math.log(0.9) + rng.gauss(0, sd)) for _ in range(3)]
    settings = AbSettings(max_pairs=12)
    alone = look(3, pairs, settings)
    with_prior = look(3, pairs, settings, PairPrior(0.03, 14, "10 runs"))
    assert alone.outcome != "regression"
    assert with_prior.outcome == "regression"
    assert "prior pair spread 3.0% from 10 runs" in with_prior.message(0.05)
    # The estimate is the same mean of the pairs' changes; only its interval differs.
    assert with_prior.pooled.estimate.change == pytest.approx(alone.pooled.estimate.change)
    assert estimate([0.0, 0.1, -0.1], settings).wide is not None


def test_with_a_prior_the_deciding_interval_names_kim_demets_and_its_looks() -> None:
    settings = AbSettings(max_pairs=12)
    pairs = [_pair(0.0, -0.12), _pair(0.01, -0.11), _pair(-0.01, -0.12)]
    found = look(3, pairs, settings, PairPrior(0.03, 14, "10 runs"))
    assert found.outcome == "regression"
    sentence = decided_by(found, settings)
    assert "(kim-demets spending over looks after pairs 3, 6, 9, 12, with the runner's prior)" in (
        sentence
    )
    assert "pocock" not in sentence


def test_with_a_prior_a_pair_between_looks_is_not_a_look() -> None:
    settings = AbSettings(max_pairs=12)
    pairs = [_pair(0.0, 0.0), _pair(0.01, 0.0), _pair(0.0, 0.01), _pair(0.0, 0.0)]
    found = look(3, pairs, settings, PairPrior(0.03, 14, "10 runs"))
    assert decided_by(found, settings) == (
        "no interval after 4 pairs: not a look (kim-demets spending over looks after pairs "
        "3, 6, 9, 12, with the runner's prior)"
    )
