"""The statistics of the gate: summaries of repeated samples and the per-metric decision.

Pure functions, no I/O, no pytest. Throughput noise is multiplicative (a slow boot or a
noisy neighbour scales every figure by a factor), so every computation works on the
logarithms of the samples: a difference of log means is a log-ratio, and a standard error
on the log scale is (for small values) a coefficient of variation.

Every point's verdict is made here (``point_verdict``), the judged ones and those the gate
could not judge on their figures: a figure the baseline has and the run did not measure (a
failure), a point the load generator bounded (neither pass nor fail), a point the baseline has
no figures for (never silent: a gating run fails on it, gate/no_verdict.py). ``Reference`` is
the baseline's side of one figure.

Summaries of repeated samples (``summarize``, median and interval) live in
``pytest_specperf.results.stats`` so that the measuring side can use them; they are
re-exported here.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pytest_specperf.gate.noise import MetricNoise, noise_for
from pytest_specperf.results.formats import BETTER_WORSE, relative_change, samples_summary
from pytest_specperf.results.runner_spread import RunnerSpread
from pytest_specperf.results.schema import Interval, Verdict, VerdictOutcome
from pytest_specperf.results.stats import (
    INTERVAL_LEVEL,
    log_sd,
    log_values,
    normal_quantile,
    summarize,
    t_quantile,
)

__all__ = ["INTERVAL_LEVEL", "log_sd", "log_values", "summarize"]


# -- a point's verdict, and the baseline's side of one figure ----------------------------

LABELS = {
    "agg_tok_s": "agg tok/s",
    "per_req_tok_s": "per-req tok/s",
    "accept_length": "accept length",
    "ttft_s": "TTFT s",
    "itl_s": "ITL s",
}


@dataclass(frozen=True)
class Reference:
    """The baseline's side of one figure of one point."""

    figure: float
    samples: Sequence[float] = ()
    boots: int = 1
    noise: MetricNoise | None = None
    published: bool = False
    tolerance: float = 0.10
    # The spread between this runner's earlier runs (--specperf-history), None: not known.
    runner: RunnerSpread | None = None


def where(depth: int, concurrency: int | None, load: str | None = None) -> str:
    """``steps=3 C=16``, ``steps=3 rate=4`` (an open-loop point) or ``steps=3`` (the depth)."""
    if load is not None:
        return f"steps={depth} {load}"
    return f"steps={depth} C={concurrency}" if concurrency is not None else f"steps={depth}"


def point_verdict(
    depth: int,
    concurrency: int | None,
    load: str | None,
    metric: str,
    outcome: VerdictOutcome,
    message: str,
    **figures: Any,
) -> Verdict:
    """The verdict of one point's ``metric``; an open-loop point (``load``) has no concurrency."""
    return Verdict(
        depth=depth,
        concurrency=None if load is not None else concurrency,
        load=load,
        metric=metric,
        outcome=outcome,
        message=message,
        **figures,
    )


# -- the verdicts of points not judged on their figures ----------------------------------


def not_measured(
    depth: int, concurrency: int, metric: str, ref: Reference, path: str, load: str | None = None
) -> Verdict:
    """A figure the baseline has and this run did not measure: a failure, not a pass."""
    message = (
        f"{where(depth, concurrency, load)}: {LABELS.get(metric, metric)} was not measured; "
        f"baseline {ref.figure:,.1f} [{path}]"
    )
    return point_verdict(
        depth, concurrency, load, metric, "regression", message, baseline=ref.figure
    )


def no_baseline(depth: int, concurrency: int, path: str, load: str | None = None) -> Verdict:
    """A measured point the baseline has no figures for: not judged, and said so (the run's
    end names it; a gating run fails on it)."""
    message = f"{where(depth, concurrency, load)}: not judged: no baseline point [{path}]"
    return point_verdict(depth, concurrency, load, "throughput", "no-baseline", message)


CLIENT_BOUND_ADVICE = (
    "rerun with more client processes (--specperf-client-procs N), on a less busy client "
    "machine, or at a lower concurrency"
)


