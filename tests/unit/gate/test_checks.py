"""pytest_specperf.gate.checks: the speedup check against each depth's baseline."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.gate.baselines import Baseline, BaselinePoint
from pytest_specperf.gate.checks import speedups
from pytest_specperf.results.schema import Speedup
from tests.unit.gate.test_floors import make_baseline

PATH = Path("baselines/prof/2x-h200/steps-3.json")
FAST = [(3, [Speedup(depth=3, concurrency=4, agg=2.0, per_req=2.5)])]


def _judge(recorded_on: str, run_backend: str) -> tuple[list[str], list[str]]:
    baseline = make_baseline(
        backend=recorded_on,
        points={"4": BaselinePoint(agg_tok_s=1.0, agg_speedup=2.0, per_req_speedup=2.5)},
    )

    def baseline_at(depth: int) -> tuple[Path, Baseline | None]:
        return PATH, baseline

    failures, unjudged, _ = speedups(FAST, baseline_at, {}, run_backend)
    return failures, unjudged


def test_a_speedup_against_another_backends_baseline_fails_naming_both() -> None:
    """The simulator's speedup judged against an SGLang baseline is a failure, not a pass."""
    failures, unjudged = _judge("sglang", "sim")
    assert len(failures) == 1 and unjudged == []
    assert "backend sglang" in failures[0] and "backend sim" in failures[0]
    assert str(PATH) in failures[0]


def test_a_speedup_against_the_same_backends_baseline_is_judged() -> None:
    """On the baseline's own backend the floors apply: at the baseline, it passes."""
    failures, unjudged = _judge("sim", "sim")
    assert failures == [] and unjudged == []
