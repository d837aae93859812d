"""Summaries of repeated throughput samples: median, and an interval on the log scale.

The reported figure is the median of the samples; its interval is a Student-t interval of the
mean of the log values, exponentiated (a 95% interval of the geometric mean). Throughput noise
is multiplicative, so logs are its natural scale; a bootstrap needs far more than the 3-5
samples a GPU run can afford to be any better, and the gate's decision (gate/decision.py)
works on the same logs. Shared by the measuring side (measure/repeats.py) and the gate.

scipy is imported by the functions that need it: the plugin is loaded by every pytest run in
an environment that has it installed, and scipy.stats alone was 0.6 of the 1.1 s it took.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence

from pytest_specperf.results.schema import Interval

INTERVAL_LEVEL = 0.95
# Below this many samples a t interval is wider than anything it could mean (one degree of
# freedom: samples 3,381 and 3,135 gave [2,014, 5,263]); the samples' min-max is shown instead.
MIN_SAMPLES_FOR_INTERVAL = 3
MIN_MAX_METHOD = "min-max of the samples (fewer than 3: too few for a confidence interval)"


def is_min_max(interval: Interval) -> bool:
    """An interval that is only the samples' range (no confidence level)."""
    return interval.method == MIN_MAX_METHOD


def log_values(samples: Sequence[float]) -> list[float]:
    """Natural logs of the samples; a figure of zero or less has no log and is refused."""
    if any(value <= 0 or not math.isfinite(value) for value in samples):
        raise ValueError(f"throughput samples must be positive and finite: {list(samples)}")
    return [math.log(value) for value in samples]


def variance(values: Sequence[float]) -> float:
    """Sample variance in plain floats (statistics.variance is exact but far slower)."""
    mean = math.fsum(values) / len(values)
    return math.fsum((x - mean) ** 2 for x in values) / (len(values) - 1)


@functools.lru_cache(maxsize=1024)
def t_quantile(probability: float, dof: float) -> float:
    from scipy import stats

    return float(stats.t.ppf(probability, dof))


@functools.lru_cache(maxsize=1024)
def normal_quantile(probability: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(probability))


@functools.lru_cache(maxsize=1024)
def chi2_quantile(probability: float, dof: float) -> float:
    from scipy import stats

    return float(stats.chi2.ppf(probability, dof))


def log_sd(samples: Sequence[float]) -> float | None:
    """Sample standard deviation of the log values (about the CV); None below 2 samples."""
    if len(samples) < 2:
        return None
    return math.sqrt(variance(log_values(samples)))


def ratio_upper_bound(
    numerators: Sequence[float], denominators: Sequence[float], confidence: float
) -> float | None:
    """One-sided upper confidence bound of sum(numerators) / sum(denominators).

    The samples are taken as replicates of one ratio (accepted drafts per verify step, say):
    the ratio estimator's linearised standard error over them, with a t quantile of n - 1
    degrees of freedom. None under 2 samples or without a positive denominator.
    """
    count = len(numerators)
    total = math.fsum(denominators)
    if count < 2 or total <= 0:
        return None
    ratio = math.fsum(numerators) / total
    residuals = math.fsum(
        (value - ratio * base) ** 2 for value, base in zip(numerators, denominators, strict=True)
    )
    standard_error = math.sqrt(residuals / (count * (count - 1))) / (total / count)
    return ratio + t_quantile(confidence, count - 1) * standard_error


def summarize(
    samples: Sequence[float], level: float = INTERVAL_LEVEL
) -> tuple[float, Interval | None]:
    """(median, interval) of repeated samples of one figure; no interval for one sample, the
    samples' min-max (level 0, ``MIN_MAX_METHOD``) below three."""
    if not samples:
        raise ValueError("no samples to summarize")
    median = statistics.median(samples)
    if len(samples) < 2:
        return median, None
    if len(samples) < MIN_SAMPLES_FOR_INTERVAL:
        log_values(samples)  # the same refusal of non-positive figures
        return median, Interval(
            low=min(samples), high=max(samples), level=0.0, method=MIN_MAX_METHOD
        )
    logs = log_values(samples)
    mean = statistics.fmean(logs)
    spread = math.sqrt(variance(logs) / len(logs))
    half = t_quantile(0.5 + level / 2, len(logs) - 1) * spread
    return median, Interval(
        low=math.exp(mean - half),
        high=math.exp(mean + half),
        level=level,
        method="t interval of the mean of log values (geometric mean)",
    )
