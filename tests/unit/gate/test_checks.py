"""pytest_specperf.gate.checks: the speedup and SLO-rate checks against a depth's baseline."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.gate.baselines import Baseline, BaselinePoint
from pytest_specperf.gate.checks import PASSED, rate_capacity, speedups
from pytest_specperf.results.schema import RateProbe, RateSearch, Slo, Speedup
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


SLO = Slo(ttft_p99_ms=100.0)


def _search(max_rate: float | None) -> RateSearch:
    probes = [
        RateProbe(
            rate=rate,
            meets_slo=max_rate is not None and rate <= max_rate,
            attainment=1.0,
            goodput_tok_s=1.0,
            agg_tok_s=1.0,
            achieved_rate=rate,
        )
        for rate in (2.0, 4.0)
    ]
    return RateSearch(max_rate=max_rate, probes=probes)


def test_an_slo_rate_within_the_throughput_tolerance_passes() -> None:
    baseline = make_baseline(slo=SLO, slo_max_rate=4.0)
    assert rate_capacity(_search(3.6), baseline, SLO, 3, PATH) == PASSED


def test_an_slo_rate_below_its_floor_fails_with_the_probes() -> None:
    baseline = make_baseline(slo=SLO, slo_max_rate=4.0)
    (failure,) = rate_capacity(_search(2.0), baseline, SLO, 3, PATH).failures
    assert failure == (
        "steps=3: highest request rate meeting the SLOs 2/s < floor 3.6/s (baseline 4/s - 10%) "
        f"[{PATH}]; probes: 2/s met, 4/s missed"
    )
    (none_met,) = rate_capacity(_search(None), baseline, SLO, 3, PATH).failures
    assert "meeting the SLOs none met the SLOs < floor 3.6/s" in none_met


def test_a_baseline_of_other_slos_or_no_slo_rate_skips_the_rate_check() -> None:
    other = make_baseline(slo=Slo(ttft_p99_ms=50.0), slo_max_rate=4.0)
    unrecorded = make_baseline(slo=SLO)
    for baseline in (other, unrecorded):
        outcome = rate_capacity(_search(1.0), baseline, SLO, 3, PATH)
        assert outcome.failures == []
        assert outcome.skip == f"baseline {PATH} records no SLO rate under these SLOs"
