"""results/verdict_report.py: report.md's verdict section names what was not judged."""

from __future__ import annotations

from pytest_specperf.gate.not_judged import no_baseline
from pytest_specperf.results.report import ReportContext, markdown_report
from pytest_specperf.results.schema import Verdict
from tests.unit.results.test_report_markdown import _section
from tests.unit.results_samples import sample_run, sample_verdict

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
