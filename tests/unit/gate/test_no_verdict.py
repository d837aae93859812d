"""gate/no_verdict.py: what a baseline cannot judge is named, never passed over."""

from __future__ import annotations

from pytest_specperf.gate.decision import no_baseline
from pytest_specperf.gate.no_verdict import (
    baseline_mismatches,
    exploratory_line,
    no_verdict_line,
    points_not_judged,
)
from pytest_specperf.results.schema import DepthRun, Verdict
from tests.unit.gate.test_floors import make_baseline
from tests.unit.results_samples import sample_run, sample_verdict

RUN_WORKLOAD = {"max_new_tokens": 1000, "temperature": 0.0}


def _mismatches(**run: object) -> list[str]:
    asked: dict[str, object] = {
        "depth": 3,
        "profile": "prof",
        "workload_key": RUN_WORKLOAD,
        "backend": "sglang",
        **run,
    }
    return baseline_mismatches(make_baseline(), **asked)  # type: ignore[arg-type]


def test_a_baseline_of_the_runs_depth_profile_workload_and_backend_can_judge_it() -> None:
    assert _mismatches() == []


def test_a_baseline_of_another_depth_is_named_with_both_depths() -> None:
    assert _mismatches(depth=1) == ["it is the baseline of steps=3, this run measures steps=1"]


def test_a_baseline_of_another_profile_is_named_with_both_profiles() -> None:
    assert _mismatches(profile="other") == [
        "it is the baseline of profile prof, this run's is other"
    ]


def test_a_baseline_of_another_workload_names_the_field_that_differs() -> None:
    (found,) = _mismatches(workload_key={"max_new_tokens": 60, "temperature": 0.0})
    assert "max_new_tokens: baseline 1000 vs run 60" in found


def test_a_baseline_of_another_backend_names_both_backends() -> None:
    (found,) = _mismatches(backend="sim")
    assert "backend sglang" in found and "backend sim" in found


def test_every_mismatch_is_named_not_only_the_first() -> None:
    assert len(_mismatches(depth=1, profile="other", backend="sim")) == 3


def _run_with(*verdicts: Verdict, depth: int = 3) -> DepthRun:
    return sample_run(depth, verdicts=list(verdicts))


def _no_baseline(depth: int, concurrency: int) -> Verdict:
    return no_baseline(depth, concurrency, "b.json")


def test_points_not_judged_are_the_no_baseline_verdicts_of_the_gated_depths() -> None:
    runs = [
        _run_with(sample_verdict(3, 1, "agg_tok_s", "pass"), _no_baseline(3, 2)),
        _run_with(_no_baseline(1, 2), depth=1),
    ]
    assert points_not_judged(runs, {3}) == [_no_baseline(3, 2)]


def test_a_depth_named_as_a_whole_does_not_name_its_points_again() -> None:
    runs = [_run_with(_no_baseline(3, 1), _no_baseline(3, 2))]
    assert points_not_judged(runs, {3}, named_whole={3}) == []


def test_the_line_of_a_gating_run_names_each_point_not_judged_and_what_to_run() -> None:
    line = no_verdict_line(
        {}, "record the baseline with: CMD", "--flag", [_no_baseline(3, 2).message]
    )
    assert line == (
        "specperf: not judged, so the run fails: steps=3 C=2: not judged: no baseline point "
        "[b.json]; record the baseline with: CMD; or, for an exploratory run, add --flag"
    )


def test_the_line_of_a_gating_run_with_only_depths_reads_as_before() -> None:
    line = no_verdict_line({3: "no baseline (p is missing)"}, "ADVICE", "--flag")
    assert line == (
        "specperf: no throughput verdict for steps=3, so nothing was gated (steps=3: no "
        "baseline (p is missing)); ADVICE; or, for an exploratory run, add --flag"
    )


def test_the_line_of_an_exploratory_run_names_each_point_not_judged() -> None:
    line = exploratory_line({9: "no baseline"}, "--flag", None, [_no_baseline(3, 2).message])
    assert line == (
        "specperf: not judged: an exploratory run (--flag): steps=9: no baseline, so none of "
        "its points was gated; steps=3 C=2: not judged: no baseline point [b.json]; every "
        "other point was gated"
    )
