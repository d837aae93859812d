"""A/B's evidence: pairs of boots (one base, one head, back to back), each point's change
in a pair, and the estimate over pairs with its repeated intervals (verdict.py decides).

Pure functions, no I/O: the package's docstring gives the design.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_specperf.gate.ab.sequential import Spending, t_multiplier
from pytest_specperf.results.schema import Bound, DepthRun, PointMetrics, ServerCpu
from pytest_specperf.results.stats import log_values

AbOutcome = Literal["regression", "improvement", "no-regression", "continue", "undecided"]
FIRST_LOOK = 2  # an interval over pairs needs two pairs at least


@dataclass(frozen=True)
class AbSettings:
    """What the A/B gate promises (see the module docstring).

    ``alpha``: with no change, a depth is called a regression at most this often (and an
    improvement at most this often). ``min_effect``: the smallest change the gate is for.
    ``beta``: a regression of ``min_effect`` is called no-regression at most this often (detection
    1 - beta once decided). ``max_pairs``: the look at which spending ends.
    """

    alpha: float = 0.01
    beta: float = 0.05
    min_effect: float = 0.05
    max_pairs: int = 12
    spending: Spending = "pocock"
    # The first look: at 2 pairs a t interval has 1 degree of freedom and never decides, so
    # spending error there is waste.
    first_look: int = 3

    def __post_init__(self) -> None:
        for name, value in (
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("min_effect", self.min_effect),
        ):
            if not 0 < value < 0.5:
                raise ValueError(f"A/B setting {name} must be between 0 and 0.5, got {value}")
        if not FIRST_LOOK <= self.first_look <= self.max_pairs:
            raise ValueError(
                f"A/B looks must start at {FIRST_LOOK} pairs or more and at most at max pairs, "
                f"got first look {self.first_look}, max pairs {self.max_pairs}"
            )

    @property
    def margin(self) -> float:
        """The minimum effect on the log scale (a regression of min_effect)."""
        return -math.log(1 - self.min_effect)

    @property
    def smallest_called(self) -> float:
        """On the log scale, the smallest pooled change that is called a regression (or an
        improvement) once the interval excludes zero: half the minimum effect. Head and base
        are never the same build, so a clear -0.5% is real but fails no build."""
        return -math.log(1 - self.min_effect / 2)


@dataclass(frozen=True)
class BootPoint:
    """One point as one boot measured it: its R tok/s samples and its acceptance."""

    concurrency: int
    tok_s: Sequence[float]
    accept_length: float | None = None
    position_accept_rate: Sequence[float] = ()
    # The server's busiest process during the point (None: not measured, e.g. a server by URL).
    cpu: ServerCpu | None = None
    # What bounded the point (results/testbed_schema.point_bound; None: not known).
    bound: Bound | None = None


def boot_point(point: PointMetrics, metric: str = "agg_tok_s") -> BootPoint:
    """A measured point (with or without repeats) as one boot's side of a pair."""
    samples = point.samples or [point]
    values = [float(getattr(s, metric)) for s in samples if getattr(s, metric)]
    return BootPoint(
        concurrency=point.concurrency,
        tok_s=values,
        accept_length=point.accept_length,
        position_accept_rate=list(point.position_accept_rate),
        cpu=point.server_cpu,
        bound=point.bound,
    )


def boot_points(run: DepthRun) -> dict[int, BootPoint]:
    """One boot's side of a pair: its points that served requests, by concurrency."""
    return {p.concurrency: boot_point(p) for p in run.points if p.ok > 0 and p.agg_tok_s > 0}


@dataclass(frozen=True)
class Pair:
    """One base boot and one head boot, by concurrency."""

    base: Mapping[int, BootPoint]
    head: Mapping[int, BootPoint]

    def concurrencies(self) -> list[int]:
        return sorted(
            c for c in self.base if c in self.head and self.base[c].tok_s and self.head[c].tok_s
        )


@dataclass(frozen=True)
class PairChange:
    """One pair's log changes (head / base) of tok/s and of accept length (None: not known)."""

    total: float
    acceptance: float | None


def point_change(base: BootPoint, head: BootPoint) -> PairChange:
    total = statistics.fmean(log_values(head.tok_s)) - statistics.fmean(log_values(base.tok_s))
    acceptance = None
    if base.accept_length and head.accept_length:
        acceptance = math.log(head.accept_length / base.accept_length)
    return PairChange(total, acceptance)


def pooled_change(pair: Pair) -> PairChange | None:
    """The mean over the pair's points of their changes (None: no point on both sides)."""
    changes = [point_change(pair.base[c], pair.head[c]) for c in pair.concurrencies()]
    if not changes:
        return None
    accept = [c.acceptance for c in changes]
    known = [a for a in accept if a is not None]
    return PairChange(
        statistics.fmean(c.total for c in changes),
        statistics.fmean(known) if len(known) == len(changes) else None,
    )


@dataclass(frozen=True)
class Estimate:
    """The mean of per-pair log changes with its repeated intervals (log scale)."""

    change: float
    sd: float | None
    pairs: int
    # (low, high) at the 2 alpha level (regression/improvement) and at 2 beta (equivalence).
    wide: tuple[float, float] | None
    narrow: tuple[float, float] | None


def estimate(values: Sequence[float], settings: AbSettings) -> Estimate:
    """Mean and repeated intervals of per-pair changes at the look of ``len(values)`` pairs."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < settings.first_look:
        return Estimate(mean, None, n, None, None)
    sd = statistics.stdev(values)
    se = sd / math.sqrt(n)
    looks = max(settings.max_pairs, n)

    def interval(level: float) -> tuple[float, float]:
        half = t_multiplier(level, n, looks, settings.spending, first_look=settings.first_look) * se
        return mean - half, mean + half

    return Estimate(mean, sd, n, interval(2 * settings.alpha), interval(2 * settings.beta))


def core_speeds(side: Mapping[int, BootPoint]) -> list[float]:
    """The vCPU speeds timed under one boot's server, one per point that has one."""
    return [p.cpu.core_speed for p in side.values() if p.cpu is not None and p.cpu.core_speed]