def unjudged(
    depth: int, concurrency: int, metric: str, reason: str, load: str | None = None
) -> Verdict:
    """A point the load generator bounded: its figures say nothing about the server, so it
    neither passes nor fails; the message says why and what to do."""
    message = (
        f"{where(depth, concurrency, load)}: not judged (neither pass nor fail): the load "
        f"generator was the bottleneck, not the server ({reason}); {CLIENT_BOUND_ADVICE}"
    )
    return point_verdict(depth, concurrency, load, metric, "unjudged", message)


# -- the decision ------------------------------------------------------------------------

# The metrics gated statistically, each higher-is-better; any other metric is not.
GATED_METRICS = frozenset({"agg_tok_s", "per_req_tok_s", "accept_length"})


@dataclass(frozen=True)
class GateSettings:
    """What the gate promises.

    ``alpha``: the false-positive rate of one depth's verdict as a whole (every point and
    metric together): with no change, a depth goes red at most this often. ``min_effect``:
    the smallest change the gate is for; when the noise is small enough, a change of this
    size is caught with probability ``power``, and smaller ones are let through even when
    they are statistically clear. ``point_share``: the part of ``alpha`` spent on the
    per-point tests (split evenly between them, Bonferroni); the rest goes to the test of
    the depth as a whole (every point's log-ratio pooled), which is the sensitive one.
    """

    alpha: float = 0.01
    min_effect: float = 0.05
    power: float = 0.95
    point_share: float = 0.2

    def __post_init__(self) -> None:
        for name, value in (
            ("alpha", self.alpha),
            ("min_effect", self.min_effect),
            ("power", self.power),
            ("point_share", self.point_share),
        ):
            if not 0 < value < 1:
                raise ValueError(f"gate setting {name} must be between 0 and 1, got {value}")

    def point_alpha(self, tests: int) -> float:
        return self.alpha * self.point_share / max(tests, 1)

    @property
    def depth_alpha(self) -> float:
        return self.alpha * (1 - self.point_share)


@dataclass(frozen=True)
class Comparison:
    """One figure against its reference, on the log scale, oriented so that negative is worse.

    ``change``: log of measured / baseline;
    ``threshold``: the change below minus it is a regression (above plus it an
    improvement); ``se``: the standard error of ``change`` (None: the fixed rule was used).
    """

    change: float
    threshold: float
    se: float | None
    borderline: bool
    noise_source: str
    measured: float
    baseline: float

    @property
    def regression(self) -> bool:
        return self.change < -self.threshold

    @property
    def improvement(self) -> bool:
        return self.change > self.threshold


def _geometric_mean(samples: Sequence[float]) -> float:
    if len(samples) == 1:
        return samples[0]
    return math.exp(statistics.fmean(log_values(samples)))


def _quantile(upper_tail: float, dof: float) -> float:
    """One-sided critical value: normal when the noise is known (calibrated), else Student t."""
    if math.isinf(dof):
        return normal_quantile(1 - upper_tail)
    return t_quantile(1 - upper_tail, dof)


