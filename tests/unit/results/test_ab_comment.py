"""results/ab_comment.py and `specperf ab-comment`: the A/B verdict as a PR comment."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from pytest_specperf.cli import main
from pytest_specperf.errors import SpecperfError
from pytest_specperf.results.ab_comment import COMMENT_MARKER, ab_comment
from pytest_specperf.results.schema import (
    AbChange,
    AbComparison,
    AbPair,
    DepthRun,
    RunResults,
    Testbed,
)
from tests.support.ab import slower_point


def _comparison(depth: int = 3, outcome: str = "regression") -> AbComparison:
    return AbComparison(
        depth=depth,
        outcome=outcome,
        pairs=3,
        boots=["base", "head", "head", "base", "base", "head"],
        server_seconds=312.0,
        message=f"steps={depth} A/B: {outcome}",
        pooled=AbChange(change=-0.048, low=-0.06, high=-0.036),
        points=[slower_point()],
        pair_changes=[AbPair(pair=1, change=-0.1), AbPair(pair=2, change=-0.059)],
    )


def test_the_comment_opens_with_its_marker_and_the_verdict() -> None:
    lines = ab_comment([_comparison()]).splitlines()
    assert lines[0] == COMMENT_MARKER
    assert lines[1] == "### specperf A/B: REGRESSION"


def test_the_verdict_of_several_depths_is_the_worst() -> None:
    text = ab_comment([_comparison(1, "no-regression"), _comparison(3, "undecided")])
    assert text.splitlines()[1] == "### specperf A/B: undecided"
    assert text.index("steps=1") < text.index("steps=3")


def _head_run(backend: str = "sglang", gpus: int | None = 4, depth: int = 3) -> DepthRun:
    testbed = Testbed(gpus=gpus) if gpus is not None else None
    return DepthRun(
        depth=depth, profile="p", backend=backend, hardware="h", workload={}, testbed=testbed
    )


def test_each_point_shows_its_change_interval_and_attribution() -> None:
    text = ab_comment([_comparison()])
    assert "| C=4 | **-5.0%** | [-7.0%, -3.0%] | -0.1% | -4.9% |" in text
    assert "| pooled | **-4.8%** | [-6.0%, -3.6%] | - | - |" in text
    assert "Pairs, in boot order: -10.0%, -5.9%" in text


def test_gpu_seconds_count_the_gpus_each_server_had() -> None:
    """312 server-seconds on servers of 4 GPUs are 1,248 GPU-seconds, said with the count."""
    text = ab_comment([_comparison()], runs=[_head_run(gpus=4)])
    assert "after 3 pair(s) of boots (1,248 GPU-seconds, 4 GPUs per server;" in text
    assert "Base vs head booted in pairs: 3 pair(s), 1,248 GPU-seconds, 4 GPUs per server." in text


def test_the_simulator_costs_server_seconds_and_no_gpu() -> None:
    """Issue 49: the simulator's comment claimed "116 GPU-seconds (one GPU per server)"."""
    text = ab_comment([_comparison()], runs=[_head_run("sim", gpus=None)])
    assert "GPU-seconds" not in text and "one GPU" not in text
    assert "312 server-seconds on the simulator, which has no GPU" in text


def test_servers_whose_gpus_were_not_recorded_cost_server_seconds() -> None:
    """Without the head's GPU count (or its run) the comment claims no GPU count."""
    for runs in ([], [_head_run(gpus=None)]):
        text = ab_comment([_comparison()], runs=runs)
        assert "GPU-seconds" not in text
        assert "312 server-seconds, GPUs per server not recorded" in text


def test_the_forest_plot_is_linked_where_it_was_drawn() -> None:
    """Linked by its URL, or named in the artifact, only where the plot was drawn."""
    assert "[forest plot](https://x/a)" in ab_comment(
        [_comparison()], forest_drawn=True, forest_url="https://x/a"
    )
    assert "`ab-forest.png` in the run's artifact" in ab_comment([_comparison()], forest_drawn=True)


def test_a_forest_plot_not_drawn_is_not_claimed() -> None:
    """Issue 49: without matplotlib no ab-forest.png is written, and the comment named it."""
    text = ab_comment([_comparison()], forest_url="https://x/a")
    assert "forest" not in text and "ab-forest.png" not in text


def test_a_run_without_an_ab_comparison_is_refused() -> None:
    with pytest.raises(SpecperfError, match="no A/B comparison"):
        ab_comment([])


def test_the_cli_prints_the_comment_of_a_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = RunResults(run_id="r", started_at="now", tool_version="t", ab=[_comparison()])
    path = tmp_path / "results.json"
    path.write_bytes(msgspec.json.encode(results))
    assert main(["ab-comment", str(path), "--run-url", "https://ci/run/1"]) == 0
    out = capsys.readouterr().out
    assert (
        out.startswith(COMMENT_MARKER)
        and "[the run, its report and artifacts](https://ci/run/1)" in out
    )
    assert main(["ab-comment", str(tmp_path / "missing.json")]) == 2


def test_the_cli_reads_what_lies_beside_the_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The forest plot is linked when ab-forest.png is beside results.json, and the cost is
    read from the run's own depth (here the simulator's)."""
    results = RunResults(
        run_id="r",
        started_at="now",
        tool_version="t",
        runs=[_head_run("sim", gpus=None)],
        ab=[_comparison()],
    )
    path = tmp_path / "results.json"
    path.write_bytes(msgspec.json.encode(results))
    args = ["ab-comment", str(path), "--forest-url", "https://x/a"]
    assert main(args) == 0
    without = capsys.readouterr().out
    (tmp_path / "ab-forest.png").write_bytes(b"png")
    assert main(args) == 0
    drawn = capsys.readouterr().out
    assert "forest" not in without and "[forest plot](https://x/a)" in drawn
    assert "on the simulator, which has no GPU" in drawn
