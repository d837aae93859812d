"""pytest_specperf.results.acceptance: per-position acceptance from SGLang's histograms."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.results.acceptance import (
    accept_length_upper_bound,
    merge_histograms,
    position_accept_rates,
    position_rate_upper_bounds,
    tokens_per_verify_step,
)
from pytest_specperf.results.schema import DepthRun, PointMetrics
from tests.support.points import make_point, make_run

# The seed-class profile's fresh boot on the H200 (2026-12-03, SGLANG_SIMULATE_ACC_LEN=3.19):
# each sample's histogram (correct drafts 0..3) at C = 1, 4, 16, three samples a point.
H200_SAMPLES = {
    1: [[0, 0, 274, 51], [0, 0, 268, 55], [0, 0, 252, 67]],
    4: [[0, 0, 736, 216], [0, 0, 780, 184], [0, 0, 804, 168]],
    16: [[0, 0, 2128, 448], [0, 0, 2224, 384], [0, 0, 2112, 464]],
}


def sample(concurrency: int, histogram: list[int]) -> PointMetrics:
    steps = sum(histogram)
    tokens = steps + sum(correct * count for correct, count in enumerate(histogram))
    return make_point(
        concurrency,
        float(tokens),
        requests=concurrency,
        tokens=tokens,
        spec_verify_ct=steps,
        accept_histogram=histogram,
    )


def run_of(samples: dict[int, list[list[int]]]) -> DepthRun:
    points = [
        sample(concurrency, merge_histograms(histograms))
        for concurrency, histograms in samples.items()
    ]
    for point, histograms in zip(points, samples.values(), strict=True):
        point.samples = [sample(point.concurrency, histogram) for histogram in histograms]
    merged = merge_histograms(h for histograms in samples.values() for h in histograms)
    return make_run(
        3, points, accept_histogram=merged, position_accept_rate=position_accept_rates(merged)
    )


def test_merge_pads_shorter_histograms_with_zeros() -> None:
    """Histograms of different lengths add up position by position; empty ones are skipped."""
    assert merge_histograms([[2, 0, 1, 15], [1, 3], None, []]) == [3, 3, 1, 15]


def test_rates_are_shares_of_steps_accepting_at_least_that_many_drafts() -> None:
    """Position k's rate counts the verify steps that accepted k or more drafts."""
    # 18 steps: 2 accepted none, 1 accepted two, 15 accepted three (the real 0.5.12 sample).
    assert position_accept_rates([2, 0, 1, 15]) == pytest.approx([16 / 18, 16 / 18, 15 / 18])


def test_rates_cover_the_depth_past_a_trimmed_histogram() -> None:
    """SGLang's list stops at the largest count seen: later positions were never accepted."""
    assert position_accept_rates([4, 6], positions=3) == pytest.approx([0.6, 0.0, 0.0])


def test_rates_follow_a_histogram_longer_than_the_depth() -> None:
    # Depth 3 with --speculative-num-draft-tokens=8 on NGRAM: SGLang counts 8 bins.
    histogram = [0, 0, 0, 0, 0, 0, 0, 2240]
    assert position_accept_rates(histogram, positions=3) == pytest.approx([1.0] * 7)


def test_no_verify_step_means_no_rates() -> None:
    """Without speculation (or without steps) there is nothing to report."""
    assert position_accept_rates([]) == []
    assert position_accept_rates([0, 0], positions=2) == []
    assert tokens_per_verify_step([]) is None


@given(st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=8))
def test_rates_fall_with_position_and_add_up_to_tokens_per_step(histogram: list[int]) -> None:
    """Rates never rise with the position, and 1 + their sum is the mean tokens per step."""
    rates = position_accept_rates(histogram)
    assert all(a >= b for a, b in itertools.pairwise(rates))
    per_step = tokens_per_verify_step(histogram)
    if per_step is None:
        assert rates == []
    else:
        assert 1 + sum(rates) == pytest.approx(per_step)


def test_real_sglang_final_chunk_histogram_matches_its_counts(sim_data: Path) -> None:
    """On the real 0.5.12 NGRAM sample, the histogram sums to spec_verify_ct and its weighted
    sum to the accepted drafts: the meaning acceptance.py assumes."""
    lines = (sim_data / "generate_stream.ngram-draft4.qwen3.jsonl").read_text().splitlines()
    payloads = [json.loads(line)["line"].removeprefix("data: ") for line in lines]
    final = json.loads([p for p in payloads if p != "[DONE]"][-1])["meta_info"]
    histogram = final["spec_correct_drafts_histogram"]
    assert histogram == final["spec_accept_histogram"]
    assert sum(histogram) == final["spec_verify_ct"]
    accepted = sum(k * n for k, n in enumerate(histogram))
    assert accepted == final["spec_num_correct_drafts"]
    rates = position_accept_rates(histogram, positions=3)
    assert sum(rates) * final["spec_verify_ct"] == pytest.approx(accepted)


def test_upper_bounds_sit_above_the_run_scoped_figures_by_the_samples_spread() -> None:
    """Over the H200 samples: each bound is above its figure, and wider for the position that
    varies (position 3) than for the ones every step accepted (positions 1 and 2: no spread)."""
    run = run_of(H200_SAMPLES)
    rates = run.position_accept_rate
    bounds = [b.value if b else None for b in position_rate_upper_bounds(run, 0.99)]
    assert bounds[0] == pytest.approx(rates[0]) and bounds[1] == pytest.approx(rates[1])
    assert bounds[2] is not None and 0.015 < bounds[2] - rates[2] < 0.05
    bound = accept_length_upper_bound(run, 0.99)
    length = bound.value if bound else None
    assert run.accept_length is not None and length is not None
    assert 0 < length - run.accept_length < 0.05


def test_a_higher_confidence_gives_a_higher_bound() -> None:
    """The bound grows with the confidence asked for."""
    run = run_of(H200_SAMPLES)
    low, high = position_rate_upper_bounds(run, 0.9)[2], position_rate_upper_bounds(run, 0.999)[2]
    assert low is not None and high is not None and low.value < high.value


def test_a_bound_carries_its_confidence_and_the_samples_it_rests_on() -> None:
    """Nine samples with histograms (three points x three): both kinds of bound say so."""
    run = run_of(H200_SAMPLES)
    length = accept_length_upper_bound(run, 0.99)
    position = position_rate_upper_bounds(run, 0.99)[2]
    assert length is not None and (length.confidence, length.samples) == (0.99, 9)
    assert position is not None and (position.confidence, position.samples) == (0.99, 9)


def test_one_sample_gives_no_bound() -> None:
    """With a single sample there is no spread to measure, so no bound (the figure alone)."""
    run = run_of({1: [[0, 0, 274, 51]]})
    assert position_rate_upper_bounds(run, 0.99) == [None, None, None]
    assert accept_length_upper_bound(run, 0.99) is None
