"""gate.review: baseline show, diff and promote (the ``specperf baseline`` commands' logic)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specperf.gate.baselines import baseline_from_run, load_baseline, save_baseline
from pytest_specperf.gate.review import (
    ReviewError,
    RunExit,
    diff,
    figures_of_baseline,
    figures_of_run,
    incomplete_reason,
    promote,
    show,
)
from pytest_specperf.measure.repeats import merge_samples
from pytest_specperf.results.schema import (
    AbComparison,
    DepthRun,
    PointMetrics,
    RunResults,
    ServerSummary,
)
from tests.support.data import REPO
from tests.support.points import make_point


def sample(agg: float, concurrency: int = 1, boot: int = 0) -> PointMetrics:
    return make_point(concurrency, agg, agg, tokens=4000, wall_s=4.0, boot=boot)


def run(
    *aggs: float, hardware: str = "1x-h200", status: str = "complete", boots: int = 1
) -> DepthRun:
    samples = [sample(agg, boot=i % boots) for i, agg in enumerate(aggs)]
    return DepthRun(
        depth=3,
        profile="prof",
        backend="sglang",
        hardware=hardware,
        workload={"max_new_tokens": 256},
        server=ServerSummary(url="http://x", max_total_num_tokens=1000, max_running_requests=8),
        points=[merge_samples(samples)],
        planned_concurrency=[1],
        status=status,  # type: ignore[arg-type]
    )


def test_show_lists_each_point_with_its_noise_and_source() -> None:
    baseline = baseline_from_run(run(100.0, 104.0, 98.0), how_recorded="test")
    text = show(baseline, Path("steps-3.json"))
    assert "| 1 | 100.0 | 100.0 |" in text
    assert "recorded repeats, 3 samples" in text


def test_diff_refuses_other_hardware_and_says_why() -> None:
    old = figures_of_baseline(baseline_from_run(run(100.0), how_recorded="t"), "old")
    new = figures_of_run(run(50.0, hardware="1x-a100"), "new")
    with pytest.raises(ReviewError, match=r"refusing to compare hardware.*--allow-other-hardware"):
        diff(old, new)


def test_diff_across_hardware_when_allowed_says_so_and_compares() -> None:
    old = figures_of_baseline(baseline_from_run(run(100.0), how_recorded="t"), "old")
    new = figures_of_run(run(50.0, hardware="1x-a100"), "new")
    text = diff(old, new, allow_other_hardware=True)
    assert "different hardware" in text
    assert "| 1 | agg tok/s | 100.0 | 50.0 | -50.0% |" in text


def test_diff_notes_a_workload_that_makes_figures_incomparable() -> None:
    old = figures_of_baseline(baseline_from_run(run(100.0), how_recorded="t"), "old")
    other = run(100.0)
    other.workload = {"max_new_tokens": 2048}
    assert "workload max_new_tokens differs" in diff(old, figures_of_run(other, "new"))


def test_promote_writes_the_runs_figures_and_reports_the_change(tmp_path: Path) -> None:
    save_baseline(tmp_path, baseline_from_run(run(100.0), how_recorded="t"))
    path, report = promote(run(110.0, 112.0, 108.0), tmp_path, results_path=Path("r.json"))
    written = load_baseline(path)
    assert written is not None and written.points["1"].agg_tok_s == 110.0
    assert "+10.0%" in report


def test_promote_of_a_run_across_boots_records_calibrated_noise(tmp_path: Path) -> None:
    path, _ = promote(
        run(100.0, 110.0, 101.0, 111.0, boots=2), tmp_path, results_path=Path("r.json")
    )
    written = load_baseline(path)
    assert written is not None
    noise = written.points["1"].noise["agg_tok_s"]
    assert (noise.source, noise.boots) == ("calibrated", 2)


def test_a_client_bound_run_cannot_become_a_baseline() -> None:
    """A baseline of figures the load generator bounded would hold the client to them."""
    bound = run(100.0)
    bound.points[0].client_bound = "load generator saturated"
    reason = incomplete_reason(bound)
    assert reason is not None and "client-bound at C=1" in reason


def test_promote_refuses_a_run_that_did_not_complete(tmp_path: Path) -> None:
    with pytest.raises(ReviewError, match="not promoting steps=3"):
        promote(run(100.0, status="failed"), tmp_path, results_path=Path("r.json"))
    assert not list(tmp_path.rglob("*.json"))


def test_promote_with_the_control_records_the_speedup(tmp_path: Path) -> None:
    """The results' complete depth 0 gives the promoted baseline its speedups."""
    control = run(50.0, 55.0, 45.0)
    control.depth = 0
    path, _ = promote(
        run(110.0, 112.0, 108.0), tmp_path, results_path=Path("r.json"), control=control
    )
    written = load_baseline(path)
    assert written is not None and written.points["1"].agg_speedup == 2.2


