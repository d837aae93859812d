"""cli/command.py's ``specperf baseline show|diff|promote|migrate``: over gate.review."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import msgspec
import pytest

from pytest_specperf.cli import main
from pytest_specperf.gate.baselines import load_baseline
from pytest_specperf.measure.repeats import merge_samples
from pytest_specperf.results.schema import (
    AbChange,
    AbComparison,
    DepthRun,
    RunResults,
    ServerSummary,
)
from tests.support.points import make_point

REPO_BASELINES = Path(__file__).resolve().parents[3] / "baselines"
SIM_STEPS3 = REPO_BASELINES / "qwen3.5-122b-a10b-fp8-tp4-mtp" / "sim-x5" / "steps-3.json"
PUBLISHED_STEPS3 = (
    REPO_BASELINES / "qwen3.5-122b-a10b-fp8-tp4-mtp" / "4x-rtx-pro-6000-blackwell" / "steps-3.json"
)
H200_NGRAM = REPO_BASELINES / "smoke-tiny-qwen3-ngram" / "1x-h200" / "steps-3.json"


def write_results(
    path: Path,
    hardware: str = "sim-x5",
    agg: float = 1000.0,
    ab: list[AbComparison] | None = None,
    exit_status: int | None = None,
    run_id: str = "r",
) -> Path:
    samples = [make_point(1, agg + i, agg + i, tokens=4000, wall_s=4.0) for i in range(3)]
    run = DepthRun(
        depth=3,
        profile="prof",
        backend="sim",
        hardware=hardware,
        workload={"max_new_tokens": 1000},
        server=ServerSummary(url="http://x"),
        points=[merge_samples(samples)],
        planned_concurrency=[1],
        status="complete",
    )
    results = RunResults(
        run_id=run_id,
        started_at="",
        tool_version="",
        runs=[run],
        ab=ab or [],
        exit_status=exit_status,
    )
    path.write_bytes(msgspec.json.encode(results))
    return path


def test_show_prints_the_points_of_a_shipped_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["baseline", "show", str(SIM_STEPS3)]) == 0
    assert "hardware=sim-x5 steps=3" in capsys.readouterr().out


def test_diff_across_hardware_is_refused_with_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["baseline", "diff", str(H200_NGRAM), str(SIM_STEPS3)]) == 2
    assert "--allow-other-hardware" in capsys.readouterr().err


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A finished run's results.json: steps=3, C=1 at about 1,000 tok/s, on sim-x5."""
    return write_results(tmp_path / "results.json")


def test_diff_of_a_baseline_and_a_results_file(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["baseline", "diff", str(SIM_STEPS3), str(results)]) == 0
    assert "| 1 | agg tok/s |" in capsys.readouterr().out


