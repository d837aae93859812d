"""A/B gating: base and head booted in pairs on one runner, judged after every pair.

Pure functions, no I/O, no pytest, no server. The unit of analysis is the pair of boots
(one base boot, one head boot, measured back to back): in each pair and for each point, the
change is the mean log tok/s of head's repeats less base's; pooled per depth, it is the mean
of the points' changes. Over pairs these changes are independent draws, so their spread *is*
the boot-to-boot noise (plus what is left of the within-boot noise): it is measured, never
assumed, and an interval over pairs carries it.

After every pair from the second on, a group-sequential look (gate/sequential.py) decides:

- **regression** / **improvement**: the ``2 alpha`` repeated interval lies wholly below /
  above zero. With no change this happens at most ``alpha`` of the time on each side;
- **no-regression**: else, when the lower bound of the ``2 beta`` repeated interval (a
  one-sided ``1 - beta`` bound) of the pooled change is above -min effect: a slowdown of the
  minimum effect or more is ruled out. Under a true regression of the minimum effect this
  happens at most ``beta`` of the time (so a regression of that size is caught with
  probability 1 - beta; if the pairs run out first it is "undecided", not "no-regression").
  Only the slow side is bounded: a gate need not rule out a large improvement before it
  passes, and bounding both sides (an equivalence test) took about half again as many pairs
  with no change (lab/studies/ab_study.py, docs/explanation/ab-gating.md);
- else another pair, up to ``max_pairs``; then **undecided**.

A change that is statistically clear is called once it is at least half the minimum effect:
base and head ran on one runner in alternating boots, so a clear -3% is the code's -3% (the
baseline gate, which compares with another day's machine, lets such changes through
instead). A clear change smaller than that (the simulator's A/A with two seeds read -0.5%
[-1.1, -0.0] and went red before this rule) is real but fails no build: head and base are
never byte-for-byte the same server. The minimum effect sets what "no-regression" must rule out,
and so the detection promise: a change of that size is caught with probability 1 - beta.

Repeated intervals hold whatever the stopping rule, so looking after every pair costs nothing
in error rate beyond what the spending function charges; lab/studies/ab_study.py measures it
(docs/explanation/ab-gating.md).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from scipy import stats

from pytest_specperf.gate.attribution import Attribution, Part, moved_position, percent
from pytest_specperf.gate.sequential import Spending, scheduled_t_multiplier, t_multiplier
from pytest_specperf.results.formats import counted
from pytest_specperf.results.schema import (
    AbChange,
    AbComparison,
    AbPair,
    DepthRun,
    PointMetrics,
    ServerCpu,
)
from pytest_specperf.results.spread import RunnerSpread
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
    # spending error there is waste (lab/studies/ab_study.py --first-look compares).
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
    )


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


# -- the verdict with the runner's history (issue 38) ---------------------------------------
# Pairs x points x samples in one model: a boot's level (the mean over the common points of
# its samples' mean log tok/s) is the side's level plus that boot's own factor; the change is
# head's mean level less base's (the mean of the pairs' pooled changes: the same estimate as
# without the history), its variance that of the boots' levels about their side's mean, on
# 2 (pairs - 1) degrees of freedom (pairs - 1 when the boots of a pair are compared alone; a
# drift shared by both boots of a pair only widens it). The pair variance has a
# scaled-inverse-chi-square prior: the pair spread the runner's history shows, on at most
# PRIOR_DOF degrees of freedom, discounted when the pairs disagree with it (their variance
# beyond its PRIOR_CONFLICT upper prior-predictive tail: the prior's weight falls in
# proportion to the tail probability), so a history that no longer holds cannot make the
# intervals narrow. Looks every first_look pairs (3, 6, 9, 12), Kim-DeMets spending (rho 2).
# The choices are lab/studies/ab_study.py's (docs/explanation/ab-gating.md has the table).
PRIOR_DOF = 14
PRIOR_CONFLICT = 0.2
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
            return cls(
                runner.pair_spread,
                min(runner.pairs - 1, PRIOR_DOF),
                f"{runner.pairs} earlier A/B pairs of {runner.where}",
            )
        return cls(
            math.sqrt(2) * runner.spread,
            min(runner.dof, PRIOR_DOF),
            f"{runner.text()} of {runner.where}, x sqrt(2)",
        )

    def text(self) -> str:
        return (
            f"prior pair spread {self.spread:.1%} from {self.where}, "
            f"weight {self.dof:g} degrees of freedom"
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


def prior_weight(variance: float, dof: int, prior: PairPrior) -> float:
    """The prior's degrees of freedom after the conflict check: all of them while the pairs'
    variance is within the prior's predictive range, less in proportion beyond it."""
    if prior.dof <= 0 or prior.spread <= 0:
        return 0.0
    tail = float(stats.f.sf(variance / prior.spread**2, dof, prior.dof))
    return prior.dof * min(1.0, tail / PRIOR_CONFLICT)


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
    weight = prior_weight(variance, dof, prior)
    pooled = (weight * prior.spread**2 + dof * variance) / (weight + dof)
    se = math.sqrt(pooled / n)

    def interval(level: float) -> tuple[float, float]:
        half = scheduled_t_multiplier(level, n, looks, PRIOR_SPENDING, weight + dof) * se
        return mean - half, mean + half

    found = Estimate(
        mean, math.sqrt(pooled), n, interval(2 * settings.alpha), interval(2 * settings.beta)
    )
    return found, PriorEstimate(math.sqrt(pooled), dof, weight)


