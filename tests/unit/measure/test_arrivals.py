"""Open-loop send schedules and their keys."""

from __future__ import annotations

import itertools
import statistics

import pytest

from pytest_specperf.errors import UsageError
from pytest_specperf.measure.arrivals import (
    parse_rates,
    rate_key,
    rate_of,
    rate_offsets,
    rate_requests,
)


def test_poisson_gaps_average_one_over_the_rate_and_vary_like_an_exponential() -> None:
    offsets = rate_offsets(4.0, 4001)
    gaps = [b - a for a, b in itertools.pairwise(offsets)]
    assert offsets[0] == 0.0
    assert statistics.mean(gaps) == pytest.approx(0.25, rel=0.05)
    assert statistics.stdev(gaps) / statistics.mean(gaps) == pytest.approx(1.0, rel=0.1)


def test_burstiness_below_one_is_burstier_at_the_same_mean() -> None:
    offsets = rate_offsets(4.0, 4001, burstiness=0.25)
    gaps = [b - a for a, b in itertools.pairwise(offsets)]
    assert statistics.mean(gaps) == pytest.approx(0.25, rel=0.1)
    assert statistics.stdev(gaps) / statistics.mean(gaps) == pytest.approx(2.0, rel=0.15)


def test_every_depth_and_sample_of_a_rate_gets_the_same_schedule() -> None:
    assert rate_offsets(3.0, 50) == rate_offsets(3.0, 50)
    assert rate_offsets(3.0, 50) != rate_offsets(3.5, 50)


def test_keys_name_the_rate_and_a_non_poisson_shape() -> None:
    assert rate_key(4.0) == "rate=4"
    assert rate_key(0.5, 0.25) == "rate=0.5,burstiness=0.25"
    assert rate_of("rate=0.5,burstiness=0.25") == 0.5
    assert rate_of("trace") is None


def test_requests_of_a_rate_point() -> None:
    assert rate_requests(4.0, 10.0) == 40
    assert rate_requests(0.1, 10.0) == 8
    assert rate_requests(4.0, 10.0, fixed=5) == 5


def test_rates_parse_sorted_and_refuse_nonsense_in_one_line() -> None:
    assert parse_rates("8, 2,2") == (2.0, 8.0)
    assert parse_rates("") == ()
    with pytest.raises(UsageError, match="'0' must be a request rate > 0"):
        parse_rates("0,1")
    with pytest.raises(UsageError, match="'x' is not a number"):
        parse_rates("x")