def test_promote_of_a_realistic_run_writes_the_workloads_own_file(tmp_path: Path) -> None:
    """A run of another workload than the seed's is promoted to steps-N.<workload>.json."""
    realistic = run(110.0, 112.0, 108.0)
    realistic.workload = {"workload": "realistic", "max_new_tokens": 256}
    path, _ = promote(realistic, tmp_path, results_path=Path("r.json"))
    assert path.name == "steps-3.realistic.json"


@pytest.mark.parametrize("outcome", ["regression", "undecided", "failed", "interrupted"])
def test_promote_refuses_a_depth_whose_ab_comparison_is_not_green(
    tmp_path: Path, outcome: str
) -> None:
    ab = AbComparison(depth=3, outcome=outcome, pairs=3, message=f"steps=3 A/B: {outcome}")
    with pytest.raises(ReviewError, match=rf"steps=3 .*A/B outcome is {outcome}.*--force"):
        promote(run(100.0), tmp_path, results_path=Path("r.json"), ab=ab)
    assert not list(tmp_path.rglob("*.json"))


def test_promote_refuses_a_green_ab_depth_and_says_how_to_record_one(tmp_path: Path) -> None:
    ab = AbComparison(depth=3, outcome="improvement", pairs=3)
    with pytest.raises(ReviewError, match=r"A/B run.*--specperf-update-baselines.*--force"):
        promote(run(100.0), tmp_path, results_path=Path("r.json"), ab=ab)
    assert not list(tmp_path.rglob("*.json"))


def test_promote_refuses_a_run_whose_session_did_not_pass(tmp_path: Path) -> None:
    failed = RunExit(status=1, reasons=("steps=1 has no baseline",))
    with pytest.raises(
        ReviewError, match=r"did not pass \(exit status 1: steps=1 has no .*--force"
    ):
        promote(run(100.0), tmp_path, results_path=Path("r.json"), run_exit=failed)
    assert not list(tmp_path.rglob("*.json"))
    with pytest.raises(ReviewError, match=r"exit status 1: a test failed: its pytest output says"):
        promote(run(100.0), tmp_path, results_path=Path("r.json"), run_exit=RunExit(1))
    path, _ = promote(
        run(100.0), tmp_path, results_path=Path("r.json"), run_exit=failed, force=True
    )
    assert path.exists()


@pytest.mark.parametrize("status", [0, None])
def test_a_passing_run_or_an_older_file_without_a_status_is_promoted(
    tmp_path: Path, status: int | None
) -> None:
    path, _ = promote(run(100.0), tmp_path, results_path=Path("r.json"), run_exit=RunExit(status))
    assert path.exists()


def test_promote_of_an_interrupted_run_says_it_was_interrupted(tmp_path: Path) -> None:
    """Issue 49: promoting an interrupted run said "its pytest output says which test failed"
    (none failed): the refusal names the interruption results.json recorded."""
    results = RunResults(
        run_id="r",
        started_at="2026-12-06T00:00:00+00:00",
        tool_version="t",
        runs=[run(100.0)],
        interrupted="interrupted (SIGINT) once every point was measured",
        exit_status=2,
    )
    with pytest.raises(ReviewError) as refused:
        promote(run(100.0), tmp_path, results_path=Path("r.json"), run_exit=RunExit.of(results))
    assert "was interrupted (SIGINT) once every point was measured (exit status 2)" in str(
        refused.value
    )
    assert "test failed" not in str(refused.value)
    assert not list(tmp_path.rglob("*.json"))


@pytest.mark.parametrize(
    ("status", "meaning"),
    [(1, "a test failed"), (2, "it was interrupted"), (4, "a usage error"), (5, "no tests ran")],
)
def test_a_red_run_without_reasons_is_named_by_what_its_status_means(
    tmp_path: Path, status: int, meaning: str
) -> None:
    """Without a recorded reason the refusal says what the exit status means, never that a
    test failed when the status says otherwise."""
    with pytest.raises(ReviewError, match=rf"exit status {status}: {meaning}"):
        promote(run(100.0), tmp_path, results_path=Path("r.json"), run_exit=RunExit(status))


def test_show_of_a_baseline_across_machines_names_each_machines_cards() -> None:
    """The shipped H100 seed-class baseline rests on three different cards, told apart by UUID."""
    path = REPO / "baselines/qwen3-next-real-width-fp8-mtp/1x-h100-80gb-hbm3/steps-3.json"
    baseline = load_baseline(path)
    assert baseline is not None and baseline.machines is not None
    text = show(baseline, path)
    for machine in baseline.machines.runs:
        assert machine.gpu_uuid is not None
        assert f"NVIDIA H100 80GB HBM3 ({machine.gpu_uuid[:12]}), driver" in text
