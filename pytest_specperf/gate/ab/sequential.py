"""Group-sequential boundaries: repeated confidence intervals that hold under optional stopping.

Pure numerics (scipy, numpy), no I/O. An A/B comparison looks at its data after every pair
of boots and stops as soon as the answer is known. Looking again and again at an ordinary
95% interval makes it miss far more often than 5% of the time; a group-sequential design
spends the error rate over the looks instead (Lan and DeMets' alpha-spending functions), so
that the intervals of every look hold *together*: whatever rule decides when to stop, the
true change lies outside the interval of the look where one stopped at most ``level`` of the
time (Jennison and Turnbull's repeated confidence intervals).

The boundaries are computed for a normal statistic with known variance: look k of K sees
information fraction t_k = n_k / N, the score S(t) is a Brownian motion, and the crossing
probability of each look is found by numerical integration over the paths that have not
crossed before (the Armitage-McPherson-Rowe recursion). The A/B gate estimates the
boot-to-boot variance from the pairs themselves, so each look's normal boundary is turned
into a Student t boundary with n - 1 degrees of freedom at the same nominal tail
probability; docs/explanation/ab-gating.md gives the error rates that result, measured.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Literal

import numpy as np

Spending = Literal["pocock", "obrien-fleming", "kim-demets"]
SPENDING_FUNCTIONS: tuple[Spending, ...] = ("pocock", "obrien-fleming", "kim-demets")

# Points of the integration grid over the continuation region of one look.
_GRID = 301


def spent(level: float, fraction: float, spending: Spending) -> float:
    """The two-sided error spent by information fraction ``fraction`` (Lan-DeMets forms).

    Pocock-type, level x ln(1 + (e - 1) t), spends early (stops sooner on large changes);
    O'Brien-Fleming-type, 2 - 2 Phi(z(1 - level/2) / sqrt(t)), keeps almost all of it for
    the last looks (narrower final interval, few early stops); Kim-DeMets' power family at
    rho = 2, level x t^2, lies between them.
    """
    from scipy import stats

    t = min(max(fraction, 0.0), 1.0)
    if t == 0:
        return 0.0
    if spending == "pocock":
        return level * math.log(1 + (math.e - 1) * t)
    if spending == "kim-demets":
        return level * t * t
    z = float(stats.norm.ppf(1 - level / 2))
    return float(2 - 2 * stats.norm.cdf(z / math.sqrt(t)))


@functools.lru_cache(maxsize=256)
def z_boundaries(
    level: float, fractions: tuple[float, ...], spending: Spending
) -> tuple[float, ...]:
    """Two-sided symmetric normal boundaries c_1..c_K: P(|Z_k| >= c_k at some look) = level.

    ``fractions``: increasing information fractions of the looks, the last one 1.
    """
    return boundaries_for_spending(
        level, fractions, functools.partial(spent, level, spending=spending)
    )


def boundaries_for_spending(
    level: float, fractions: tuple[float, ...], spend: Callable[[float], float]
) -> tuple[float, ...]:
    """z_boundaries for any spending function: ``spend(t)`` is the two-sided error spent by
    information fraction t (spend(1) = level), so that other spending functions can be tried."""
    from scipy import optimize, stats

    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    if not fractions or any(b <= a for a, b in itertools.pairwise(fractions)):
        raise ValueError(f"information fractions must increase: {fractions}")
    bounds: list[float] = []
    grid = np.zeros(0)
    density = np.zeros(0)
    weights = np.zeros(0)
    previous_t = 0.0
    previous_spent = 0.0
    for t in fractions:
        target = spend(t) - previous_spent
        step = t - previous_t
        sd = math.sqrt(step)
        mass = density * weights
        scale = math.sqrt(t)
        if target <= 1e-15:
            b = 40.0 * scale
        else:
            b = optimize.brentq(
                _excess, 1e-9, 40.0 * scale, args=(sd, grid, mass, target), xtol=1e-10
            )
        crossed = _exit(b, sd, grid, mass)
        bounds.append(b / scale)
        new_grid = np.linspace(-b, b, _GRID)
        new_weights = _simpson_weights(new_grid)
        if grid.size == 0:
            new_density = stats.norm.pdf(new_grid / sd) / sd
        else:
            kernel = stats.norm.pdf((new_grid[:, None] - grid[None, :]) / sd) / sd
            new_density = kernel @ (density * weights)
        grid, density, weights = new_grid, new_density, new_weights
        previous_t = t
        previous_spent += crossed
    return tuple(bounds)


def _exit(bound: float, sd: float, grid: np.ndarray, mass: np.ndarray) -> float:
    """The probability of crossing +-bound at this look, from the paths still running (their
    score on ``grid`` weighted by ``mass``; none yet: every path starts at 0)."""
    from scipy import stats

    if grid.size == 0:
        return float(2 * stats.norm.sf(bound / sd))
    out = stats.norm.sf((bound - grid) / sd) + stats.norm.cdf((-bound - grid) / sd)
    return float(np.dot(mass, out))


def _excess(bound: float, sd: float, grid: np.ndarray, mass: np.ndarray, goal: float) -> float:
    return _exit(bound, sd, grid, mass) - goal


def _simpson_weights(grid: np.ndarray) -> np.ndarray:
    h = (grid[-1] - grid[0]) / (len(grid) - 1)
    weights = np.ones(len(grid))
    weights[1:-1:2] = 4
    weights[2:-1:2] = 2
    return np.asarray(weights * h / 3)


@functools.lru_cache(maxsize=4096)
def t_multiplier(
    level: float, pairs: int, max_pairs: int, spending: Spending, *, first_look: int = 2
) -> float:
    """The half-width multiplier of the repeated interval at ``pairs`` pairs (of ``max_pairs``).

    Looks are at first_look, first_look + 1, ..., max_pairs pairs; the look's normal boundary
    becomes a Student t quantile with pairs - 1 degrees of freedom at the same tail probability.
    """
    from scipy import stats

    if not first_look <= pairs <= max_pairs:
        raise ValueError(f"a look at {pairs} pairs is outside {first_look}..{max_pairs}")
    fractions = tuple(n / max_pairs for n in range(first_look, max_pairs + 1))
    z = z_boundaries(level, fractions, spending)[pairs - first_look]
    tail = float(stats.norm.sf(z))
    return float(stats.t.isf(tail, pairs - 1))


@functools.lru_cache(maxsize=4096)
def scheduled_t_multiplier(
    level: float, pairs: int, looks: tuple[int, ...], spending: Spending, dof: float
) -> float:
    """The half-width multiplier of the repeated interval at the look of ``pairs`` pairs, when
    the looks are at ``looks`` pairs (the last one the horizon) and the variance carries
    ``dof`` degrees of freedom: the look's normal boundary as a Student t quantile at the
    same tail probability."""
    from scipy import stats

    if pairs not in looks:
        raise ValueError(f"a look at {pairs} pairs is not one of the looks {looks}")
    fractions = tuple(n / looks[-1] for n in looks)
    z = z_boundaries(level, fractions, spending)[looks.index(pairs)]
    return float(stats.t.isf(float(stats.norm.sf(z)), dof))
