"""results/ab_report.py, ab_plot.py and the A/B entries of the github-action-benchmark file."""

from __future__ import annotations

from pathlib import Path

import msgspec

from pytest_specperf.results.ab_plot import ab_forest_figure
from pytest_specperf.results.ab_report import ab_markdown
from pytest_specperf.results.exports import BIGGER_IS_BETTER_FILE, write_benchmark_action_files
from pytest_specperf.results.report import ReportContext, markdown_report
from pytest_specperf.results.schema import AbChange, AbComparison, AbPair
from tests.support.ab import slower_point


def _comparison() -> AbComparison:
    point = slower_point(
        base_median=1000.0,
        head_median=950.0,
        why="C=4 agg -5.0% [-7.0%, -3.0%]: acceptance -0.1%, verify steps/s -4.9%",
    )
    pooled = AbChange(change=-0.048, low=-0.06, high=-0.036, why="agg -4.8%")
    return AbComparison(
        depth=3,
        outcome="regression",
        pairs=3,
        boots=["base", "head"] * 3,
        server_seconds=312.0,
        message="steps=3 A/B: REGRESSION",
        pooled=pooled,
        points=[point],
    )


def test_no_comparison_no_block() -> None:
    assert ab_markdown([]) is None


def test_the_report_opens_with_the_verdict_then_each_point() -> None:
    text = markdown_report(ReportContext(runs=[], ab=[_comparison()]))
    first = text.split("\n\n")[1]
    assert first == "## A/B verdict (base vs head, paired boots)"
    assert "**steps=3: REGRESSION** after 3 pair(s) (6 boots, 312 server-seconds" in text
    assert "| 4 | 1,000.0 | 950.0 | -5.0% | [-7.0%, -3.0%] | -0.1% | -4.9% |" in text
    assert "| pooled | - | - | -4.8% |" in text


def test_each_pair_gets_a_row_with_the_vcpu_speeds_where_they_were_timed() -> None:
    comparison = _comparison()
    comparison.pair_changes = [
        AbPair(pair=1, change=0.112, acceptance_change=0.0, step_time_change=0.112),
        AbPair(
            pair=2,
            change=-0.196,
            acceptance_change=0.0,
            step_time_change=-0.196,
            base_core_speed=7.2,
            head_core_speed=4.5,
        ),
    ]
    text = ab_markdown([comparison])
    assert text is not None
    assert (
        "| pair | change | acceptance | verify steps/s | base vCPU speed | head vCPU speed |"
        in text
    )
    assert "| 1 | +11.2% | +0.0% | +11.2% | - | - |" in text
    assert "| 2 | -19.6% | +0.0% | -19.6% | 7.2 | 4.5 |" in text


def test_pairs_without_timed_vcpus_have_no_speed_columns() -> None:
    comparison = _comparison()
    comparison.pair_changes = [AbPair(pair=1, change=-0.05)]
    text = ab_markdown([comparison])
    assert text is not None
    assert "| pair | change | acceptance | verify steps/s |\n" in text
    assert "| 1 | -5.0% | - | - |" in text


def test_the_benchmark_file_carries_each_change(tmp_path: Path) -> None:
    write_benchmark_action_files([], tmp_path, [_comparison()])
    entries = msgspec.json.decode((tmp_path / BIGGER_IS_BETTER_FILE).read_bytes())
    names = {e["name"]: e for e in entries}
    point = names["steps=3 C=4 A/B change head/base"]
    assert point["value"] == -5.0 and point["range"] == "-7.0% to -3.0%"
    assert "steps=3 pooled A/B change head/base" in names


def test_the_forest_plot_has_a_row_per_point_and_the_pool() -> None:
    figure = ab_forest_figure([_comparison()])
    assert figure is not None
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert labels == ["steps=3 pooled", "steps=3 C=4"]
    assert ab_forest_figure([]) is None


def test_the_interval_column_names_its_level_and_look_and_the_deciding_interval_follows() -> None:
    comparison = _comparison()
    comparison.interval_level = 0.98
    comparison.decided_by = "decided by the pooled change's 98% repeated interval [-6.0%, -3.6%]"
    text = ab_markdown([comparison])
    assert text is not None
    assert "| change | 98% repeated interval, after pair 3 | acceptance |" in text
    assert "steps=3 A/B: REGRESSION  \ndecided by the pooled change's 98% repeated" in text


def test_an_older_comparison_without_a_level_keeps_the_plain_header() -> None:
    text = ab_markdown([_comparison()])
    assert text is not None and "| change | interval | acceptance |" in text
