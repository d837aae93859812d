"""gate/attribution.py: a change of tok/s split into acceptance and step time."""

from __future__ import annotations

import math

import pytest

from pytest_specperf.gate.attribution import (
    Attribution,
    explain_verdicts,
    moved_position,
    split_against_baseline,
)
from pytest_specperf.results.schema import Verdict, VerdictOutcome


def test_the_parts_add_up_to_the_change_on_the_log_scale() -> None:
    found = split_against_baseline(
        math.log(0.9), None, accept_length=2.7, baseline_accept_length=3.0
    )
    assert found.acceptance is not None and found.step_time is not None
    assert found.acceptance[0] + found.step_time[0] == pytest.approx(math.log(0.9))
    assert found.acceptance[0] == pytest.approx(math.log(0.9))
    assert found.cause == "acceptance"


def test_a_slower_step_with_the_same_acceptance_is_named_step_time() -> None:
    found = split_against_baseline(
        math.log(0.95),
        (math.log(0.93), math.log(0.97)),
        accept_length=3.0,
        baseline_accept_length=3.0,
    )
    assert found.cause == "step time"
    assert "verify steps/s -5.0% [-7.0%, -3.0%]" in found.text()


def test_without_accept_length_on_both_sides_the_change_is_not_split() -> None:
    found = split_against_baseline(-0.1, None, accept_length=None, baseline_accept_length=3.0)
    assert found.cause is None
    assert "not split" in found.text()


def test_the_text_names_the_position_that_moved_most() -> None:
    found = Attribution(
        (math.log(0.919), math.log(0.91), math.log(0.928)),
        (math.log(0.924), None, None),
        (math.log(0.995), None, None),
        position=moved_position([0.9, 0.75, 0.61], [0.9, 0.74, 0.52]),
    )
    assert found.text() == (
        "agg -8.1% [-9.0%, -7.2%]: acceptance -7.6% (position 3: 0.61 -> 0.52), "
        "verify steps/s -0.5%"
    )


def test_no_position_without_rates_on_both_sides() -> None:
    assert moved_position([], [0.5]) is None


def _verdict(concurrency: int, outcome: VerdictOutcome, measured: float, message: str) -> Verdict:
    return Verdict(
        depth=3,
        concurrency=concurrency,
        metric="agg_tok_s",
        outcome=outcome,
        measured=measured,
        baseline=100.0,
        message=message,
    )


def test_a_baseline_gate_regression_says_why_and_a_pass_is_left_alone() -> None:
    red = _verdict(4, "regression", 90.0, "steps=3 C=4: agg tok/s 90.0 < floor")
    green = _verdict(1, "pass", 99.0, "within")
    explain_verdicts(
        [red, green],
        accept_length=3.0,
        baseline_accept_length=3.0,
        positions=[0.9, 0.6],
        baseline_positions=[0.9, 0.6],
    )
    assert red.message.endswith(
        "; why: agg -10.0%: acceptance +0.0% (position 1: 0.90 -> 0.90), verify steps/s -10.0%"
    )
    assert green.message == "within"


def test_slower_steps_read_as_a_drop_of_the_step_rate() -> None:
    """Issue 49: "step time -19.3%" read as faster steps where the steps were slower; the step
    part is named by the rate it is a change of, so its sign says which way."""
    found = split_against_baseline(
        math.log(0.807), None, accept_length=3.0, baseline_accept_length=3.0
    )
    assert found.text().endswith(", verify steps/s -19.3%")
    assert "step time" not in found.text()
