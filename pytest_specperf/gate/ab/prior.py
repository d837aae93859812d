"""A/B with the runner's history: a prior for the pair spread (issue 38).

Pure functions, no I/O. verdict.py's ``look`` judges the pooled change with
:func:`estimate_with_prior` when the run's history gives a :class:`PairPrior`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_specperf.gate.ab.estimate import AbSettings, BootPoint, Estimate, Pair
from pytest_specperf.gate.ab.sequential import Spending, scheduled_t_multiplier
from pytest_specperf.results.runner_spread import RunnerSpread
from pytest_specperf.results.stats import log_values

# -- the verdict with the runner's history (issue 38) ---------------------------------------
# Pairs x points x samples in one model: a boot's level (the mean over the common points of
# its samples' mean log tok/s) is the side's level plus that boot's own factor; the change is
# head's mean level less base's (the mean of the pairs' pooled changes: the same estimate as
# without the history), its variance that of the boots' levels about their side's mean, on
# 2 (pairs - 1) degrees of freedom (pairs - 1 when the boots of a pair are compared alone; a
# drift shared by both boots of a pair only widens it). The pair variance has a
# scaled-inverse-chi-square prior: the pair spread the runner's history shows, on at most
# PRIOR_DOF degrees of freedom and at most PRIOR_DATA_RATIO times the boots' own (8 at the
# first look of 3 pairs, 20 from the second), discounted when the pairs disagree with it:
# their variance beyond the prior's upper prior-predictive tail (F on the boots' and the
# prior's degrees of freedom) of PRIOR_CONFLICT_FIRST at the first look and PRIOR_CONFLICT
# after it makes the prior's weight fall in proportion to the tail probability. At the first
# look 4 degrees of freedom cannot tell a right history from one 2x off, so the history there
# counts little and is dropped only when the pairs contradict it outright; from the second
# look the pairs can tell, so the history counts more and must agree with them closely. A
# history that no longer holds thereby cannot make the intervals narrow. Looks every
# first_look pairs (3, 6, 9, 12), Kim-DeMets spending (rho 2). The choices were measured in
# simulated comparisons (docs/explanation/ab-gating.md has the tables).
PRIOR_DOF = 20
PRIOR_DATA_RATIO = 2
PRIOR_CONFLICT_FIRST = 0.05
PRIOR_CONFLICT = 0.5
PRIOR_SPENDING: Spending = "kim-demets"


@dataclass(frozen=True)
class PairPrior:
    """What the runner's history says of the spread of one pair's pooled change (log scale)."""

    spread: float
    dof: float
    where: str

    @classmethod
    def from_runner(cls, runner: RunnerSpread) -> PairPrior:
        """Earlier A/B pairs' spread where recorded, else sqrt(2) x the spread between runs
        (a pair's change is the difference of two boots' levels)."""
        if runner.pair_spread is not None:
            placed = (
                f" (server CPU {runner.pairs_placement})"
                if runner.pairs_placement is not None
                else ""
            )
            return cls(
                runner.pair_spread,
                min(runner.pairs - 1, PRIOR_DOF),
                f"{runner.pairs} earlier A/B pairs{placed} of {runner.where}",
            )
        return cls(
            math.sqrt(2) * runner.spread,
            min(runner.dof, PRIOR_DOF),
            f"{runner.text()} of {runner.where}, x sqrt(2)",
        )

    def text(self) -> str:
        return (
            f"prior pair spread {self.spread:.1%} from {self.where}, "
            f"weight up to {self.dof:g} degrees of freedom"
        )


def prior_looks(settings: AbSettings) -> tuple[int, ...]:
    """The looks with a prior: every first_look pairs, and the last pair."""
    looks = list(range(settings.first_look, settings.max_pairs + 1, settings.first_look))
    if looks[-1] != settings.max_pairs:
        looks.append(settings.max_pairs)
    return tuple(looks)


def boot_levels(pairs: Sequence[Pair]) -> tuple[list[float], list[float]] | None:
    """Each boot's level, base's and head's, over the points every pair measured on both sides
    (None: no such point)."""
    common = set.intersection(*(set(p.concurrencies()) for p in pairs)) if pairs else set()
    if not common:
        return None

    def level(side: Mapping[int, BootPoint]) -> float:
        return statistics.fmean(statistics.fmean(log_values(side[c].tok_s)) for c in common)

    return [level(p.base) for p in pairs], [level(p.head) for p in pairs]


def pair_variance(pairs: Sequence[Pair], changes: Sequence[float]) -> tuple[float, int]:
    """The variance of one pair's pooled change and its degrees of freedom: from the boots'
    levels about their side's mean (2 (n - 1)), or from the pairs' changes (n - 1) when no
    point is common to every pair."""
    levels = boot_levels(pairs)
    n = len(changes)
    if levels is None or len(levels[0]) != n:
        return statistics.variance(changes), n - 1
    squares = sum(sum((x - statistics.fmean(side)) ** 2 for x in side) for side in levels)
    dof = 2 * (n - 1)
    return 2 * squares / dof, dof


def prior_weight(variance: float, dof: int, prior: PairPrior, *, first_look: bool) -> float:
    """The prior's degrees of freedom at a look where the boots give ``variance`` on ``dof``:
    the history's, at most PRIOR_DATA_RATIO x dof, all of them while the pairs' variance is
    within the prior's predictive range, less in proportion beyond it (a stricter range after
    the first look; see above)."""
    from scipy import stats

    if prior.dof <= 0 or prior.spread <= 0:
        return 0.0
    weight = min(prior.dof, PRIOR_DATA_RATIO * dof)
    tail = float(stats.f.sf(variance / prior.spread**2, dof, weight))
    conflict = PRIOR_CONFLICT_FIRST if first_look else PRIOR_CONFLICT
    return weight * min(1.0, tail / conflict)


@dataclass(frozen=True)
class PriorEstimate:
    """Beside an estimate with a prior: the pooled spread it used and the weights in it."""

    spread: float
    data_dof: int
    prior_dof: float


def estimate_with_prior(
    pairs: Sequence[Pair], values: Sequence[float], settings: AbSettings, prior: PairPrior
) -> tuple[Estimate, PriorEstimate | None]:
    """The pooled change at a look, its variance from the boots and the prior together (see
    above); between looks an estimate without intervals (another pair)."""
    n = len(values)
    mean = statistics.fmean(values)
    looks = prior_looks(settings)
    if n > looks[-1]:
        looks = (*looks, n)
    if n < settings.first_look or n not in looks:
        return Estimate(mean, None, n, None, None), None
    variance, dof = pair_variance(pairs, values)
    weight = prior_weight(variance, dof, prior, first_look=n == looks[0])
    pooled = (weight * prior.spread**2 + dof * variance) / (weight + dof)
    se = math.sqrt(pooled / n)

    def interval(level: float) -> tuple[float, float]:
        half = scheduled_t_multiplier(level, n, looks, PRIOR_SPENDING, weight + dof) * se
        return mean - half, mean + half

    found = Estimate(
        mean, math.sqrt(pooled), n, interval(2 * settings.alpha), interval(2 * settings.beta)
    )
    return found, PriorEstimate(math.sqrt(pooled), dof, weight)
