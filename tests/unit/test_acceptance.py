"""pytest_specperf.results.acceptance: per-position acceptance from SGLang's histograms."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.results.acceptance import (
    merge_histograms,
    position_accept_rates,
    tokens_per_verify_step,
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
