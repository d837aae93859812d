"""gate/floors.py (and gate.baselines) under SLOs: goodput floors, the SLO capacity floor, and the
per-workload baseline file."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.gate.baselines import (
    BaselinePoint,
    baseline_from_run,
    baseline_path,
    load_baseline,
    save_baseline,
)
from pytest_specperf.gate.floors import goodput_failure, slo_capacity_failure, slo_mismatch
from pytest_specperf.results.schema import DepthRun, Goodput, PointMetrics, Slo
from tests.unit.gate.test_floors import PATH, make_baseline, make_point

SLO = Slo(ttft_p99_ms=500)


def with_goodput(goodput: float, meets: bool = True, concurrency: int = 4) -> PointMetrics:
    point = make_point(concurrency=concurrency)
    point.goodput = Goodput(goodput_tok_s=goodput, requests_meeting=8, requests=8, meets_slo=meets)
    return point


def depth_run(*points: PointMetrics) -> DepthRun:
    return DepthRun(
        depth=3, profile="prof", backend="sim", hardware="2x-h200", workload={}, points=list(points)
    )


def test_goodput_below_floor_fails_with_measured_floor_and_path() -> None:
    baseline = make_baseline(points={"4": BaselinePoint(agg_tok_s=1000.0, goodput_tok_s=800.0)})
    message = goodput_failure(with_goodput(700.0), baseline, 3, PATH)
    assert message == (
        f"steps=3 C=4: goodput tok/s 700.0 < floor 720.0 (baseline 800.0 - 10%) [{PATH}]"
    )


def test_goodput_at_floor_passes() -> None:
    baseline = make_baseline(points={"4": BaselinePoint(agg_tok_s=1000.0, goodput_tok_s=800.0)})
    assert goodput_failure(with_goodput(720.0), baseline, 3, PATH) is None


def test_slo_capacity_below_baseline_fails() -> None:
    run = depth_run(with_goodput(1.0, concurrency=1), with_goodput(1.0, meets=False, concurrency=4))
    message = slo_capacity_failure(run, make_baseline(slo=SLO, slo_max_concurrency=4), PATH)
    assert message == (f"steps=3: largest concurrency meeting the SLOs C=1 < baseline C=4 [{PATH}]")


def test_slo_capacity_equal_to_baseline_passes() -> None:
    run = depth_run(with_goodput(1.0, concurrency=1), with_goodput(1.0, concurrency=4))
    assert slo_capacity_failure(run, make_baseline(slo=SLO, slo_max_concurrency=4), PATH) is None


def test_goodput_is_judged_only_under_the_same_slos() -> None:
    assert slo_mismatch(SLO, make_baseline(slo=SLO)) is None
    assert "without --specperf-slo" in str(slo_mismatch(SLO, make_baseline()))
    assert "differ" in str(slo_mismatch(Slo(ttft_p99_ms=1), make_baseline(slo=SLO)))


def test_recorded_baseline_keeps_slos_goodput_and_capacity(tmp_path: Path) -> None:
    run = depth_run(with_goodput(900.0, concurrency=1), with_goodput(1.0, meets=False))
    baseline = baseline_from_run(run, how_recorded="test", slo=SLO)
    assert baseline.slo == SLO and baseline.slo_max_concurrency == 1
    assert baseline.points["1"].goodput_tok_s == 900.0
    loaded = load_baseline(save_baseline(tmp_path, baseline))
    assert loaded is not None and loaded.slo == SLO


def test_each_workload_has_its_own_baseline_file(tmp_path: Path) -> None:
    """greedy-synthetic keeps steps-N.json; realistic records steps-N.realistic.json beside it."""
    assert baseline_path(tmp_path, "p", "h", 3).name == "steps-3.json"
    assert baseline_path(tmp_path, "p", "h", 3, "realistic").name == "steps-3.realistic.json"
    run = depth_run(make_point())
    run.workload = {"workload": "realistic"}
    saved = save_baseline(tmp_path, baseline_from_run(run, how_recorded="test"))
    assert saved.name == "steps-3.realistic.json"
