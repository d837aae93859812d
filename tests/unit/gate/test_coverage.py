"""gate/coverage.py: what a baseline cannot judge is named, never passed over."""

from __future__ import annotations

from pytest_specperf.gate.coverage import baseline_mismatches
from tests.unit.gate.test_floors import make_baseline

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
