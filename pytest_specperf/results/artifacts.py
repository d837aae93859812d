"""Everything a finished run leaves beside results.json: the plots, the github-action-benchmark
files, report.md, and the CI job summary."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.results.exports import write_benchmark_action_files
from pytest_specperf.results.plots import PlotsWritten, write_plots
from pytest_specperf.results.schema import RunResults
from pytest_specperf.results.store import REPORT_FILE, append_step_summary, write_report

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
PLOTS_LEFT_OUT = "plots: not drawn (--specperf-no-plots)"


def write_run_artifacts(
    results: RunResults,
    out_dir: Path,
    step_summary: Path | None = None,
    *,
    plots: bool = True,
) -> list[str]:
    """Write the run's artifacts into ``out_dir`` (and append the report to ``step_summary``);
    return the problems the user has to act on, one line each (nothing raises: a picture or a
    summary file must never cost the run its report). ``plots`` False: no plot is drawn."""
    runs = list(results.runs)
    drawn = (
        write_plots(runs, out_dir, results.recommendation, results.ab)
        if plots
        else PlotsWritten([], [PLOTS_LEFT_OUT])
    )
    problems = list(drawn.problems)
    write_benchmark_action_files(runs, out_dir, results.ab)
    write_report(out_dir / REPORT_FILE, results, drawn.plots, drawn.notes)
    if step_summary is not None:
        try:
            append_step_summary(step_summary, results, drawn.plots, drawn.notes)
        except OSError as exc:
            problems.append(f"{STEP_SUMMARY_ENV}: not written: {exc}")
    return problems