def test_promote_writes_the_baseline_of_the_runs_key(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baselines = tmp_path / "baselines"
    assert main(["baseline", "promote", str(results), "--baselines", str(baselines)]) == 0
    written = load_baseline(baselines / "prof" / "sim-x5" / "steps-3.json")
    assert written is not None and written.points["1"].agg_tok_s == 1001.0
    assert "review the diff above" in capsys.readouterr().out


def ab_comparison(outcome: str, change: float) -> AbComparison:
    """steps=3's A/B comparison as run/ab/ records it: 3 pairs, head / base ``change``."""
    return AbComparison(
        depth=3,
        outcome=outcome,
        pairs=3,
        boots=["base", "head", "head", "base", "base", "head"],
        message=f"steps=3 A/B: {outcome} after 3 pair(s): {change:+.1%}",
        pooled=AbChange(change=change, base_median=1430.0, head_median=1430.0 * (1 + change)),
    )


def refused_promotion(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """`specperf baseline promote` of ``results``: refused (exit 2, --force offered, nothing
    written); its error output."""
    baselines = tmp_path / "baselines"
    assert main(["baseline", "promote", str(results), "--baselines", str(baselines)]) == 2
    err = capsys.readouterr().err
    assert "--force" in err
    assert not baselines.exists() or not list(baselines.rglob("*.json"))
    return err


def test_promote_refuses_an_ab_run_whose_comparison_regressed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The head's slowed figures of a red A/B run must not become the baseline."""
    results = write_results(
        tmp_path / "results.json", ab=[ab_comparison("regression", change=-0.3)]
    )
    err = refused_promotion(results, tmp_path, capsys)
    assert "not promoting steps=3" in err
    assert "A/B outcome is regression" in err


def test_promote_refuses_a_green_ab_run_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A/B mode writes no baselines, whatever its outcome; promoting one is asked for."""
    results = write_results(
        tmp_path / "results.json", ab=[ab_comparison("no-regression", change=0.01)]
    )
    err = refused_promotion(results, tmp_path, capsys)
    assert "it is an A/B run (A/B outcome no-regression" in err


def test_promote_of_a_regressed_ab_run_with_force_writes_it(tmp_path: Path) -> None:
    results = write_results(
        tmp_path / "results.json", ab=[ab_comparison("regression", change=-0.3)]
    )
    baselines = tmp_path / "baselines"
    argv = ["baseline", "promote", str(results), "--baselines", str(baselines), "--force"]
    assert main(argv) == 0
    assert load_baseline(baselines / "prof" / "sim-x5" / "steps-3.json") is not None


def test_promote_refuses_a_depth_of_a_run_that_failed_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No regression verdict at steps=3, but the session failed (another depth, an SLO, the
    lossless check): the recording would not have written it, so promote asks for --force."""
    results = write_results(tmp_path / "results.json", exit_status=1)
    err = refused_promotion(results, tmp_path, capsys)
    assert "the run it comes from did not pass (exit status 1" in err


def test_migrate_rewrites_a_schema_1_file(tmp_path: Path) -> None:
    copy = tmp_path / "steps-3.json"
    shutil.copy(SIM_STEPS3, copy)
    data = json.loads(copy.read_text())
    data["schema_version"] = 1
    copy.write_text(json.dumps(data))
    assert main(["baseline", "migrate", str(copy)]) == 0
    assert json.loads(copy.read_text())["schema_version"] == 2


def test_merge_writes_one_baseline_from_several_machines_and_says_what_it_rests_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [
        write_results(tmp_path / f"m{i}.json", agg=1000.0 + 10 * i, run_id=f"r{i}")
        for i in range(3)
    ]
    code = main(["baseline", "merge", *map(str, runs), "--baselines", str(tmp_path / "bl")])
    out = capsys.readouterr().out
    assert code == 0
    assert "rests on 3 machine(s)" in out and "wrote " in out
    written = load_baseline(tmp_path / "bl" / "prof" / "sim-x5" / "steps-3.json")
    assert written is not None and written.machines is not None
    assert written.machines.count == 3
    assert written.points["1"].noise["agg_tok_s"].machines == 3


def test_merge_dry_run_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [write_results(tmp_path / f"m{i}.json", run_id=f"r{i}") for i in range(2)]
    args = ["baseline", "merge", *map(str, runs), "--baselines", str(tmp_path / "bl"), "--dry-run"]
    assert main(args) == 0
    assert "dry run:" in capsys.readouterr().out
    assert not (tmp_path / "bl").exists()


def test_merge_refuses_a_run_whose_session_failed_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_results(tmp_path / "good.json", run_id="good")
    failed = write_results(tmp_path / "failed.json", exit_status=1, run_id="failed")
    args = ["baseline", "merge", str(good), str(failed), "--baselines", str(tmp_path / "bl")]
    assert main(args) == 2
    assert "not merging steps=3 from" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0


def test_merge_refuses_one_run_given_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same run twice would count as two machines that read exactly alike."""
    run = write_results(tmp_path / "m.json", run_id="same")
    copy = shutil.copy(run, tmp_path / "copy.json")
    assert main(["baseline", "merge", str(run), str(copy), "--baselines", str(tmp_path)]) == 2
    assert "run same is given twice" in capsys.readouterr().err


def test_show_works_out_the_floor_a_run_gets_before_any_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The shipped simulator baseline is calibrated over 3 boots: the floor a run of N samples
    a point reading its figures gets for the depth, and where the width comes from."""
    assert main(["baseline", "show", str(SIM_STEPS3)]) == 0
    three = capsys.readouterr().out
    assert re.search(r"a run of 3 samples a point reading these figures: floor -\d\.\d%", three)
    assert "boot-to-boot taken at its 60% upper bound (3 boots), 5 point(s) pooled" in three
    assert main(["baseline", "show", str(SIM_STEPS3), "--samples", "10"]) == 0
    assert "a run of 10 samples a point" in capsys.readouterr().out


def test_show_of_published_figures_says_each_point_keeps_the_fixed_tolerance(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["baseline", "show", str(PUBLISHED_STEPS3)]) == 0
    said = "each point's floor -10.0% (fixed tolerance: no calibrated noise)"
    assert said in capsys.readouterr().out
