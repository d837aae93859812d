"""The statistics of the gate: summaries of repeated samples and the per-metric decision.

Pure functions, no I/O, no pytest. Throughput noise is multiplicative (a slow boot or a
noisy neighbour scales every figure by a factor), so every computation works on the
logarithms of the samples: a difference of log means is a log-ratio, and a standard error
on the log scale is (for small values) a coefficient of variation.

Summaries (``summarize``): the reported figure is the median of the samples; its interval
is a Student-t interval of the mean of the log values, exponentiated (a 95% interval of the
geometric mean). A bootstrap needs far more than the 3-5 samples a GPU run can afford to be
any better than this, and the t interval is what the decision below uses too.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Literal

import msgspec
from scipy import stats

from pytest_specperf.results.schema import Interval

INTERVAL_LEVEL = 0.95


def log_values(samples: Sequence[float]) -> list[float]:
    """Natural logs of the samples; a figure of zero or less has no log and is refused."""
    if any(value <= 0 or not math.isfinite(value) for value in samples):
        raise ValueError(f"throughput samples must be positive and finite: {list(samples)}")
    return [math.log(value) for value in samples]


def log_sd(samples: Sequence[float]) -> float | None:
    """Sample standard deviation of the log values (about the CV); None below 2 samples."""
    if len(samples) < 2:
        return None
    return statistics.stdev(log_values(samples))


def summarize(
    samples: Sequence[float], level: float = INTERVAL_LEVEL
) -> tuple[float, Interval | None]:
    """(median, interval) of repeated samples of one figure; no interval for one sample."""
    if not samples:
        raise ValueError("no samples to summarize")
    median = statistics.median(samples)
    if len(samples) < 2:
        return median, None
    logs = log_values(samples)
    mean = statistics.fmean(logs)
    spread = statistics.stdev(logs) / math.sqrt(len(logs))
    half = float(stats.t.ppf(0.5 + level / 2, len(logs) - 1)) * spread
    return median, Interval(
        low=math.exp(mean - half),
        high=math.exp(mean + half),
        level=level,
        method=f"t interval of the mean of log values (geometric mean), {level:.0%}",
    )


NoiseSource = Literal["calibrated", "recorded repeats", "published"]


class MetricNoise(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How much one figure of one point moves when nothing changed.

    The CVs are standard deviations of log values (a CV for noise of a few percent):
    ``within_boot_cv`` of one sample around its boot's mean, ``boot_to_boot_cv`` of a boot's
    mean between boots (None: only one boot was seen, so it is not known).
    """

    source: NoiseSource
    within_boot_cv: float | None = None
    boot_to_boot_cv: float | None = None
    samples: int = 0
    boots: int = 1


def estimate_noise(boots: Sequence[Sequence[float]], source: NoiseSource) -> MetricNoise:
    """Noise of one figure from its samples grouped by boot (one group: one boot).

    Within-boot: the pooled variance of log values around each boot's mean. Boot-to-boot:
    the variance of the boot means less what the within-boot noise explains (the usual
    one-way random-effects estimate), floored at zero.
    """
    groups = [log_values(group) for group in boots if group]
    total = sum(len(group) for group in groups)
    dof = sum(len(group) - 1 for group in groups)
    within_var: float | None = None
    if dof > 0:
        squares = sum(sum((x - statistics.fmean(g)) ** 2 for x in g) for g in groups)
        within_var = squares / dof
    between: float | None = None
    if len(groups) >= 2:
        means = [statistics.fmean(group) for group in groups]
        explained = (within_var or 0.0) * statistics.fmean(1 / len(g) for g in groups)
        between = math.sqrt(max(statistics.variance(means) - explained, 0.0))
    return MetricNoise(
        source=source,
        within_boot_cv=math.sqrt(within_var) if within_var is not None else None,
        boot_to_boot_cv=between,
        samples=total,
        boots=len(groups),
    )
