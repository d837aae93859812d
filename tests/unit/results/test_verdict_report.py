"""pytest_specperf.results.verdict_report: report.md's verdict section never contradicts how
the run ended."""

from __future__ import annotations

import msgspec

from pytest_specperf.gate.decision import no_baseline
from pytest_specperf.results.report import ReportContext, markdown_report
from pytest_specperf.results.schema import AbComparison, Verdict
from pytest_specperf.results.verdict_report import floor_lines, verdict_markdown
from tests.unit.results.test_report_markdown import _section
from tests.unit.results_samples import sample_run, sample_verdict

REGRESSION = "steps=3 A/B: REGRESSION (moved by step time) after 3 pair(s): agg -20.0%"
EXPLORATORY = (
    "specperf: no verdict: an exploratory run (--specperf-allow-no-baseline, on in the smoke "
    "run profile): steps=3: no baseline (baselines/x/steps-3.json); nothing was gated "
    "(pytest -rs lists the skips)"
)


def test_a_red_ab_run_names_its_ab_verdict_not_an_absent_one() -> None:
    """Issue 49: a red A/B's report said "no verdict was recorded:" above its REGRESSION."""
    comparison = AbComparison(depth=3, outcome="regression", pairs=3, message=REGRESSION)
    text = verdict_markdown([sample_run(3)], ab=[comparison], exit_status=1)
    assert "no verdict" not in text
    assert f"**the run failed (exit status 1)**: its A/B verdict:\n\n- {REGRESSION}" in text


def test_an_ab_run_whose_boot_failed_says_no_verdict_was_reached() -> None:
    """A comparison a failed boot ended is no verdict: there the words are true."""
    failed = AbComparison(depth=3, outcome="failed", pairs=1, message="steps=3 A/B: boot failed")
    text = verdict_markdown([sample_run(3)], ab=[failed], exit_status=1)
    assert "**the run failed (exit status 1)**; no verdict was recorded:" in text


def test_an_exploratory_run_that_judged_nothing_says_so_and_why() -> None:
    """Issue 49: an exploratory run's report said only "no verdicts recorded"; it names the run
    as exploratory and each depth it did not judge, with why."""
    text = verdict_markdown([sample_run(3)], exit_status=0, exit_notes=[EXPLORATORY])
    assert "no verdicts recorded" not in text
    assert EXPLORATORY.removeprefix("specperf: ") in text


def test_an_exploratory_run_with_some_verdicts_still_names_what_it_did_not_judge() -> None:
    """Verdicts of one depth do not hide the exploratory line about another."""
    judged = sample_run(1, verdicts=[sample_verdict(1, 4, "agg_tok_s", "pass")])
    text = verdict_markdown([judged, sample_run(3)], exit_status=0, exit_notes=[EXPLORATORY])
    assert EXPLORATORY.removeprefix("specperf: ") in text and "1 pass" in text


def test_a_red_run_without_reasons_says_what_its_status_means() -> None:
    """A red status no recorded reason explains is read as pytest's status, never "a test
    failed" where it says otherwise (here 4: a usage error)."""
    text = verdict_markdown([sample_run(3)], exit_status=4)
    assert "- exit status 4: a usage error stopped it" in text
    assert "test failed" not in text


NOT_JUDGED_LINE = "specperf: not judged, so the run fails: steps=3 C=2: not judged: ..."


def _verdict_section(
    *verdicts: Verdict, exit_status: int = 0, reasons: list[str] | None = None
) -> str:
    context = ReportContext(
        runs=[sample_run(3, verdicts=list(verdicts))],
        exit_status=exit_status,
        exit_reasons=reasons or [],
    )
    return _section(markdown_report(context), "Verdict")


def test_a_gating_run_red_on_a_point_not_judged_says_so_and_lists_it() -> None:
    """Not "although no verdict failed": the run failed on what it could not judge, and the
    point is in a table of its own, before the passes."""
    section = _verdict_section(
        sample_verdict(3, 1, "agg_tok_s", "pass"),
        no_baseline(3, 2, "b.json"),
        exit_status=1,
        reasons=[NOT_JUDGED_LINE],
    )
    assert "**the run failed (exit status 1)** on what it could not judge:" in section
    assert "although no verdict failed" not in section
    assert f"- {NOT_JUDGED_LINE}" in section
    assert "1 not judged, 1 pass" in section
    assert "### Not judged" in section
    assert (
        "| steps=3 C=2 | throughput (agg and per-req) | "
        "steps=3 C=2: not judged: no baseline point [b.json] |" in section
    )
    assert section.index("### Not judged") < section.index("### Passes")


def test_an_exploratory_run_that_judged_nothing_says_what_and_why() -> None:
    """Green, but not 'no verdicts recorded': the depth's no-baseline verdict says why."""
    depth = Verdict(
        depth=3,
        concurrency=None,
        metric="throughput",
        outcome="no-baseline",
        message="steps=3: not judged: no baseline (p is missing)",
    )
    section = _verdict_section(depth)
    assert "no verdicts recorded" not in section and "the run failed" not in section
    assert "steps=3: not judged: no baseline (p is missing)" in section


def test_a_depth_judged_point_by_point_states_its_floor_and_the_figure_nearest_it() -> None:
    nearer = msgspec.structs.replace(sample_verdict(3, 4, "per_req_tok_s", "pass"), measured=85.0)
    verdicts = [
        sample_verdict(3, 16, "agg_tok_s", "pass"),
        nearer,
        sample_verdict(3, 16, "accept_length", "pass"),
    ]
    lines = floor_lines([sample_run(3, verdicts=verdicts)])
    assert lines == [
        "gate floor: steps=3, point by point: -20.0% vs baseline for each of 2 figures "
        "(nearest its floor: C=4 per-req tok/s, pass, -15.0%); "
        "width: no noise recorded: fixed tolerance 10%"
    ]


def test_a_depth_tested_as_a_whole_states_only_its_pooled_floor() -> None:
    pooled = msgspec.structs.replace(
        sample_verdict(3, None, "throughput", "pass"), floor=0.95, measured=0.99
    )
    run = sample_run(3, verdicts=[pooled, sample_verdict(3, 16, "agg_tok_s", "pass")])
    assert floor_lines([run]) == [
        "gate floor: steps=3: -5.0% vs baseline (pass, -1.0%); "
        "width: no noise recorded: fixed tolerance 10%"
    ]