def compare(
    current: Sequence[float],
    ref: Reference,
    *,
    alpha: float,
    settings: GateSettings,
    current_boots: int = 1,
) -> Comparison:
    """The change of one figure and the threshold it is held to (see docs/explanation/gate.md).

    With noise known: SE^2 = boot^2 (1 + 1/baseline boots) + within^2 (1/current samples +
    1/baseline samples); threshold = max(q(alpha) SE, min_effect - z(power) SE), and when
    the boot-to-boot noise is not known, at least the baseline's explicit tolerance (one boot
    cannot show how much the next boot differs). Without noise: the fixed rule, floor =
    baseline x (1 - tolerance).
    """
    if not current:
        raise ValueError("no current samples to judge")
    measured = _geometric_mean(current)
    noise = None if ref.published or not ref.samples else noise_for(ref.noise)
    if noise is None:
        baseline = ref.figure
        change = math.log(measured / baseline)
        threshold = -math.log(1 - ref.tolerance)
        if ref.published:
            source = "published figure"
        elif ref.noise is not None and ref.noise.within_boot_cv is not None:
            source = (
                f"{ref.noise.source}, not calibrated (within-boot {ref.noise.within_boot_cv:.1%} "
                f"over {ref.noise.boots} boot(s))"
            )
        else:
            source = "no noise recorded"
        source += f": fixed tolerance {ref.tolerance:.0%}"
        return Comparison(change, threshold, None, False, source, measured, baseline)
    baseline = _geometric_mean(ref.samples)
    change = math.log(measured / baseline)
    between = noise.between if noise.between is not None else 0.0
    boot_part = 1 / max(current_boots, 1) + 1 / max(ref.boots, 1)
    boot_variance = between**2 * boot_part
    within_variance = noise.within**2 * (1 / len(current) + 1 / len(ref.samples))
    se = math.sqrt(boot_variance + within_variance)
    dof = noise.dof
    source = noise.description
    if ref.runner is not None and ref.runner.between_runs and runner_se(ref.runner) > se:
        se, dof = runner_se(ref.runner), ref.runner.dof
        source = runner_source(ref.runner, noise.description)
    threshold = _threshold(se, alpha, dof, settings)
    if noise.between is None and (ref.runner is None or not ref.runner.between_runs):
        explicit = -math.log(1 - ref.tolerance)
        if explicit > threshold:
            threshold = explicit
            source += f"; tolerance {ref.tolerance:.0%} kept until calibrated"
    borderline = abs(change + threshold) < se
    return Comparison(change, threshold, se, borderline, source, measured, baseline)


def runner_se(runner: RunnerSpread) -> float:
    """The standard error of a run's change against a baseline, from the runner's history: this
    run is one draw of the spread between runs, and so was the machine the baseline was
    calibrated on (its boots average the boot part, not the machine's own level)."""
    return math.sqrt(2) * runner.spread


def runner_source(runner: RunnerSpread, calibration: str) -> str:
    """Where the width of a floor taken from the history comes from, calibration beside it."""
    return (
        f"floor from {runner.text()} of {runner.where}, this run and the baseline's machine "
        f"each one draw of it (t on {runner.dof} dof), wider than the baseline's {calibration}"
    )


def _threshold(se: float, alpha: float, dof: float, settings: GateSettings) -> float:
    statistical = _quantile(alpha, dof) * se
    effect = -math.log(1 - settings.min_effect) - normal_quantile(settings.power) * se
    return max(statistical, effect, 0.0)