def outcome_of(pooled: Estimate, settings: AbSettings) -> AbOutcome:
    """The decision of one look on the pooled change (see the module docstring)."""
    if pooled.wide is None or pooled.narrow is None:
        return "continue"
    if pooled.wide[1] < 0 and pooled.change <= -settings.smallest_called:
        return "regression"
    if pooled.wide[0] > 0 and pooled.change >= settings.smallest_called:
        return "improvement"
    if pooled.narrow[0] > -settings.margin:
        return "no-regression"
    return "undecided" if pooled.pairs >= settings.max_pairs else "continue"


@dataclass(frozen=True)
class PointSummary:
    """One point (or, with concurrency None, the depth pooled) over the pairs so far."""

    concurrency: int | None
    base_median: float | None
    head_median: float | None
    estimate: Estimate
    attribution: Attribution


@dataclass(frozen=True)
class AbLook:
    """Everything one look knows: the depth's outcome, the pooled figures and every point."""

    depth: int
    outcome: AbOutcome
    pairs: int
    pooled: PointSummary
    points: list[PointSummary] = field(default_factory=list)
    prior: PairPrior | None = None
    prior_estimate: PriorEstimate | None = None

    def prior_line(self) -> str:
        """What the runner's history added to this look (empty: no history)."""
        return _prior_line(self) if self.prior is not None else ""

    @property
    def decided(self) -> bool:
        return self.outcome not in ("continue",)

    def message(self, min_effect: float, beta: float = 0.05) -> str:
        """One line: the verdict, the pooled change and why it moved."""
        what = {
            "regression": "REGRESSION",
            "improvement": "improvement",
            "no-regression": f"no regression of {min_effect:.0%} or more",
            "continue": "not decided yet",
            "undecided": "undecided at max pairs",
        }[self.outcome]
        cause = self.pooled.attribution.cause
        why = (
            f" (moved by {cause})"
            if cause and self.outcome in ("regression", "improvement")
            else ""
        )
        text = (
            f"steps={self.depth} A/B: {what}{why} after {self.pairs} pair(s): "
            f"{self.pooled.attribution.text()}"
        )
        narrow = self.pooled.estimate.narrow
        if self.prior is not None:
            text += f"; {self.prior_line()}"
        if self.outcome == "no-regression" and narrow is not None:
            text += (
                f"; its {1 - beta:.0%} repeated lower bound, {percent(narrow[0]) * 100:+.1f}%, "
                f"is above -{min_effect:.0%}"
            )
        return text


def decided_by(found: AbLook, settings: AbSettings) -> str:
    """Which repeated interval of the pooled change decided at this look, in one sentence
    (its level, the look, the spending), or why none did yet."""
    estimate = found.pooled.estimate
    if found.prior is not None:
        # With the runner's prior the looks and the spending are the prior's (see above),
        # not the settings' default.
        looks = prior_looks(settings)
        schedule = (
            f"{PRIOR_SPENDING} spending over looks after pairs {', '.join(map(str, looks))}, "
            "with the runner's prior"
        )
    else:
        schedule = (
            f"{settings.spending} spending over looks after pairs "
            f"{settings.first_look}..{settings.max_pairs}"
        )
    if estimate.wide is None or estimate.narrow is None:
        if found.prior is not None and found.pairs >= settings.first_look:
            return f"no interval after {counted(found.pairs, 'pair')}: not a look ({schedule})"
        return (
            f"no interval yet after {counted(found.pairs, 'pair')}: the first look is after "
            f"pair {settings.first_look}"
        )
    wide_level = f"{1 - 2 * settings.alpha:.0%} repeated interval"
    bound_level = f"{1 - settings.beta:.0%} repeated lower bound"
    when = f"at the look after pair {found.pairs} ({schedule})"
    low, high = (percent(x) * 100 for x in estimate.wide)
    wide = f"the pooled change's {wide_level} [{low:+.1f}, {high:+.1f}]%"
    bound = f"{percent(estimate.narrow[0]) * 100:+.1f}%"
    change = f"{percent(estimate.change) * 100:+.1f}%"
    half = f"{settings.min_effect / 2:.1%}"
    if found.outcome == "regression":
        return f"decided by {wide} {when}: below 0, and {change} is beyond -{half}"
    if found.outcome == "improvement":
        return f"decided by {wide} {when}: above 0, and {change} is beyond +{half}"
    if found.outcome == "no-regression":
        return (
            f"decided by the pooled change's {bound_level} {when}: {bound} is above "
            f"-{settings.min_effect:.0%}"
        )
    return (
        f"not decided {when}: {wide} does not lie beyond 0 by half the minimum effect "
        f"({half}), and its {bound_level}, {bound}, is not above -{settings.min_effect:.0%}"
    )


