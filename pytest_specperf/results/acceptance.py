"""Per-position draft acceptance, from SGLang's per-request acceptance histograms.

SGLang counts, for every request, how many verify steps accepted exactly k draft tokens
(``meta_info.spec_correct_drafts_histogram``; 0.5.12 also names it
``spec_accept_histogram``): index k = correct drafts in one verify step, excluding the bonus
token the target model adds. The list only grows as far as the largest k seen, so a short
histogram means the positions past its end were never accepted.

A draft at position k is accepted in a verify step exactly when that step accepted k or more
drafts, so the acceptance rate of position k is the share of verify steps with >= k correct
drafts. The rates fall with k, and 1 + their sum is the mean tokens per verify step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pytest_specperf.results.schema import DepthRun, PointMetrics
from pytest_specperf.results.stats import ratio_upper_bound


def merge_histograms(histograms: Iterable[Sequence[int] | None]) -> list[int]:
    """Element-wise sum; histograms of different lengths are zero-padded."""
    merged: list[int] = []
    for histogram in histograms:
        if not histogram:
            continue
        if len(histogram) > len(merged):
            merged.extend([0] * (len(histogram) - len(merged)))
        for correct, steps in enumerate(histogram):
            merged[correct] += steps
    return merged


def position_accept_rates(histogram: Sequence[int], positions: int | None = None) -> list[float]:
    """Acceptance rate of draft positions 1..positions, or further where the histogram goes
    further (a server flag that raised the draft tokens past what the depth implies).

    Empty when the histogram holds no verify step (no speculation, or nothing measured).
    """
    steps = sum(histogram)
    count = max(positions or 0, len(histogram) - 1)
    if steps <= 0 or count <= 0:
        return []
    rates: list[float] = []
    at_least = steps
    for position in range(1, count + 1):
        at_least -= histogram[position - 1] if position - 1 < len(histogram) else 0
        rates.append(at_least / steps)
    return rates


def tokens_per_verify_step(histogram: Sequence[int]) -> float | None:
    """1 + mean correct drafts per verify step (the bonus token plus accepted drafts)."""
    steps = sum(histogram)
    if steps <= 0:
        return None
    return 1 + sum(correct * count for correct, count in enumerate(histogram)) / steps


class SamplingBound(NamedTuple):
    """A one-sided upper confidence bound of a run-scoped figure, from its samples' spread."""

    value: float
    confidence: float
    samples: int


def _ratio_bound(
    numerators: Sequence[float], denominators: Sequence[float], confidence: float
) -> SamplingBound | None:
    value = ratio_upper_bound(numerators, denominators, confidence)
    return None if value is None else SamplingBound(value, confidence, len(numerators))


def _counted_samples(run: DepthRun) -> list[PointMetrics]:
    """Every sample of the depth that counted verify steps (a point without kept samples is one)."""
    found: list[PointMetrics] = []
    for point in run.points:
        for sample in point.samples or [point]:
            if sample.spec_verify_ct > 0:
                found.append(sample)
    return found


def accept_length_upper_bound(run: DepthRun, confidence: float) -> SamplingBound | None:
    """Upper confidence bound of the run-scoped accept length, over the depth's samples.

    The samples' agreement is the noise: with SGLang's simulated acceptance one draw serves a
    whole batch, so a point of 16 requests holds far fewer independent draws than verify
    steps, and a count-based (binomial) bound would be too narrow.
    """
    samples = _counted_samples(run)
    return _ratio_bound(
        [float(s.tokens) for s in samples], [float(s.spec_verify_ct) for s in samples], confidence
    )


def position_rate_upper_bounds(run: DepthRun, confidence: float) -> list[SamplingBound | None]:
    """Per draft position, the upper confidence bound of its run-scoped acceptance rate."""
    samples = [s for s in _counted_samples(run) if s.accept_histogram]
    steps = [float(sum(s.accept_histogram)) for s in samples]
    return [
        _ratio_bound(
            [float(sum(s.accept_histogram[position:])) for s in samples], steps, confidence
        )
        for position in range(1, len(run.position_accept_rate) + 1)
    ]