def compare_depth(
    points: Sequence[Sequence[tuple[Sequence[float], Reference]]],
    *,
    current_boots: int = 1,
    alpha: float,
    settings: GateSettings,
) -> Comparison | None:
    """The depth as a whole: the mean log-ratio over every point and throughput metric.

    A real slowdown moves every point; within-boot noise is independent between points and
    averages out. The boot-to-boot factor is taken as shared by every point (a slow boot is
    slow everywhere), so it does not average out: its part of the variance is the square of
    the mean boot term. The metrics of one point are taken as fully correlated. None when no
    figure has recorded noise (published or schema 1 baselines: the per-point rule decides).
    """
    boot_terms: list[float] = []
    within_terms: list[float] = []
    changes: list[float] = []
    dofs: list[float] = []
    unknown_boot: list[float] = []
    sources, descriptions = set[str](), set[str]()
    runners: list[RunnerSpread] = []
    for items in points:
        point_within: list[float] = []
        for current, ref in items:
            if ref.published or not ref.samples or not current:
                continue
            noise = noise_for(ref.noise)
            if noise is None:
                continue
            changes.append(math.log(_geometric_mean(current) / _geometric_mean(ref.samples)))
            between = noise.between if noise.between is not None else 0.0
            if noise.between is None:
                unknown_boot.append(-math.log(1 - ref.tolerance))
            boot_terms.append(
                between * math.sqrt(1 / max(current_boots, 1) + 1 / max(ref.boots, 1))
            )
            point_within.append(noise.within * math.sqrt(1 / len(current) + 1 / len(ref.samples)))
            dofs.append(noise.dof)
            short = noise.description.split(" (")[0]
            sources.add(f"{short}, {noise.rule}" if noise.rule else short)
            descriptions.add(noise.description)
            if ref.runner is not None and ref.runner.between_runs:
                runners.append(ref.runner)
        if point_within:
            within_terms.append(statistics.fmean(point_within))
    if not changes:
        return None
    count = len(within_terms)
    boot_variance = statistics.fmean(boot_terms) ** 2
    within_variance = sum(w * w for w in within_terms) / count**2
    se = math.sqrt(boot_variance + within_variance)
    dof = min(dofs)
    said = descriptions if len(descriptions) == 1 else sources  # one noise: said whole
    source = " + ".join(sorted(said)) + f", {count} point(s) pooled"
    widest = max(runners, key=lambda r: r.spread, default=None)
    if widest is not None and runner_se(widest) > se:
        calibration = f"{source} (standard error {se:.1%})"
        se, dof = runner_se(widest), widest.dof
        source = runner_source(widest, calibration)
    threshold = _threshold(se, alpha, dof, settings)
    if unknown_boot and widest is None and max(unknown_boot) > threshold:
        threshold = max(unknown_boot)
        source += f"; boot-to-boot unknown: tolerance {1 - math.exp(-threshold):.0%} kept"
    change = statistics.fmean(changes)
    borderline = abs(change + threshold) < se
    return Comparison(change, threshold, se, borderline, source, math.exp(change), 1.0)


def _change(comparison: Comparison, words: tuple[str, str] | None = None) -> str:
    return relative_change(comparison.measured / comparison.baseline, words)


def _confirmation(first: Comparison, comparison: Comparison, what: str) -> str:
    """What re-measuring ``what`` made of a borderline first look, both looks' changes said."""
    looks = f"{_change(first)} first, {_change(comparison)} with the new samples"
    if comparison.regression:
        return f"; confirmed by re-measuring{what} ({looks})"
    return f"; borderline at first, not confirmed by re-measuring{what} ({looks})"


def _percent(comparison: Comparison) -> str:
    drop = 1 - math.exp(-comparison.threshold)
    return f"{drop:.0%}" if comparison.se is None else f"{drop:.1%}"


def verdict(
    depth: int,
    concurrency: int | None,
    metric: str,
    current: Sequence[float],
    comparison: Comparison,
    *,
    path: str,
    refresh_hint: str,
    first: Comparison | None = None,
    load: str | None = None,
) -> Verdict:
    """The Verdict of one comparison, with the line a failing test shows.

    ``first``: the borderline first comparison this one confirms (re-measured samples
    included in ``current``); ``load``: an open-loop point's (its concurrency is then None).
    """
    at = where(depth, concurrency, load)
    label = LABELS.get(metric, metric)
    floor = comparison.baseline * math.exp(-comparison.threshold)
    median, interval = summarize(current) if current else (comparison.measured, None)
    details = _details(current, median, interval, comparison)
    confirmed = first is not None and comparison.regression
    if first is not None:
        details += _confirmation(first, comparison, "")
    if comparison.regression:
        outcome: VerdictOutcome = "regression"
        message = (
            f"{at}: {label} {comparison.measured:,.1f} < floor {floor:,.1f} "
            f"(baseline {comparison.baseline:,.1f} - {_percent(comparison)}) [{path}]; {details}"
        )
    elif comparison.improvement:
        outcome = "improvement"
        message = (
            f"{at}: {label} {comparison.measured:,.1f} is {_change(comparison, BETTER_WORSE)} "
            f"than baseline {comparison.baseline:,.1f} (beyond the {_percent(comparison)} "
            f"threshold) [{path}]; {details}; after review, refresh the baseline: {refresh_hint}"
        )
    else:
        outcome = "pass"
        message = f"{at}: {label} {comparison.measured:,.1f} within the threshold; {details}"
    return point_verdict(
        depth,
        concurrency,
        load,
        metric,
        outcome,
        message,
        measured=comparison.measured,
        interval=interval,
        floor=floor,
        baseline=comparison.baseline,
        samples=list(current),
        noise_source=comparison.noise_source,
        remeasured=first is not None,
        confirmed=confirmed,
        refresh_command=refresh_hint if outcome == "improvement" else None,
    )


