"""pytest_specperf.results.report: report.md as markdown (run, verdict, tables, plots)."""

from __future__ import annotations

import pytest

from pytest_specperf.results import report
from pytest_specperf.results.report import Plot, ReportContext, markdown_report, md_table
from tests.unit.results_samples import sample_run, sample_verdict


def _section(text: str, title: str) -> str:
    """The text of one '## title' section."""
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_tables_are_markdown_tables_not_a_code_block() -> None:
    """Per-depth tables are markdown tables (header row + separator), not fenced text."""
    text = markdown_report(ReportContext(runs=[sample_run(1), sample_run(3)]))
    assert "```" not in text
    assert "| C | Agg tok/s | Per-req tok/s | Tokens | Wall (s) | Ok |" in text
    assert "### steps=1" in text and "### steps=3" in text


def test_run_section_names_what_was_tested() -> None:
    """The run section gives profile, hardware, SGLang version, tested commit and start time."""
    context = ReportContext(
        runs=[sample_run(3)], started_at="2026-12-01T08:00:00+00:00", tested_commit="abc123"
    )
    run = _section(markdown_report(context), "Run")
    for expected in (
        "**profile**: prof",
        "**hardware**: sim-x5",
        "**SGLang version**: 0.5.12",
        "**tested commit**: abc123",
        "**started**: 2026-12-01T08:00:00+00:00",
    ):
        assert expected in run


def test_commit_outside_a_git_checkout_is_unknown() -> None:
    """Without a tested commit the run section says unknown."""
    run = _section(markdown_report(ReportContext(runs=[sample_run(3)])), "Run")
    assert "**tested commit**: unknown" in run


def test_verdict_comes_before_the_tables() -> None:
    """The verdict is the first thing after the run description."""
    text = markdown_report(ReportContext(runs=[sample_run(3)]))
    assert text.index("## Verdict") < text.index("## Results per depth")


def test_no_verdicts_says_so() -> None:
    """Runs without verdicts show 'no verdicts recorded' and derive none."""
    verdict = _section(markdown_report(ReportContext(runs=[sample_run(3)])), "Verdict")
    assert "no verdicts recorded" in verdict and "| outcome |" not in verdict


def test_regressions_then_improvements_then_passes() -> None:
    """Verdict rows: regressions first, then improvements, then passes (folded)."""
    verdicts = [
        sample_verdict(3, 4, "agg_tok_s", "pass"),
        sample_verdict(3, 1, "per_req_tok_s", "improvement"),
        sample_verdict(3, 16, "agg_tok_s", "regression"),
    ]
    verdict = _section(
        markdown_report(ReportContext(runs=[sample_run(3, verdicts=verdicts)])), "Verdict"
    )
    order = [verdict.index(word) for word in ("| **regression** |", "| improvement |", "| pass |")]
    assert order == sorted(order)
    assert "**1 regression, 1 improvement, 1 pass**" in verdict


def test_verdict_row_shows_measured_interval_floor_and_baseline() -> None:
    """Each verdict row carries its figures: measured, interval, floor, baseline."""
    verdicts = [sample_verdict(3, 16, "agg_tok_s", "regression")]
    verdict = _section(
        markdown_report(ReportContext(runs=[sample_run(3, verdicts=verdicts)])), "Verdict"
    )
    assert (
        "| **regression** | steps=3 C=16 | agg tok/s | 90.0 | [88.0, 92.0] (95%) | 95.0 | 100.0 |"
        in verdict
    )


def test_point_intervals_appear_beside_the_figure() -> None:
    """A point with an interval shows it in its cell."""
    text = markdown_report(ReportContext(runs=[sample_run(3, interval=True)]))
    assert "| 1 | 750.0 [740.0, 762.0] (95%) |" in text


def test_one_depth_has_no_trade_off_section() -> None:
    """The trade-off needs two depths; a section that returns None is left out."""
    assert "## Speculation depth trade-off" not in markdown_report(
        ReportContext(runs=[sample_run(3)])
    )


def test_trade_off_section_is_a_table_with_a_kv_row() -> None:
    """Two depths: the trade-off is a markdown table ending with KV and accept length rows."""
    text = markdown_report(
        ReportContext(runs=[sample_run(3, kv_tokens=900), sample_run(1, kv_tokens=1000)])
    )
    tradeoff = _section(text, "Speculation depth trade-off")
    assert "| C | steps=1 agg / per-req tok/s | steps=3 agg / per-req tok/s |" in tradeoff
    assert "| KV | 1,000 tokens, 48 running | 900 tokens, 48 running |" in tradeoff


def test_plots_are_embedded_beside_the_report() -> None:
    """report.md embeds its PNGs by relative path."""
    plots = [Plot(title="Throughput", file="throughput.png")]
    text = markdown_report(ReportContext(runs=[sample_run(3)], plots=plots))
    assert "![Throughput](throughput.png)" in text


def test_job_summary_names_plots_without_embedding_them() -> None:
    """A CI job summary cannot show artifact files: the plots are named instead."""
    plots = [Plot(title="Throughput", file="throughput.png")]
    text = markdown_report(ReportContext(runs=[sample_run(3)], plots=plots, embed_plots=False))
    assert "![" not in text and "`throughput.png` (Throughput)" in text


def test_a_section_appended_to_the_list_is_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another part of the suite adds a section by appending a renderer to MARKDOWN_SECTIONS."""
    sections = [*report.MARKDOWN_SECTIONS, lambda context: f"## Extra\n\n{len(context.runs)} runs"]
    monkeypatch.setattr(report, "MARKDOWN_SECTIONS", sections)
    text = markdown_report(ReportContext(runs=[sample_run(3)]))
    assert text.rstrip().endswith("## Extra\n\n1 runs")


def test_md_table_escapes_pipes_in_cells() -> None:
    """A '|' inside a cell does not split the cell."""
    table = md_table(["a"], [["x | y"]])
    assert table.splitlines()[2] == "| x \\| y |"
