"""pytest_specperf.run.ending: the lines of a run whose gate judged nothing."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_specperf.gate.decision import no_baseline
from pytest_specperf.results.schema import RunResults
from pytest_specperf.run.ending import depths_not_judged, exploratory_no_verdict, no_verdict
from pytest_specperf.server.profiles import DEFAULT_PROFILE
from tests.support.data import REPO
from tests.unit.config.test_settings import settings_from
from tests.unit.results_samples import sample_run, sample_verdict

SHIPPED_STEPS_3 = REPO / "baselines" / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"
# The new user's walkthrough: the smoke run profile (256 tokens) on the simulator, whose
# shipped baseline was recorded at 1000 tokens.
SMOKE = {"run_profile": "smoke", "backend": "sim", "spec_steps": "3", "hardware": "sim-x5"}


def _with_shipped_baseline(tmp_path: Path) -> Path:
    copy = tmp_path / "baselines" / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"
    copy.parent.mkdir(parents=True)
    shutil.copy(SHIPPED_STEPS_3, copy)
    return copy


def _judged(depth: int) -> RunResults:
    run = sample_run(depth, verdicts=[sample_verdict(depth, 1, "agg_tok_s", "pass")])
    return RunResults(run_id="r", started_at="t", tool_version="v", runs=[run])


def test_an_exploratory_run_that_judged_nothing_says_why_in_one_line(tmp_path: Path) -> None:
    baseline = _with_shipped_baseline(tmp_path)
    settings = settings_from(tmp_path, **SMOKE)
    line = exploratory_no_verdict(settings, None, {3})
    assert line is not None and "\n" not in line
    assert line.startswith(
        "specperf: no verdict: an exploratory run "
        "(--specperf-allow-no-baseline, on in the smoke run profile): steps=3: "
        "baseline workload differs from this run's (max_new_tokens: baseline 1000 vs run 256)"
    )
    assert str(baseline) in line
    assert line.endswith("; nothing was gated (pytest -rs lists the skips)")
    assert no_verdict(settings, None, {3}) is None  # not a failure: the run stays green


def test_the_exploratory_line_names_the_flag_alone_when_it_was_given(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, **SMOKE, allow_no_baseline=True)
    line = exploratory_no_verdict(settings, None, {3})
    assert line is not None
    assert line.startswith(
        "specperf: no verdict: an exploratory run (--specperf-allow-no-baseline): steps=3: "
    )
    assert "steps=3: no baseline (" in line


@pytest.mark.parametrize(
    "overrides",
    [
        {"run_profile": "pr"},  # not exploratory: no_verdict's red line instead
        {"update_baselines": True},  # a recording
        {"base_python": "python3"},  # A/B mode: the depth test judges against the base side
    ],
)
def test_no_exploratory_line_outside_an_exploratory_gating_run(
    tmp_path: Path, overrides: dict[str, Any]
) -> None:
    settings = settings_from(tmp_path, **{**SMOKE, **overrides})
    assert exploratory_no_verdict(settings, None, {3}) is None


def test_no_exploratory_line_when_every_gated_depth_was_judged(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, **SMOKE)
    assert exploratory_no_verdict(settings, _judged(3), {3}) is None
    assert exploratory_no_verdict(settings, None, set()) is None  # no throughput test ran


# Issue 49, item 5: the nightly run profile at C=1,2 against the shipped steps-3 (C=1..64).
NIGHTLY_C2 = {
    "run_profile": "nightly",
    "backend": "sim",
    "spec_steps": "3",
    "concurrency": "1,2",
    "hardware": "sim-x5",
}


def _c1_judged_c2_not(baseline: Path) -> RunResults:
    verdicts = [sample_verdict(3, 1, "agg_tok_s", "pass"), no_baseline(3, 2, str(baseline))]
    return RunResults(
        run_id="r", started_at="t", tool_version="v", runs=[sample_run(3, verdicts=verdicts)]
    )


def test_a_gating_run_whose_baseline_lacks_a_point_it_measured_fails_naming_it(
    tmp_path: Path,
) -> None:
    """C=1 judged, C=2 not (the baseline has no C=2): red, one line naming C=2, with the
    command that records the baseline with C=2 added, or the exploratory flag."""
    baseline = _with_shipped_baseline(tmp_path)
    settings = settings_from(tmp_path, **NIGHTLY_C2)
    line = no_verdict(settings, _c1_judged_c2_not(baseline), {3})
    assert line is not None and "\n" not in line
    assert line.startswith(
        f"specperf: not judged, so the run fails: steps=3 C=2: not judged: no baseline point "
        f"[{baseline}]; record the baseline with: pytest perf_tests "
    )
    assert "--specperf-concurrency=1,2,4,16,32,64" in line
    assert line.endswith("; or, for an exploratory run, add --specperf-allow-no-baseline")
    assert exploratory_no_verdict(settings, _c1_judged_c2_not(baseline), {3}) is None


def test_an_exploratory_run_whose_baseline_lacks_a_point_passes_and_names_it(
    tmp_path: Path,
) -> None:
    baseline = _with_shipped_baseline(tmp_path)
    settings = settings_from(tmp_path, **NIGHTLY_C2, allow_no_baseline=True)
    results = _c1_judged_c2_not(baseline)
    assert no_verdict(settings, results, {3}) is None
    line = exploratory_no_verdict(settings, results, {3})
    assert line == (
        "specperf: not judged: an exploratory run (--specperf-allow-no-baseline): steps=3 C=2: "
        f"not judged: no baseline point [{baseline}]; every other point was gated"
    )


def test_a_point_not_judged_is_named_in_a_run_that_failed_already(tmp_path: Path) -> None:
    """A regression elsewhere made the run red: the point is still named (not the depths,
    which a failure may have left without a verdict)."""
    baseline = _with_shipped_baseline(tmp_path)
    settings = settings_from(tmp_path, **NIGHTLY_C2)
    line = no_verdict(settings, _c1_judged_c2_not(baseline), {3, 9}, depths_too=False)
    assert line is not None and "steps=3 C=2: not judged" in line and "steps=9" not in line


def test_a_depth_that_judged_nothing_becomes_a_verdict_saying_why(tmp_path: Path) -> None:
    """For results.json and report.md: the smoke run's steps=3 (another workload than the
    baseline's) as a no-baseline verdict of the depth, in an exploratory run too."""
    baseline = _with_shipped_baseline(tmp_path)
    (verdict,) = depths_not_judged(settings_from(tmp_path, **SMOKE), None, {3})
    assert (verdict.depth, verdict.concurrency, verdict.outcome) == (3, None, "no-baseline")
    assert verdict.message.startswith("steps=3: not judged: baseline workload differs")
    assert str(baseline) in verdict.message
    recording = settings_from(tmp_path, **SMOKE, update_baselines=True)
    assert depths_not_judged(recording, None, {3}) == []
