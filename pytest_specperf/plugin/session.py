"""The run's one session object: registered at pytest_configure, it holds the run's state
(settings, run id, the depths' sessions, A/B comparisons, what the end of the run said) and
wires the signal policy (interrupts.py) into pytest's run.

Like xdist's DSession or pytest-benchmark's BenchmarkSession: the hooks in ``__init__.py``
find it with ``SpecperfRun.of(config)`` and ask it; the work itself is in run/.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings
from pytest_specperf.gate.ab import AbRun
from pytest_specperf.gate.coverage import throughput_test_depth
from pytest_specperf.results.artifacts import STEP_SUMMARY_ENV, write_run_artifacts
from pytest_specperf.results.schema import RunResults
from pytest_specperf.results.store import ResultsStore, git_commit, new_run_id
from pytest_specperf.run.ab.comparison import run_and_record_ab
from pytest_specperf.run.baselines import REFUSED_DOWNGRADE, write_baselines
from pytest_specperf.run.budget import RunEstimate
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.ending import finish_history, no_verdict, refine_then_stop
from pytest_specperf.server.gpus import PresentGpus

if TYPE_CHECKING:
    from pytest_specperf.history.recorder import HistoryRecorder

PLUGIN_NAME = "specperf-run"


class EndLines:
    """What the end of the run has to say, in the order the terminal summary shows it."""

    def __init__(self) -> None:
        self.refine: list[str] = []
        self.artifacts: list[str] = []
        self.written: list[str] = []  # write_baselines' lines
        self.history: list[str] = []
        self.no_verdict: str | None = None


class SpecperfRun:
    """One process's share of the run (the controller's, or an xdist worker's)."""

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        *,
        owns_signals: bool,
        tested_commit: str | None,
    ) -> None:
        self.config = config
        self.settings = settings
        # Whether this run installed the signal policy (a pytest run inside one does not).
        self.owns_signals = owns_signals
        self.is_worker = hasattr(config, "workerinput")
        worker_input = getattr(config, "workerinput", {})
        self.run_id: str = worker_input.get("specperf_run_id") or new_run_id()
        self.tested_commit = tested_commit or git_commit(Path(config.rootpath))
        self.estimate: RunEstimate | None = None
        self.present_gpus: PresentGpus | None = None
        self.history: HistoryRecorder | None = None
        self.benchmark_output = True
        self.session: pytest.Session | None = None
        self.sessions: dict[int, DepthSession] = {}
        # The depths whose throughput tests ran (reports reach the xdist controller too).
        self.gated_depths: set[int] = set()
        # --specperf-refine: sessions whose servers stay up until the boundaries are measured.
        self.refine_pending: list[DepthSession] = []
        self.ab_runs: dict[int, AbRun] = {}
        self.end = EndLines()

    @classmethod
    def of(cls, config: pytest.Config) -> SpecperfRun | None:
        found = config.pluginmanager.get_plugin(PLUGIN_NAME)
        return found if isinstance(found, cls) else None

    def store(self) -> ResultsStore:
        recorder = self.history
        return ResultsStore(
            self.settings.out_dir,
            self.run_id,
            report=True,
            tested_commit=self.tested_commit,
            on_write=recorder.record if recorder is not None else None,
        )

    def finished_results(self) -> RunResults | None:
        results = self.store().load()
        return results if results is not None and results.runs else None

    def ab_run(self, session: DepthSession) -> AbRun | None:
        """A/B mode: the depth's comparison, run once (on first use); None outside A/B mode."""
        if not self.settings.ab_mode:
            return None
        if session.depth not in self.ab_runs:
            self.ab_runs[session.depth] = run_and_record_ab(session)
        found = self.ab_runs[session.depth]
        if found.head_run is None and session.failure is None:
            session.fail_run(found.failure or f"steps={session.depth} A/B: nothing was measured")
        return found

    # -- hooks: the signal policy and the gated depths ------------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        interrupts.checkpoint()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        depth = throughput_test_depth(report.nodeid)
        if depth is not None:
            self.gated_depths.add(depth)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Records a Ctrl-C or SIGTERM in the open runs before teardown closes them."""
        if self.owns_signals:
            interrupts.ending()
        for session in self.sessions.values():
            session.interrupt(excinfo.value)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Before the fixtures' teardown: from here a signal only hurries the end."""
        if self.owns_signals:
            interrupts.ending()

    # -- the end of the run ----------------------------------------------------------------
    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """After teardown: refine, the no-verdict line, report artifacts, the history store
        and the baselines of a recording run; each may set the exit status."""
        if interrupts.interrupted() is not None:
            session.exitstatus = exitstatus = pytest.ExitCode.INTERRUPTED
        pending, self.refine_pending = self.refine_pending, []
        self.end.refine = refine_then_stop(
            pending,
            self.settings,
            interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
            under_xdist=getattr(self.config.option, "dist", "no") != "no",
        )
        if interrupts.interrupted() is not None:
            self.mark_interrupted()
        results = self.finished_results()
        if exitstatus == pytest.ExitCode.OK:
            self.end.no_verdict = no_verdict(self.settings, results, self.gated_depths)
            if self.end.no_verdict is not None:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if results is None:
            self._finish_history(session, exitstatus)
            return
        if self.owns_signals:
            interrupts.on_interrupt(self.mark_interrupted)  # a signal from here on
        step_summary = os.environ.get(STEP_SUMMARY_ENV)
        self.end.artifacts = write_run_artifacts(
            results, self.settings.out_dir, Path(step_summary) if step_summary else None
        )
        self._finish_history(session, exitstatus)
        if self.settings.update_baselines:
            self._write_baselines(session, exitstatus, results)

    def _write_baselines(self, session: pytest.Session, exitstatus: int, results: Any) -> None:
        problem = None
        if exitstatus != pytest.ExitCode.OK:
            problem = f"the test session did not pass: {_exit_name(exitstatus)}"
        self.end.written = write_baselines(self.settings, list(results.runs), problem)
        if any(REFUSED_DOWNGRADE in line for line in self.end.written) and exitstatus == 0:
            # Asked to record, and a baseline was kept as it was: not a green recording.
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _finish_history(self, session: pytest.Session, exitstatus: int) -> None:
        if self.history is None:
            return
        said = finish_history(
            self.history,
            self.run_id,
            self.settings,
            complete=exitstatus != pytest.ExitCode.INTERRUPTED,
        )
        self.end.history = said.lines
        if said.error or (said.fails_run and session.exitstatus == pytest.ExitCode.OK):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def mark_interrupted(self) -> None:
        """results.json names the interruption (once): the interrupted depth's message, if
        any. Without report.md: this may run from a signal handler at the process's end."""
        signal_received = interrupts.interrupted()
        if signal_received is None or self.finished_results() is None:
            return

        def mark(results: RunResults) -> None:
            if results.interrupted is not None:
                return
            failures = [
                r.failure for r in results.runs if r.failure and "interrupted (" in r.failure
            ]
            results.interrupted = (
                failures[0]
                if failures
                else (f"interrupted ({signal_received.name}) once every point was measured")
            )

        ResultsStore(
            self.settings.out_dir, self.run_id, report=False, tested_commit=self.tested_commit
        ).update(mark)

    def unconfigure(self) -> None:
        """The run's last word on a signal: exit status 2, no baseline kept, results.json
        says so."""
        if self.history is not None:
            self.history.close()
        if not self.owns_signals:
            return
        session = self.session
        if interrupts.conclude(int(session.exitstatus) if session is not None else None):
            if session is not None:
                session.exitstatus = pytest.ExitCode.INTERRUPTED
            if not self.is_worker:
                self.mark_interrupted()
                if any(" wrote " in line for line in self.end.written):
                    print(
                        "specperf: interrupted after the baselines were written: they are taken "
                        "back (an interrupted run keeps no baseline)",
                        file=sys.stderr,
                    )


def _exit_name(exitstatus: int) -> str:
    try:
        return pytest.ExitCode(exitstatus).name.lower().replace("_", " ")
    except ValueError:
        return f"exit status {exitstatus}"
