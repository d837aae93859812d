"""pytest_specperf.gate.decision: summaries, noise estimates and the verdict of one figure."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.gate.decision import estimate_noise, summarize

positive = st.floats(min_value=1.0, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_summarize_one_sample_has_no_interval() -> None:
    """One sample is its own median and says nothing about its spread."""
    assert summarize([123.0]) == (123.0, None)


def test_summarize_reports_median_and_level() -> None:
    """Several samples: the median, and a 95% interval naming its method."""
    median, interval = summarize([90.0, 100.0, 130.0])
    assert median == 100.0
    assert interval is not None and interval.level == 0.95 and "t interval" in interval.method


@given(st.lists(positive, min_size=2, max_size=12))
def test_summarize_interval_brackets_the_geometric_mean(samples: list[float]) -> None:
    """The interval is around the geometric mean of the samples, low <= high."""
    _, interval = summarize(samples)
    geometric = math.exp(sum(math.log(x) for x in samples) / len(samples))
    assert interval is not None
    assert interval.low <= geometric * (1 + 1e-9) and geometric <= interval.high * (1 + 1e-9)


def test_summarize_interval_narrows_with_more_samples() -> None:
    """The same spread over more samples gives a narrower interval."""
    _, few = summarize([95.0, 105.0] * 2)
    _, many = summarize([95.0, 105.0] * 8)
    assert few is not None and many is not None
    assert many.high - many.low < few.high - few.low


def test_summarize_refuses_non_positive_samples() -> None:
    """A throughput of zero has no log: refused rather than silently dropped."""
    with pytest.raises(ValueError, match="positive"):
        summarize([100.0, 0.0])


def test_estimate_noise_one_boot_has_no_boot_to_boot_figure() -> None:
    """One boot gives the within-boot noise only."""
    noise = estimate_noise([[100.0, 102.0, 98.0]], "recorded repeats")
    assert noise.boot_to_boot_cv is None and noise.within_boot_cv == pytest.approx(0.02, rel=0.01)


def test_estimate_noise_identical_boots_have_zero_boot_to_boot() -> None:
    """Boots whose means agree give a boot-to-boot noise of zero, never negative."""
    noise = estimate_noise([[99.0, 101.0], [101.0, 99.0]], "calibrated")
    assert noise.boot_to_boot_cv == 0.0 and noise.samples == 4 and noise.boots == 2
