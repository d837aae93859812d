"""pytest_specperf.results.report: report.md as markdown (run, verdict, tables, plots)."""

from __future__ import annotations

import msgspec
import pytest

from pytest_specperf.results import report
from pytest_specperf.results.plot_style import Plot
from pytest_specperf.results.report import ReportContext, markdown_report
from pytest_specperf.results.report_table import md_table
from pytest_specperf.results.schema import AbComparison, Verdict, VerdictOutcome, Warmup
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


def test_a_red_run_without_verdicts_says_it_failed_and_why() -> None:
    """A server that refused its arguments: exit 1, no verdict; never 'no verdicts recorded'."""
    run = sample_run(3)
    run.failure = "steps=3: the server refused its arguments: unrecognized arguments: --x"
    context = ReportContext(
        runs=[run, sample_run(1)],
        exit_status=1,
        exit_reasons=["specperf: no throughput verdict for steps=3, so nothing was gated"],
    )
    verdict = _section(markdown_report(context), "Verdict")
    assert "no verdicts recorded" not in verdict
    assert verdict.strip().split("\n\n")[1:] == [
        "**the run failed (exit status 1)**; no verdict was recorded:",
        "- steps=3: the server refused its arguments: unrecognized arguments: --x\n"
        "- specperf: no throughput verdict for steps=3, so nothing was gated",
    ]


def test_a_red_run_whose_verdicts_all_passed_says_what_failed_first() -> None:
    run = sample_run(3, verdicts=[sample_verdict(3, 4, "agg_tok_s", "pass")])
    run.failure = "server died at C=16"
    verdict = _section(markdown_report(ReportContext(runs=[run], exit_status=1)), "Verdict")
    assert verdict.split("\n\n")[1:3] == [
        "**the run failed (exit status 1)**, although no verdict failed:",
        "- steps=3: server died at C=16",
    ]


def test_an_interrupted_run_without_verdicts_names_the_interruption() -> None:
    context = ReportContext(
        runs=[sample_run(3)], exit_status=2, interrupted="interrupted (SIGTERM) before C=4"
    )
    verdict = _section(markdown_report(context), "Verdict")
    assert "**the run failed (exit status 2)**" in verdict
    assert "- interrupted (SIGTERM) before C=4" in verdict


def test_a_red_run_with_a_failing_verdict_reads_as_before() -> None:
    run = sample_run(3, verdicts=[sample_verdict(3, 16, "agg_tok_s", "regression")])
    verdict = _section(markdown_report(ReportContext(runs=[run], exit_status=1)), "Verdict")
    assert "the run failed" not in verdict and "**1 regression**" in verdict


def test_a_green_run_without_verdicts_still_says_none_were_recorded() -> None:
    verdict = _section(
        markdown_report(ReportContext(runs=[sample_run(3)], exit_status=0)), "Verdict"
    )
    assert verdict.strip().endswith("no verdicts recorded")


def _verdict_text(*verdicts: Verdict) -> str:
    runs = [sample_run(3, verdicts=list(verdicts))]
    return _section(markdown_report(ReportContext(runs=runs)), "Verdict")


def test_regressions_then_improvements_then_passes() -> None:
    """Verdict groups: regressions first, then improvements, then passes (folded)."""
    verdict = _verdict_text(
        sample_verdict(3, 4, "agg_tok_s", "pass"),
        sample_verdict(3, 1, "per_req_tok_s", "improvement"),
        sample_verdict(3, 16, "agg_tok_s", "regression"),
    )
    titles = ("### Regressions (1)", "### Improvements (1)", "### Passes (1)")
    order = [verdict.index(title) for title in titles]
    assert order == sorted(order)
    assert "**1 regression, 1 improvement, 1 pass**" in verdict
    assert "<details><summary>1 pass</summary>" in verdict


def test_verdict_row_shows_every_figure_of_the_decision() -> None:
    """A verdict row: median, interval, judged figure, floor, baseline, change, every sample,
    the noise source and the confirmation."""
    verdict = _verdict_text(sample_verdict(3, 16, "agg_tok_s", "regression"))
    assert (
        "| steps=3 C=16 | agg tok/s | 90.5 | [88.0, 92.0] | 90.0 | 95.0 | 100.0 | -10.0% "
        "| 3: 89.0, 91.0, 90.5 | no noise recorded: fixed tolerance 10% | not re-measured |"
    ) in verdict


def test_regression_keeps_what_the_failing_test_said() -> None:
    """The failing test's own message is kept under the regressions table."""
    verdict = _verdict_text(sample_verdict(3, 16, "agg_tok_s", "regression"))
    assert "- steps=3: regression" in verdict


@pytest.mark.parametrize(
    ("outcome", "remeasured", "shown"),
    [
        ("regression", True, "confirmed by re-measuring"),
        ("pass", True, "borderline, re-measured: not confirmed"),
        ("pass", False, "not re-measured"),
    ],
)
def test_confirmation_says_whether_re_measuring_upheld_it(
    outcome: VerdictOutcome, remeasured: bool, shown: str
) -> None:
    """The last column tells a confirmed regression from one that did not hold."""
    verdict = _verdict_text(sample_verdict(3, 4, "agg_tok_s", outcome, remeasured=remeasured))
    assert f"| {shown} |" in verdict


