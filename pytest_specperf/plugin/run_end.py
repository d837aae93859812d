"""The end of the run, pytest's side: after teardown (``finish``) and at unconfigure.

The work is run/ending.py's and run/baselines.py's; here its outcome becomes the exit status,
and a signal's last word is said (an interrupted run keeps no baseline).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import SpecperfError
from pytest_specperf.plugin.session import SpecperfRun
from pytest_specperf.results.artifacts import STEP_SUMMARY_ENV, write_run_artifacts
from pytest_specperf.results.schema import RunResults, Verdict
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.run.baselines import REFUSED_DOWNGRADE, write_baselines
from pytest_specperf.run.ending import (
    depths_not_judged,
    exploratory_no_verdict,
    no_verdict,
    refine_then_stop,
)

if TYPE_CHECKING:
    from pytest_specperf.history.recorder import HistoryRecorder


def finish(run: SpecperfRun, session: pytest.Session, exitstatus: int) -> None:
    """After teardown: refine, the no-verdict lines, report artifacts, the history store
    and the baselines of a recording run; each may set the exit status."""
    if interrupts.interrupted() is not None:
        session.exitstatus = exitstatus = pytest.ExitCode.INTERRUPTED
    pending, run.refine_pending = run.refine_pending, []
    run.end.refine = refine_then_stop(
        pending,
        run.settings,
        interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
        under_xdist=getattr(run.config.option, "dist", "no") != "no",
    )
    if interrupts.interrupted() is not None:
        mark_interrupted(run)
    results = run.finished_results()
    # A depth that judged nothing is named when the run passed (one that failed has no
    # verdict for that reason); a point not judged, whatever the run's status.
    passed = exitstatus == pytest.ExitCode.OK
    gated = run.gated_depths
    run.end.no_verdict = no_verdict(run.settings, results, gated, depths_too=passed)
    if run.end.no_verdict is not None and passed:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    run.end.exploratory = exploratory_no_verdict(run.settings, results, gated, depths_too=passed)
    if results is None:
        _finish_history(run, session, exitstatus)
        return
    if run.owns_signals:
        interrupts.on_interrupt(lambda: mark_interrupted(run))  # a signal from here on
    not_judged = depths_not_judged(run.settings, results, gated) if passed else []
    results = run.store().update(
        _ended(session.exitstatus, run.end.no_verdict, run.end.exploratory, not_judged)
    )
    step_summary = os.environ.get(STEP_SUMMARY_ENV)
    run.end.artifacts = write_run_artifacts(
        results,
        run.settings.out_dir,
        Path(step_summary) if step_summary else None,
        plots=not run.settings.no_plots,
    )
    _finish_history(run, session, exitstatus)
    if run.settings.update_baselines:
        _write_baselines(run, session, exitstatus, results)


def _write_baselines(
    run: SpecperfRun, session: pytest.Session, exitstatus: int, results: RunResults
) -> None:
    problem = None
    if exitstatus != pytest.ExitCode.OK:
        problem = f"the test session did not pass: {_exit_name(exitstatus)}"
    run.end.written = write_baselines(run.settings, list(results.runs), problem)
    if any(REFUSED_DOWNGRADE in line for line in run.end.written) and exitstatus == 0:
        # Asked to record, and a baseline was kept as it was: not a green recording.
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _finish_history(run: SpecperfRun, session: pytest.Session, exitstatus: int) -> None:
    if run.history is None or run.lock is None:
        return  # no history without a run that began (nothing of the suite's collected)
    said = finish_history(
        run.history,
        run.run_id,
        run.settings,
        complete=exitstatus != pytest.ExitCode.INTERRUPTED,
    )
    run.end.history = said.lines
    if said.error or (said.fails_run and session.exitstatus == pytest.ExitCode.OK):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def mark_interrupted(run: SpecperfRun) -> None:
    """results.json names the interruption (once): the interrupted depth's message, if
    any. Without report.md: this may run from a signal handler at the process's end."""
    signal_received = interrupts.interrupted()
    if signal_received is None or run.finished_results() is None:
        return

    def mark(results: RunResults) -> None:
        if results.interrupted is not None:
            return
        failures = [r.failure for r in results.runs if r.failure and "interrupted (" in r.failure]
        results.interrupted = (
            failures[0]
            if failures
            else (f"interrupted ({signal_received.name}) once every point was measured")
        )

    ResultsStore(
        run.settings.out_dir,
        run.run_id,
        report=False,
        tested_commit=run.tested_commit,
        started_at=run.started_at,
    ).update(mark)


def unconfigure(run: SpecperfRun) -> None:
    """The history store closed, the signals' last word, then the out dir given back."""
    if run.history is not None:
        run.history.close()
    try:
        _conclude_signals(run)
    finally:
        if run.lock is not None:
            run.lock.release()


def _conclude_signals(run: SpecperfRun) -> None:
    """The run's last word on a signal: exit status 2, no baseline kept, results.json says so."""
    if not run.owns_signals:
        return
    session = run.session
    if interrupts.conclude(int(session.exitstatus) if session is not None else None):
        if session is not None:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        if not run.is_worker and not run.refused:
            mark_interrupted(run)
            if any(" wrote " in line for line in run.end.written):
                print(
                    "specperf: interrupted after the baselines were written: they are taken "
                    "back (an interrupted run keeps no baseline)",
                    file=sys.stderr,
                )


def _ended(
    exit_status: int,
    no_verdict: str | None,
    exploratory: str | None,
    not_judged: list[Verdict],
) -> Callable[[RunResults], None]:
    """Records how the run ended, which report.md's verdict section agrees with, and each
    depth that judged nothing as its no-baseline verdict."""

    def change(results: RunResults) -> None:
        results.exit_status = int(exit_status)
        results.exit_reasons = [no_verdict] if no_verdict else []
        results.exit_notes = [exploratory] if exploratory else []
        for verdict in not_judged:
            run = results.depth(verdict.depth)
            if run is not None and verdict not in run.verdicts:
                run.verdicts.append(verdict)

    return change


def _exit_name(exitstatus: int) -> str:
    try:
        return pytest.ExitCode(exitstatus).name.lower().replace("_", " ")
    except ValueError:
        return f"exit status {exitstatus}"


@dataclass
class HistoryEnd:
    """What the history store said at the run's end, and whether it fails the run."""

    lines: list[str] = field(default_factory=list)
    fails_run: bool = False  # a new change point: a passing run fails
    error: bool = False  # the store could not be written: the run fails whatever it was


def finish_history(
    recorder: HistoryRecorder, run_id: str, settings: Settings, *, complete: bool
) -> HistoryEnd:
    """Mark the run in the history store; a nightly run's new change point fails the job
    (--specperf-history-on-change=fail)."""
    try:
        outcome = recorder.finish(run_id, complete=complete, out_dir=settings.out_dir)
    except SpecperfError as exc:
        return HistoryEnd([f"history: {exc}"], error=True)
    lines = outcome.lines
    fails = bool(outcome.new_changes) and settings.history_on_change == "fail"
    if fails:
        lines.append("history: a change point is new with this run: failing the job")
    return HistoryEnd(lines, fails_run=fails)
