"""results/ab_comment.py and `specperf ab-comment`: the A/B verdict as a PR comment."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from pytest_specperf.cli import main
from pytest_specperf.errors import SpecperfError
from pytest_specperf.results.ab_comment import COMMENT_MARKER, ab_comment
from pytest_specperf.results.schema import AbChange, AbComparison, AbPair, RunResults
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


def test_each_point_shows_its_change_interval_and_attribution() -> None:
    text = ab_comment([_comparison()])
    assert "| C=4 | **-5.0%** | [-7.0%, -3.0%] | -0.1% | -4.9% |" in text
    assert "| pooled | **-4.8%** | [-6.0%, -3.6%] | - | - |" in text
    assert "after 3 pair(s) of boots (312 GPU-seconds" in text
    assert "Pairs, in boot order: -10.0%, -5.9%" in text


def test_the_forest_plot_is_linked_where_its_url_is_known() -> None:
    assert "[forest plot](https://x/ab-forest.png)" in ab_comment(
        [_comparison()], forest_url="https://x/ab-forest.png"
    )
    assert "`ab-forest.png` in the run's artifact" in ab_comment([_comparison()])


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
