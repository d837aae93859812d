"""A/B mode's verdict: the look after every pair, and every figure behind it.

After every pair from the first look on, a group-sequential look (sequential.py) decides:

- **regression** / **improvement**: the ``2 alpha`` repeated interval lies wholly below /
  above zero. With no change this happens at most ``alpha`` of the time on each side;
- **no-regression**: else, when the lower bound of the ``2 beta`` repeated interval (a
  one-sided ``1 - beta`` bound) of the pooled change is above -min effect: a slowdown of the
  minimum effect or more is ruled out. Under a true regression of the minimum effect this
  happens at most ``beta`` of the time (so a regression of that size is caught with
  probability 1 - beta; if the pairs run out first it is "undecided", not "no-regression").
  Only the slow side is bounded: a gate need not rule out a large improvement before it
  passes, and bounding both sides (an equivalence test) took more pairs with no change;
- else another pair, up to ``max_pairs``; then **undecided**.

A change that is statistically clear is called once it is at least half the minimum effect:
base and head ran on one runner in alternating boots, so a clear -3% is the code's -3% (the
baseline gate, which compares with another day's machine, lets such changes through
instead). A clear change smaller than that is real but fails no build: head and base are
never byte-for-byte the same server, and an A/A of two simulator seeds read such a change.
The minimum effect sets what "no-regression" must rule out, and so the detection promise: a
change of that size is caught with probability 1 - beta.

Repeated intervals hold whatever the stopping rule, so looking after every pair costs nothing
in error rate beyond what the spending function charges (docs/explanation/ab-gating.md has
the measured error rates).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_specperf.gate.ab.estimate import (
    AbOutcome,
    AbSettings,
    BootPoint,
    Estimate,
    Pair,
    PairChange,
    core_speeds,
    estimate,
    point_change,
    pooled_change,
)
from pytest_specperf.gate.ab.prior import (
    PRIOR_SPENDING,
    PairPrior,
    PriorEstimate,
    estimate_with_prior,
    prior_looks,
)
from pytest_specperf.gate.ab.stalls import Stalls, without_stalls
from pytest_specperf.gate.attribution import Attribution, Part, moved_position, percent
from pytest_specperf.results.formats import change_interval, counted, ratio_of, relative_change
from pytest_specperf.results.schema import AbChange, AbPair, AbStall


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
    # Stalled samples, left out or kept (stalls.py), and the pairs as judged.
    stalls: Stalls = field(default_factory=Stalls)
    judged_pairs: tuple[Pair, ...] = ()

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
        stalls = self.stalls.text()
        if stalls:
            text += f"; {stalls}"
        if self.outcome == "no-regression" and narrow is not None:
            bound = relative_change(math.exp(narrow[0]))
            text += (
                f"; its {1 - beta:.0%} repeated lower bound, {bound}, is above -{min_effect:.0%}"
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
    low, high = (math.exp(x) for x in estimate.wide)
    wide = f"the pooled change's {wide_level} {change_interval(low, high)}"
    bound = relative_change(math.exp(estimate.narrow[0]))
    change = relative_change(math.exp(estimate.change))
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
    :func:`estimate_with_prior`. A sample that stalled is left out first (stalls.py)."""
    judged, stalls = without_stalls(pairs, settings.min_effect)
    with_change = [p for p in judged if pooled_change(p) is not None]
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
        attribution=_attribution(pooled_changes, pooled_estimate, judged, None, settings),
    )
    concurrencies = sorted({c for p in judged for c in p.concurrencies()})
    points = []
    for c in concurrencies:
        with_point = [p for p in judged if c in p.concurrencies()]
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
        stalls=stalls,
        judged_pairs=tuple(judged),
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


def stall_records(stalls: Stalls) -> list[AbStall]:
    return [
        AbStall(
            pair=stall.pair,
            side=stall.side,
            concurrency=stall.concurrency,
            tok_s=stall.value,
            others_median=stall.others_median,
            left_out=left_out,
        )
        for left_out, group in ((True, stalls.left_out), (False, stalls.kept))
        for stall in group
    ]


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


def pair_spread_line(pairs: Sequence[AbPair]) -> str:
    """The pairs' changes and their spread, the standard deviation over pairs of the log
    change: an A/A's figure for a CPU placement (docs/explanation/ab-gating.md)."""
    changes = ", ".join(relative_change(ratio_of(pair.change)) for pair in pairs)
    if len(pairs) < 2:
        return f"pair changes: {changes or 'none'} (a spread needs 2 pairs or more)"
    spread = statistics.stdev(math.log1p(pair.change) for pair in pairs)
    return f"pair changes: {changes}; their spread {spread:.1%} (standard deviation, log scale)"


def _core_speed(side: Mapping[int, BootPoint]) -> float | None:
    speeds = core_speeds(side)
    return statistics.median(speeds) if speeds else None


def change_record(summary: PointSummary) -> AbChange:
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