def _prior_line(found: AbLook) -> str:
    assert found.prior is not None
    used = found.prior_estimate
    if used is None:
        return f"with the runner's {found.prior.text()} (no look at this pair)"
    return (
        f"with the runner's {found.prior.text()}: pooled pair spread {used.spread:.1%} "
        f"({used.data_dof} dof from the boots, {used.prior_dof:.1f} from the prior)"
    )


def look(
    depth: int, pairs: Sequence[Pair], settings: AbSettings, prior: PairPrior | None = None
) -> AbLook:
    """The state of the comparison after ``pairs``: the decision and every figure behind it;
    with ``prior`` (the runner's history), the pooled change is judged by
    :func:`estimate_with_prior`."""
    with_change = [p for p in pairs if pooled_change(p) is not None]
    pooled_changes = [c for c in (pooled_change(p) for p in with_change) if c is not None]
    if not pooled_changes:
        raise ValueError("no point was measured on both sides of any pair")
    used: PriorEstimate | None = None
    if prior is None:
        pooled_estimate = estimate([c.total for c in pooled_changes], settings)
    else:
        pooled_estimate, used = estimate_with_prior(
            with_change, [c.total for c in pooled_changes], settings, prior
        )
    pooled = PointSummary(
        concurrency=None,
        base_median=None,
        head_median=None,
        estimate=pooled_estimate,
        attribution=_attribution(pooled_changes, pooled_estimate, pairs, None, settings),
    )
    concurrencies = sorted({c for p in pairs for c in p.concurrencies()})
    points = []
    for c in concurrencies:
        with_point = [p for p in pairs if c in p.concurrencies()]
        changes = [point_change(p.base[c], p.head[c]) for p in with_point]
        point_estimate = estimate([x.total for x in changes], settings)
        points.append(
            PointSummary(
                concurrency=c,
                base_median=statistics.median(v for p in with_point for v in p.base[c].tok_s),
                head_median=statistics.median(v for p in with_point for v in p.head[c].tok_s),
                estimate=point_estimate,
                attribution=_attribution(changes, point_estimate, with_point, c, settings),
            )
        )
    return AbLook(
        depth=depth,
        outcome=outcome_of(pooled_estimate, settings),
        pairs=len(pooled_changes),
        pooled=pooled,
        points=points,
        prior=prior,
        prior_estimate=used,
    )


def _attribution(
    changes: Sequence[PairChange],
    total: Estimate,
    pairs: Sequence[Pair],
    concurrency: int | None,
    settings: AbSettings,
) -> Attribution:
    label = "agg" if concurrency is None else f"C={concurrency} agg"
    total_part: Part = (total.change, *_bounds(total))
    accept = [c.acceptance for c in changes]
    if any(a is None for a in accept):
        return Attribution(total_part, None, None, label=label)
    acceptance = estimate([a for a in accept if a is not None], settings)
    step = estimate([c.total - (c.acceptance or 0.0) for c in changes], settings)
    return Attribution(
        total_part,
        (acceptance.change, *_bounds(acceptance)),
        (step.change, *_bounds(step)),
        position=moved_position(
            _mean_rates(pairs, concurrency, "base"), _mean_rates(pairs, concurrency, "head")
        ),
        label=label,
    )


def _bounds(value: Estimate) -> tuple[float | None, float | None]:
    return value.wide if value.wide is not None else (None, None)


def _mean_rates(pairs: Sequence[Pair], concurrency: int | None, side: str) -> list[float]:
    """Position by position, the mean acceptance rate of one side over pairs and points."""
    rates: list[Sequence[float]] = []
    for pair in pairs:
        points = pair.base if side == "base" else pair.head
        for c in pair.concurrencies():
            if concurrency is None or c == concurrency:
                rates.append(points[c].position_accept_rate)
    rates = [r for r in rates if r]
    if not rates:
        return []
    longest = max(len(r) for r in rates)
    return [statistics.fmean(r[i] for r in rates if i < len(r)) for i in range(longest)]