def test_improvements_give_the_command_that_refreshes_the_baseline() -> None:
    """Improvements end with the re-recording command, once per distinct command."""
    command = "pytest perf_tests --spec-steps=3 --specperf-update-baselines"
    verdict = _verdict_text(
        sample_verdict(3, 1, "agg_tok_s", "improvement", refresh_command=command),
        sample_verdict(3, 1, "per_req_tok_s", "improvement", refresh_command=command),
    )
    assert verdict.count(command) == 1
    assert f"After review, refresh the baseline:\n\n```\n{command}\n```" in verdict


def test_pooled_depth_verdict_shows_ratios_to_the_baseline() -> None:
    """The depth test's figures are ratios, shown as such, after the depth's points."""
    pooled = Verdict(
        depth=3,
        concurrency=None,
        metric="throughput",
        outcome="pass",
        measured=0.97,
        floor=0.95,
        baseline=1.0,
    )
    verdict = _verdict_text(pooled, sample_verdict(3, 64, "agg_tok_s", "pass"))
    row = "| steps=3 (all points pooled) | throughput (agg and per-req) | - | - | 0.970x baseline "
    assert row + "| 0.950x baseline | 1.000x baseline | -3.0% |" in verdict
    assert verdict.index("C=64") < verdict.index("all points pooled")


def test_unjudged_points_come_right_after_regressions() -> None:
    """A point the load generator bounded fails its test: it is listed before improvements."""
    unjudged = Verdict(
        depth=3, concurrency=64, metric="agg_tok_s", outcome="unjudged", message="client bound"
    )
    verdict = _verdict_text(sample_verdict(3, 1, "agg_tok_s", "improvement"), unjudged)
    assert verdict.index("### Not judged") < verdict.index("### Improvements")
    assert "| steps=3 C=64 | agg tok/s | client bound |" in verdict
    assert verdict.startswith("## Verdict\n\n**1 unjudged, 1 improvement**")


def test_repeated_points_show_median_interval_and_sample_count() -> None:
    """With repeats the table says its figures are medians with their interval, per sample
    count."""
    text = markdown_report(ReportContext(runs=[sample_run(3, interval=True)]))
    assert "| C | Agg tok/s median [95% interval] | Per-req tok/s median [95% interval] |" in text
    assert "| 1 | 750.0 [740.0, 762.0] | 750.0 | 3 |" in text
    assert "**samples per point**: 3 (figures are medians of the samples)" in text


def test_single_samples_keep_the_plain_table() -> None:
    """One sample per point: no interval, no sample column."""
    text = markdown_report(ReportContext(runs=[sample_run(3)]))
    assert "| 1 | 750.0 | 750.0 | 1,000 |" in text and "Samples" not in text


def test_trade_off_shows_intervals_when_repeated() -> None:
    """The trade-off cells carry the intervals too, and say what they are."""
    text = markdown_report(
        ReportContext(runs=[sample_run(1, interval=True), sample_run(3, interval=True)])
    )
    tradeoff = _section(text, "Speculation depth trade-off")
    assert "| 1 | 250.0 [240.0, 262.0] / 250.0 | 750.0 [740.0, 762.0] / 750.0 |" in tradeoff
    assert "Medians of the samples; [low, high]: their 95% interval." in tradeoff


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


def test_a_trade_off_of_open_loop_points_only_has_their_accept_length() -> None:
    """A trace replay at two depths and no closed-loop point: the accept length row reads the
    replay's tokens per verify step, marked as the open loop's, not a bare '-'."""
    runs = []
    for depth, verify in ((1, 500), (3, 250)):
        run = sample_run(depth)
        replay = msgspec.structs.replace(
            run.points[0], load="trace", tokens=1000, spec_verify_ct=verify
        )
        runs.append(msgspec.structs.replace(run, points=[], rate_points=[replay]))
    tradeoff = _section(markdown_report(ReportContext(runs=runs)), "Speculation depth trade-off")
    assert "| accept length | 2.00 (open loop) | 4.00 (open loop) |" in tradeoff


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


def test_a_section_added_to_the_sections_is_rendered() -> None:
    """A report of other sections is the shipped ones plus a renderer, passed in."""
    sections = (*report.MARKDOWN_SECTIONS, lambda context: f"## Extra\n\n{len(context.runs)} runs")
    text = markdown_report(ReportContext(runs=[sample_run(3)]), sections)
    assert text.rstrip().endswith("## Extra\n\n1 runs")


def test_md_table_escapes_pipes_in_cells() -> None:
    """A '|' inside a cell does not split the cell."""
    table = md_table(["a"], [["x | y"]])
    assert table.splitlines()[2] == "| x \\| y |"


def test_each_boots_warmup_is_noted_under_the_depths_markdown_table() -> None:
    run = sample_run(3)
    run.warmups = [
        Warmup(
            seconds=8.0,
            rounds=2,
            settled=True,
            stopped_by="settled",
            concurrency=[1],
            agg_tok_s=[[95.0], [96.0]],
            tolerance=0.05,
            max_rounds=3,
        )
    ]
    text = report.depth_table(run).markdown()
    assert "- warm-up boot 1: 2 rounds in 8.0 s, settled within 5%" in text


def test_an_ab_depth_whose_failure_starts_its_comparisons_message_is_named_once() -> None:
    run = sample_run(3)
    run.failure = "steps=3 A/B: interrupted (SIGTERM) during pair 2, after 1 measured pair(s)"
    comparison = AbComparison(
        depth=3, outcome="interrupted", pairs=1, message=f"{run.failure}; at the last look: ..."
    )
    context = ReportContext(runs=[run], ab=[comparison], exit_status=2)
    verdict = _section(markdown_report(context), "Verdict")
    assert verdict.count("during pair 2") == 1