def _details(
    current: Sequence[float], median: float, interval: Interval | None, comparison: Comparison
) -> str:
    text = samples_summary(len(current), median, interval)
    if comparison.se is not None:
        text += f", standard error {comparison.se:.1%}"
    return f"{text}; noise: {comparison.noise_source}"


def depth_verdict(
    depth: int,
    comparison: Comparison,
    *,
    points: int,
    path: str,
    refresh_hint: str,
    first: Comparison | None = None,
    client_bound: int = 0,
) -> Verdict:
    """The Verdict of the pooled test of a depth (concurrency None, metric ``throughput``);
    ``client_bound`` points were left out of the pool (the load generator bounded them)."""
    change = _change(comparison)
    confirmed = first is not None and comparison.regression
    if client_bound:
        at = f"steps={depth} ({points} points pooled, {client_bound} client-bound left out)"
    else:
        at = f"steps={depth} (all {points} points pooled)"
    details = f"standard error {comparison.se:.1%}; noise: {comparison.noise_source}"
    if first is not None:
        details += _confirmation(first, comparison, " every point")
    if comparison.regression:
        outcome: VerdictOutcome = "regression"
        message = (
            f"{at}: throughput {change} vs baseline < floor -{_percent(comparison)} "
            f"[{path}]; {details}"
        )
    elif comparison.improvement:
        outcome = "improvement"
        message = (
            f"{at}: throughput {change} vs baseline, beyond the {_percent(comparison)} "
            f"threshold [{path}]; {details}; after review, refresh the baseline: {refresh_hint}"
        )
    else:
        outcome = "pass"
        message = f"{at}: throughput {change} vs baseline, within the threshold; {details}"
    return Verdict(
        depth=depth,
        concurrency=None,
        metric="throughput",
        outcome=outcome,
        measured=math.exp(comparison.change),
        floor=math.exp(-comparison.threshold),
        baseline=1.0,
        noise_source=comparison.noise_source,
        remeasured=first is not None,
        confirmed=confirmed,
        refresh_command=refresh_hint if outcome == "improvement" else None,
        message=message,
    )


# -- one depth, every point, with confirmation -----------------------------------------------


@dataclass
class PointInput:
    """What the gate knows of one point: current samples by metric, the boots they span, and
    the reference by metric."""

    concurrency: int
    samples: dict[str, list[float]]
    references: dict[str, Reference]
    client_bound: str | None = None
    boots: int = 1
    # An open-loop point's load ("rate=4"): its key and its name in the verdicts.
    load: str | None = None

    @property
    def key(self) -> int | str:
        return self.load if self.load is not None else self.concurrency


class Remeasured(NamedTuple):
    """A point after confirmation: all of its samples by metric, how many boots they now span
    (a confirmation in a fresh boot adds one), and why, if a new sample was client-bound."""

    samples: dict[str, list[float]]
    boots: int
    client_bound: str | None = None


def _looks(point: PointInput, settings: GateSettings, point_alpha: float) -> dict[str, Comparison]:
    return {
        metric: compare(
            point.samples[metric],
            ref,
            alpha=point_alpha,
            settings=settings,
            current_boots=point.boots,
        )
        for metric, ref in _judgeable(point).items()
    }


def _point_alpha(points: Sequence[PointInput], settings: GateSettings) -> float:
    return settings.point_alpha(sum(len(_judgeable(p)) for p in points))


