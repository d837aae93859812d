"""pytest_specperf.results.verdict_report: report.md's verdict section never contradicts how
the run ended."""

from __future__ import annotations

from pytest_specperf.results.schema import AbComparison
from pytest_specperf.results.verdict_report import verdict_markdown
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
