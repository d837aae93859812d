"""The run's one session object: registered at pytest_configure, it holds the run's state
(settings, run id, the depths' sessions, their verdicts, A/B comparisons, what the end of the
run said), starts each depth (its server booted, or in A/B mode its comparison run) and wires
the signal policy (interrupts.py) into pytest's run.

Like xdist's DSession or pytest-benchmark's BenchmarkSession: the hooks in ``__init__.py``
find it with ``SpecperfRun.of(config)`` and ask it; the work itself is in run/.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import SpecperfError
from pytest_specperf.gate.ab.prior import PairPrior
from pytest_specperf.plugin.benchmark import without_benchmark_banner
from pytest_specperf.plugin.node_ids import throughput_test_depth
from pytest_specperf.results.run_lock import OutDirLock
from pytest_specperf.results.runner_spread import RunnerSpread
from pytest_specperf.results.schema import RunResults, Verdict
from pytest_specperf.results.store import ResultsStore, git_commit, new_run_id, start_time
from pytest_specperf.run.ab.comparison import run_and_record_ab
from pytest_specperf.run.ab.pairs import AbRun, PriorLookup
from pytest_specperf.run.budget import RunEstimate
from pytest_specperf.run.depth_session import DepthSession
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
        self.no_verdict: str | None = None  # red: a gate that judged nothing fails the run
        self.exploratory: str | None = None  # an exploratory run that judged nothing: said


@dataclass
class DepthVerdicts:
    """One depth session's verdicts, each family judged once, when a test first asks
    (plugin/gate.py): the closed-loop points and the depth pooled, and the open-loop points."""

    closed_loop: list[Verdict] | None = None
    open_loop: list[Verdict] | None = None


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
        self.started_at: str = worker_input.get("specperf_started_at") or start_time()
        self.tested_commit = tested_commit or git_commit(Path(config.rootpath))
        self.estimate: RunEstimate | None = None
        self.present_gpus: PresentGpus | None = None
        self.history: HistoryRecorder | None = None
        # The out dir's lock (results/run_lock.py), taken when the run begins; refused: another
        # run holds it, and this one writes nothing there at its end.
        self.lock: OutDirLock | None = None
        self.refused = False
        self.benchmark_output = True
        self.session: pytest.Session | None = None
        self.sessions: dict[int, DepthSession] = {}
        # Each depth's verdicts, for the session in ``sessions`` (a new one judges anew).
        self.verdicts: dict[int, DepthVerdicts] = {}
        # The depths whose throughput tests ran (reports reach the xdist controller too).
        self.gated_depths: set[int] = set()
        # --specperf-refine: sessions whose servers stay up until the boundaries are measured.
        self.refine_pending: list[DepthSession] = []
        self.ab_runs: dict[int, AbRun] = {}
        # --specperf-history (issue 38): each (depth, hardware)'s spread between earlier runs.
        self.runner_spreads: dict[tuple[int, str], RunnerSpread | None] = {}
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
            started_at=self.started_at,
        )

    def finished_results(self) -> RunResults | None:
        results = self.store().load()
        return results if results is not None and results.runs else None

    def start_depth(self, session: DepthSession, *, fresh: bool) -> None:
        """The depth's measuring begins: its server booted (or attached to), or in A/B mode
        its comparison run to the verdict, fresh boots in pairs, and recorded. A failure is
        kept in ``session.failure``: the first test that meets it fails with it."""
        if not self.settings.ab_mode:
            with contextlib.suppress(SpecperfError):
                session.open(fresh=fresh)
            return
        prior = self._ab_prior(session) if self.history is not None else None
        self.ab_runs[session.depth] = run_and_record_ab(session, prior)

    def runner_spread(
        self, session: DepthSession, hardware: str | None = None
    ) -> RunnerSpread | None:
        """--specperf-history: the spread between this runner's earlier comparable runs of the
        depth (None: no store, or too few such runs in it)."""
        if self.history is None:
            return None
        from pytest_specperf.history.spread_lookup import depth_spread  # only with a store

        key = (session.depth, hardware or session.hardware)
        if key not in self.runner_spreads:
            s = session.settings
            self.runner_spreads[key] = depth_spread(
                self.history.store,
                profile=s.profile.name,
                hardware=key[1],
                backend=s.backend,
                depth=session.depth,
                workload=s.workload.key(),
                concurrencies=set(s.concurrency),
                exclude_run=self.run_id,
                placement=s.server_cpu,
            )
        return self.runner_spreads[key]

    def _ab_prior(self, session: DepthSession) -> PriorLookup:
        """The runner's pair spread as A/B's prior, once the first boot names the hardware."""

        def lookup(hardware: str) -> PairPrior | None:
            found = self.runner_spread(session, hardware)
            return PairPrior.from_runner(found) if found is not None else None

        return lookup

    # -- hooks: the signal policy, the gated depths, the header ---------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    @pytest.hookimpl(wrapper=True)
    def pytest_report_header(self) -> Generator[None, list[Any], list[Any]]:
        """pytest-benchmark's banner left out of the header of a run that asked for none of
        its output (plugin/benchmark.py)."""
        lines = yield
        if self.benchmark_output or not self.config.pluginmanager.has_plugin("benchmark"):
            return lines
        return without_benchmark_banner(lines)

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