def points_to_confirm(points: Sequence[PointInput], settings: GateSettings) -> list[int]:
    """The concurrencies whose first look is borderline (within one standard error of its
    threshold, on either side: too close to call), every judged point when the depth test is;
    empty when every result is clear. The caller measures more samples of these points and
    passes them to :func:`judge_depth` as ``confirmed``."""
    judged = [p for p in points if p.client_bound is None]
    point_alpha = _point_alpha(judged, settings)
    depth_look = _depth_look(judged, settings)
    if depth_look is not None and depth_look.borderline:
        return [point.concurrency for point in judged]
    return [
        point.concurrency
        for point in judged
        if any(look.borderline for look in _looks(point, settings, point_alpha).values())
    ]


def judge_depth(
    depth: int,
    points: Sequence[PointInput],
    settings: GateSettings,
    *,
    path: str,
    refresh_hint: str,
    confirmed: Mapping[int, Remeasured] | None = None,
) -> list[Verdict]:
    """Every verdict of one depth: per point and metric, then the depth as a whole. Pure: it
    measures nothing and changes none of its inputs.

    ``confirmed``: the points :func:`points_to_confirm` named, measured again (all of their
    samples); the final verdict of a borderline result is then the same test on all the
    samples, and a clear result stands. Points the load generator bounded are not judged, nor
    is a point one of whose confirmation samples the load generator bounded; a point the
    baseline has no figures for gets a no-baseline verdict (never passed over in silence).
    """
    judged = [p for p in points if p.client_bound is None]
    point_alpha = _point_alpha(judged, settings)
    first = {point.key: _looks(point, settings, point_alpha) for point in judged}
    first_depth = _depth_look(judged, settings)
    current = {point.key: point for point in points}
    second: dict[int | str, dict[str, Comparison]] = {}
    final_depth = first_depth
    if confirmed:
        for point in judged:
            fresh = confirmed.get(point.concurrency) if point.load is None else None
            if fresh is None:
                continue
            now = dataclasses.replace(
                point,
                samples=fresh.samples,
                boots=fresh.boots,
                client_bound=fresh.client_bound,
            )
            current[point.key] = now
            if now.client_bound is None:
                second[point.key] = _looks(now, settings, point_alpha)
        still = [current[p.key] for p in judged]
        still = [p for p in still if p.client_bound is None]
        if first_depth is not None and (first_depth.borderline or len(still) < len(judged)):
            final_depth = _depth_look(still, settings)
        judged = still
    result = [no_baseline(depth, p.concurrency, path, p.load) for p in points if not p.references]
    for given in points:
        point = current[given.key]
        if point.client_bound is not None:
            result += [
                unjudged(depth, point.concurrency, metric, point.client_bound, point.load)
                for metric in point.references
            ]
            continue
        result += [
            not_measured(depth, point.concurrency, metric, ref, path, point.load)
            for metric, ref in point.references.items()
            if not point.samples.get(metric)
        ]
        for metric, look in first[point.key].items():
            confirming = look.borderline and metric in second.get(point.key, {})
            result.append(
                verdict(
                    depth,
                    point.concurrency,
                    metric,
                    point.samples[metric] if confirming else given.samples[metric],
                    second[point.key][metric] if confirming else look,
                    path=path,
                    refresh_hint=refresh_hint,
                    first=look if confirming else None,
                    load=point.load,
                )
            )
    if final_depth is not None:
        result.append(
            depth_verdict(
                depth,
                final_depth,
                points=len(judged),
                client_bound=len(points) - len(judged),
                path=path,
                refresh_hint=refresh_hint,
                first=first_depth
                if first_depth is not None
                and first_depth.borderline
                and final_depth is not first_depth
                else None,
            )
        )
    return result


def _judgeable(point: PointInput) -> dict[str, Reference]:
    return {
        metric: ref
        for metric, ref in point.references.items()
        if point.samples.get(metric) and metric in GATED_METRICS
    }


def _depth_look(points: Sequence[PointInput], settings: GateSettings) -> Comparison | None:
    return compare_depth(
        [
            [(point.samples[metric], ref) for metric, ref in _judgeable(point).items()]
            for point in points
        ],
        alpha=settings.depth_alpha,
        settings=settings,
        current_boots=min((point.boots for point in points), default=1),
    )