def change_percent(value: Estimate) -> tuple[float, float | None, float | None]:
    """The estimate as fractional changes: (change, low, high) of the 2 alpha interval."""
    low, high = _bounds(value)
    return (
        percent(value.change),
        None if low is None else percent(low),
        None if high is None else percent(high),
    )


@dataclass
class AbRun:
    """One depth's A/B comparison as it stands: the pairs, the last look, what it cost."""

    depth: int
    settings: AbSettings
    pairs: list[Pair] = field(default_factory=list)
    last: AbLook | None = None
    # Seconds the servers were up (boot, measuring, stop): GPU-seconds with one GPU each.
    server_seconds: float = 0.0
    # The sides in the order they were booted ("base", "head", "head", "base", ...).
    boots: list[str] = field(default_factory=list)
    # The latest head boot's run: the points the per-point tests see.
    head_run: DepthRun | None = None
    failure: str | None = None
    # Set when a signal ended the comparison: what it was doing, how many pairs it had.
    interrupted: str | None = None
    # The runner's history as a prior for the pair spread (None: no --specperf-history, or
    # too few comparable runs in it).
    prior: PairPrior | None = None

    def cost(self) -> str:
        return (
            f"{len(self.pairs)} pair(s), {len(self.boots)} boots "
            f"({' '.join(side[0].upper() for side in self.boots)}), "
            f"{self.server_seconds:,.0f} server-seconds"
        )

    def summary_lines(self) -> list[str]:
        """The verdict, then each point's change and why, then what it cost."""
        if self.last is None:
            return [self.failure or f"steps={self.depth} A/B: no pair was measured"]
        lines = [self.last.message(self.settings.min_effect, self.settings.beta)]
        for point in self.last.points:
            lines.append(
                f"  C={point.concurrency}: base {point.base_median or 0:,.1f} -> head "
                f"{point.head_median or 0:,.1f} tok/s (medians); {point.attribution.text()}"
            )
        lines.append(f"  cost: {self.cost()}")
        if self.failure is not None:
            lines.append(f"  {self.failure}")
        return lines

    def comparison(self) -> AbComparison:
        """What results.json keeps of this comparison."""
        found = self.last
        if self.interrupted is not None:
            outcome: str = "interrupted"
            message = self.interrupted + (
                f"; at the last look: {found.message(self.settings.min_effect, self.settings.beta)}"
                if found is not None
                else ""
            )
        else:
            outcome = "failed" if self.failure is not None or found is None else found.outcome
            message = " ".join(self.summary_lines()[:1])
        return AbComparison(
            depth=self.depth,
            outcome=outcome,
            pairs=len(self.pairs),
            boots=list(self.boots),
            server_seconds=round(self.server_seconds, 1),
            min_effect=self.settings.min_effect,
            alpha=self.settings.alpha,
            message=message,
            interval_level=1 - 2 * self.settings.alpha,
            decided_by=decided_by(found, self.settings) if found is not None else "",
            pooled=_change(found.pooled) if found is not None else None,
            points=[_change(p) for p in found.points] if found is not None else [],
            pair_changes=[
                record
                for number, pair in enumerate(self.pairs, start=1)
                if (record := pair_record(number, pair)) is not None
            ],
        )


def pair_record(number: int, pair: Pair) -> AbPair | None:
    """One pair's pooled change and its parts, with the vCPU speeds under each side's server
    (None: no point measured on both sides)."""
    change = pooled_change(pair)
    if change is None:
        return None
    accept = change.acceptance
    return AbPair(
        pair=number,
        change=percent(change.total),
        acceptance_change=percent(accept) if accept is not None else None,
        step_time_change=percent(change.total - accept) if accept is not None else None,
        base_core_speed=_core_speed(pair.base),
        head_core_speed=_core_speed(pair.head),
    )


def core_speeds(side: Mapping[int, BootPoint]) -> list[float]:
    """The vCPU speeds timed under one boot's server, one per point that has one."""
    return [p.cpu.core_speed for p in side.values() if p.cpu is not None and p.cpu.core_speed]


def _core_speed(side: Mapping[int, BootPoint]) -> float | None:
    speeds = core_speeds(side)
    return statistics.median(speeds) if speeds else None


def _change(summary: PointSummary) -> AbChange:
    change, low, high = change_percent(summary.estimate)
    why = summary.attribution
    return AbChange(
        concurrency=summary.concurrency,
        base_median=summary.base_median,
        head_median=summary.head_median,
        change=change,
        low=low,
        high=high,
        acceptance_change=percent(why.acceptance[0]) if why.acceptance else None,
        step_time_change=percent(why.step_time[0]) if why.step_time else None,
        why=why.text(),
    )
