"""gate/decision.py with the runner's spread from the history store (issue 38, point 2)."""

from __future__ import annotations

import dataclasses
import math

from pytest_specperf.gate.decision import (
    GateSettings,
    PointInput,
    Reference,
    compare,
    judge_depth,
)
from pytest_specperf.gate.noise import MetricNoise
from pytest_specperf.results.runner_spread import RunnerSpread

SETTINGS = GateSettings()
RUNNER = RunnerSpread(spread=0.05, runs=10, where="p on sim-x5, steps=3")


def _quiet(runner: RunnerSpread | None = None) -> Reference:
    """A baseline calibrated over 3 boots on one quiet machine (within 1%, boot-to-boot 0)."""
    samples = [1000.0 * math.exp(0.01 * d) for d in (-1, 0, 1) * 3]
    noise = MetricNoise(
        source="calibrated", within_boot_cv=0.01, boot_to_boot_cv=0.0, samples=9, boots=3
    )
    return Reference(figure=1000.0, samples=samples, boots=3, noise=noise, runner=runner)


def _point(factor: float, runner: RunnerSpread | None) -> PointInput:
    return PointInput(
        concurrency=1,
        samples={"agg_tok_s": [1000.0 * factor] * 3},
        references={"agg_tok_s": _quiet(runner)},
    )


def test_a_machine_11_percent_slower_is_red_on_the_calibration_and_green_on_the_history() -> None:
    alone = compare([890.0] * 3, _quiet(), alpha=0.008, settings=SETTINGS)
    with_history = compare([890.0] * 3, _quiet(RUNNER), alpha=0.008, settings=SETTINGS)
    assert alone.regression
    assert not with_history.regression
    assert with_history.se is not None and with_history.se == math.sqrt(2) * 0.05
    assert with_history.noise_source.startswith(
        "floor from 10 history runs (spread 5.0%, MAD) of p on sim-x5, steps=3"
    )
    assert "3 boots on one machine" in with_history.noise_source


def test_a_quarter_slower_is_red_with_the_history_too() -> None:
    found = compare([750.0] * 3, _quiet(RUNNER), alpha=0.008, settings=SETTINGS)
    assert found.regression


def test_a_history_quieter_than_the_calibration_changes_nothing() -> None:
    quiet = dataclasses.replace(RUNNER, spread=0.001)
    assert compare([950.0] * 3, _quiet(quiet), alpha=0.008, settings=SETTINGS) == compare(
        [950.0] * 3, _quiet(), alpha=0.008, settings=SETTINGS
    )


def test_the_depth_verdict_says_where_its_floor_comes_from() -> None:
    verdicts = judge_depth(
        3, [_point(0.89, RUNNER)], SETTINGS, path="b.json", refresh_hint="record"
    )
    depth = [v for v in verdicts if v.concurrency is None]
    assert [v.outcome for v in verdicts] == ["pass", "pass"]
    assert depth[0].noise_source is not None
    assert "floor from 10 history runs (spread 5.0%, MAD)" in depth[0].noise_source
    assert depth[0].floor is not None and depth[0].floor < 0.82
