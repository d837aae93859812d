"""pytest-specperf's hooks: options, settings, parametrization, fixtures, summary.

Logic lives in plain modules (suite, loadgen, metrics, baselines, gate, report); this file
only wires them into pytest.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Generator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from pytest_specperf import interrupts
from pytest_specperf.ab_suite import PriorLookup, ab_head_point, run_and_record_ab
from pytest_specperf.commands import Recording, record_command
from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.errors import SpecperfError, UsageError
from pytest_specperf.gate.ab import AbRun, PairPrior
from pytest_specperf.gate.coverage import (
    depths_without_verdict,
    no_verdict_line,
    throughput_test_depth,
)
from pytest_specperf.gate.floors import headline
from pytest_specperf.history.rows import RunContext, tested_commit_override
from pytest_specperf.options import (
    ALLOW_NO_BASELINE_FLAG,
    OPTIONS,
    OPTIONS_BY_KEY,
    Settings,
    build_settings,
)
from pytest_specperf.private_api import scope_scheduling
from pytest_specperf.pytest_gate import SpecperfGate
from pytest_specperf.pytest_terminal import (
    RECORDED_CATEGORY,
    live_progress,
    recorded_lines,
    recorded_status,
)
from pytest_specperf.results.artifacts import STEP_SUMMARY_ENV, write_run_artifacts
from pytest_specperf.results.benchmark import (
    add_gate_figures,
    record_point,
    wants_benchmark_output,
    without_benchmark_banner,
)
from pytest_specperf.results.report import floor_lines, full_report
from pytest_specperf.results.schema import DepthRun, PointMetrics, RunResults
from pytest_specperf.results.spread import RunnerSpread
from pytest_specperf.results.store import (
    ResultsStore,
    git_commit,
    new_run_id,
)
from pytest_specperf.run_time import RunEstimate, check_budget
from pytest_specperf.server.gpus import (
    PresentGpus,
    check_gpu_plan,
    gpu_slice,
    present_gpus,
    worker_index,
    xdist_worker_count,
)
from pytest_specperf.server.process import depth_of, fetch_server_info
from pytest_specperf.suite import (
    REFUSED_DOWNGRADE,
    DepthSession,
    ServerDied,
    depth_scope,
    refine,
    why_unjudged,
    write_baselines,
)

if TYPE_CHECKING:
    from pytest_specperf.history.recorder import HistoryRecorder

settings_key = pytest.StashKey[Settings]()
estimate_key = pytest.StashKey[RunEstimate]()
run_id_key = pytest.StashKey[str]()
tested_commit_key = pytest.StashKey[str | None]()
sessions_key = pytest.StashKey[dict[int, DepthSession]]()
gated_depths_key = pytest.StashKey[set[int]]()
_no_verdict_key = pytest.StashKey[str]()
# Whether this run installed the signal policy (a pytest run inside a pytest run does not).
owns_signals_key = pytest.StashKey[bool]()
session_key = pytest.StashKey[pytest.Session]()
present_gpus_key = pytest.StashKey[PresentGpus | None]()
benchmark_output_key = pytest.StashKey[bool]()
# --specperf-refine: sessions whose servers stay up until the boundaries are measured.
refine_pending_key = pytest.StashKey[list[DepthSession]]()
ab_runs_key = pytest.StashKey[dict[int, AbRun]]()
_refine_lines_key = pytest.StashKey[list[str]]()
history_key = pytest.StashKey["HistoryRecorder | None"]()
_history_lines_key = pytest.StashKey[list[str]]()
# xdist modes that would split one depth's tests over several workers (one server each).
_SPLITTING_DIST_MODES = ("load", "loadscope", "loadfile", "loadgroup", "worksteal")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("specperf", "speculative decoding performance (pytest-specperf)")
    for spec in OPTIONS:
        if spec.kind == "flag":
            group.addoption(spec.flag, dest=spec.dest, action="store_true", help=spec.help)
            continue
        shown = f" (default: {spec.default})" if spec.default is not None else ""
        group.addoption(
            spec.flag,
            dest=spec.dest,
            action="append" if spec.kind == "append" else "store",
            default=None,
            help=spec.help + shown,
        )
        if spec.ini:
            # No default here: an ini key left out must read as "not given" (the table's
            # default applies in build_settings), so a run profile can tell it from one set.
            parser.addini(spec.ini_name, spec.help + shown, default=None)


def _option_getter(config: pytest.Config) -> Callable[[str], Any]:
    """The command line's value, else the ini file's; None when neither gives one."""

    def get(key: str) -> Any:
        spec = OPTIONS_BY_KEY[key]
        value = config.getoption(spec.dest)
        if spec.kind == "flag" and not value:
            value = None  # not given: a run profile may set it
        if value is None and spec.ini:
            ini_value = config.getini(spec.ini_name)
            return None if ini_value in (None, "") else ini_value
        return value

    return get


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    # First, so that a Ctrl-C or SIGTERM from here on ends the run as interrupted.
    config.stash[owns_signals_key] = interrupts.install()
    try:
        get = _option_getter(config)
        settings = build_settings(get, Path(config.rootpath))
        if settings.url:
            info = fetch_server_info(settings.url, settings.api_key)
            depth = depth_of(info)
            served = (CONTROL_DEPTH if depth is None else depth,)
            if get("spec_steps") is not None and settings.depths != served:
                raise UsageError(url_depth_mismatch(settings.url, settings.depths, served[0]))
            settings = _with_depths(settings, served)
        if settings.refine and not _is_worker(config) and _xdist_workers(config) > 1:
            raise UsageError(
                "--specperf-refine: not under xdist (-n): each worker holds only its own "
                "depths' servers; drop -n, or drop --specperf-refine"
            )
        config.stash[present_gpus_key] = _plan_gpus(config, settings)
        if not _is_worker(config):
            config.stash[estimate_key] = check_budget(settings)
    except SpecperfError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[settings_key] = settings
    config.stash[sessions_key] = {}
    worker_input = getattr(config, "workerinput", {})
    config.stash[run_id_key] = worker_input.get("specperf_run_id") or new_run_id()
    config.stash[tested_commit_key] = tested_commit_override() or git_commit(Path(config.rootpath))
    config.stash[history_key] = _open_history(config, settings)
    config.addinivalue_line(
        "markers",
        "specperf_phase(n): order of a check within a depth (0 first, 2 after the points)",
    )
    config.pluginmanager.register(_InterruptRecorder(config), "specperf-interrupts")
    config.stash[gated_depths_key] = set()
    config.pluginmanager.register(_GatedDepths(config), "specperf-gated-depths")
    _quiet_benchmark_unless_asked(config)


def _quiet_benchmark_unless_asked(config: pytest.Config) -> None:
    """pytest-benchmark's banner and table only when its output is asked for."""
    wanted = wants_benchmark_output(
        config.invocation_params.args, lambda name: config.getoption(name, None)
    )
    config.stash[benchmark_output_key] = wanted
    if not wanted and config.pluginmanager.has_plugin("benchmark"):
        config.pluginmanager.register(_BenchmarkBanner(), "specperf-benchmark-banner")


class _BenchmarkBanner:
    """Leaves pytest-benchmark's banner out of the header of a run that asked for no output."""

    @pytest.hookimpl(wrapper=True)
    def pytest_report_header(self) -> Generator[None, list[Any], list[Any]]:
        return without_benchmark_banner((yield))


def _xdist_workers(config: pytest.Config) -> int:
    return xdist_worker_count(config.getoption("dist", "no"), config.getoption("tx", None))


def url_depth_mismatch(url: str, asked: tuple[int, ...], served: int) -> str:
    steps = ",".join(map(str, asked))
    return (
        f"--spec-steps={steps}: the server at {url} runs steps={served} (its /server_info), "
        "and with --specperf-url the depth is the server's; drop --spec-steps or give "
        f"--spec-steps={served}"
    )


def _open_history(config: pytest.Config, settings: Settings) -> HistoryRecorder | None:
    """--specperf-history: the store, and (controller) this run's row, status incomplete."""
    if settings.history is None:
        return None
    # Imported here: the store's SQLAlchemy, Alembic and ruptures cost every run a second
    # of imports (and one subprocess per e2e test), and only --specperf-history needs them.
    from pytest_specperf.history.recorder import HistoryRecorder

    context = RunContext(run_profile=settings.run_profile, calibration=settings.calibrate)
    recorder = HistoryRecorder(settings.history, context)
    if not _is_worker(config):
        try:
            recorder.start(config.stash[run_id_key], config.stash[tested_commit_key])
        except SpecperfError as exc:
            raise pytest.UsageError(str(exc)) from None
    return recorder


def _plan_gpus(config: pytest.Config, settings: Settings) -> PresentGpus | None:
    """The GPUs each server may take (None: servers keep the environment's GPUs).

    The controller looks them up and checks the plan; workers get its list (workerinput).
    """
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None:
        ids = worker_input.get("specperf_gpus")
        return None if ids is None else PresentGpus(tuple(ids), worker_input["specperf_gpus_from"])
    per_server = settings.gpus_per_server
    present = present_gpus(settings.gpus) if per_server is not None else None
    workers = _xdist_workers(config)
    check_gpu_plan(
        backend=settings.backend,
        attached=settings.url is not None,
        workers=workers,
        parallel_servers=min(workers, len(settings.depths)),
        per_server=per_server,
        present=present,
        tp_size=settings.profile.tp_size,
    )
    return present


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker writes into the controller's run and shares its GPU list."""
    node.workerinput["specperf_run_id"] = node.config.stash[run_id_key]
    present = node.config.stash.get(present_gpus_key, None)
    if present is not None:
        node.workerinput["specperf_gpus"] = list(present.ids)
        node.workerinput["specperf_gpus_from"] = present.source


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist: all tests of one depth go to one worker, so each depth boots one server.

    xdist's own 'load' spreads a depth's points over every worker (each would boot a server
    of that depth and append its points to the same run), and its 'loadgroup' does not see
    xdist_group marks under pytest 9 (it renames node ids through an attribute pytest 9 no
    longer reads). Scopes come from the node ids instead: see suite.depth_scope.
    """
    if config.getoption("dist", "no") not in _SPLITTING_DIST_MODES:
        return None
    return scope_scheduling(depth_scope)(config, log)


class _GatedDepths:
    """The depths whose throughput tests ran (reports reach the xdist controller too)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        depth = throughput_test_depth(report.nodeid)
        if depth is not None:
            self.config.stash[gated_depths_key].add(depth)


class _InterruptRecorder:
    """Wires the signal policy (interrupts.py) into pytest's run: records a Ctrl-C or SIGTERM
    in the open runs before teardown closes them, and re-raises one that was swallowed."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.config.stash[session_key] = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        interrupts.checkpoint()

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        if self.config.stash.get(owns_signals_key, False):
            interrupts.ending()
        for session in self.config.stash.get(sessions_key, {}).values():
            session.interrupt(excinfo.value)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Before the fixtures' teardown: from here a signal only hurries the end."""
        if self.config.stash.get(owns_signals_key, False):
            interrupts.ending()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's last word on a signal: exit status 2, no baseline kept, results.json says so."""
    recorder = config.stash.get(history_key, None)
    if recorder is not None:
        recorder.close()
    if not config.stash.get(owns_signals_key, False):
        return
    session = config.stash.get(session_key, None)
    if interrupts.conclude(int(session.exitstatus) if session is not None else None):
        if session is not None:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        if not _is_worker(config):
            _mark_interrupted(config)
            if any(" wrote " in line for line in config.stash.get(_written_key, [])):
                print(
                    "specperf: interrupted after the baselines were written: they are taken "
                    "back (an interrupted run keeps no baseline)",
                    file=sys.stderr,
                )


def _mark_interrupted(config: pytest.Config) -> None:
    """results.json names the interruption (once): the interrupted depth's message, if any."""
    settings = config.stash.get(settings_key, None)
    signal_received = interrupts.interrupted()
    if settings is None or signal_received is None or _finished_results(config) is None:
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

    # Without report.md: this may run from a signal handler at the process's very end.
    ResultsStore(
        settings.out_dir,
        config.stash[run_id_key],
        report=False,
        tested_commit=config.stash.get(tested_commit_key, None),
    ).update(mark)


def _store(config: pytest.Config) -> ResultsStore:
    return ResultsStore(
        config.stash[settings_key].out_dir,
        config.stash[run_id_key],
        report=True,
        tested_commit=config.stash.get(tested_commit_key, None),
        on_write=_history_writer(config),
    )


def _history_writer(config: pytest.Config) -> Callable[[RunResults], None] | None:
    recorder = config.stash.get(history_key, None)
    return recorder.record if recorder is not None else None


def _with_depths(settings: Settings, depths: tuple[int, ...]) -> Settings:
    return replace(settings, depths=depths)


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash.get(settings_key, None)
    if settings is None:
        return []
    where = f"url={settings.url}" if settings.url else f"backend={settings.backend}"
    run_profile = f" run-profile={settings.run_profile}" if settings.run_profile else ""
    lines = [
        f"specperf: profile={settings.profile.name}{run_profile} {where} "
        f"depths={list(settings.depths)} concurrency={list(settings.concurrency)} "
        f"out={settings.out_dir}"
    ]
    estimate = config.stash.get(estimate_key, None)
    if estimate is not None:
        lines.append(f"specperf: {estimate.line()}")
    dist = getattr(config.option, "dist", "no")
    if dist in _SPLITTING_DIST_MODES and getattr(config.option, "tx", None):
        lines.append(f"specperf: xdist --dist {dist}: each depth's tests run on one worker")
    return lines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    settings = metafunc.config.stash[settings_key]
    if "specperf_depth" in metafunc.fixturenames:
        metafunc.parametrize(
            "specperf_depth",
            settings.depths,
            indirect=True,
            scope="session",
            ids=[f"steps{d}" for d in settings.depths],
        )
    if "specperf_concurrency" in metafunc.fixturenames:
        metafunc.parametrize(
            "specperf_concurrency",
            settings.concurrency,
            ids=[f"c{c}" for c in settings.concurrency],
        )


def _item_order(item: pytest.Item) -> tuple[int, int, int]:
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec else {}
    depth = int(params.get("specperf_depth", 0))
    concurrency = int(params.get("specperf_concurrency", 0))
    marker = item.get_closest_marker("specperf_phase")
    phase = int(marker.args[0]) if marker is not None else 1
    return depth, phase, concurrency


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group by depth (each server boots once), then phase, then concurrency ascending.

    tryfirst: xdist's worker turns the xdist_group marks into node ids in its own
    modifyitems hook, which must see the marks added here.
    """
    specperf_items = [i for i in items if "specperf_depth" in getattr(i, "fixturenames", ())]
    if not specperf_items:
        return
    others = [i for i in items if i not in specperf_items]
    specperf_items.sort(key=_item_order)
    for item in specperf_items:
        item.add_marker(pytest.mark.xdist_group(f"specperf-steps{_item_order(item)[0]}"))
    items[:] = others + specperf_items


# -- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def specperf_settings(request: pytest.FixtureRequest) -> Settings:
    return request.config.stash[settings_key]


@pytest.fixture(scope="session")
def specperf_depth(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def specperf_concurrency(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture(scope="session")
def specperf_session(request: pytest.FixtureRequest, specperf_depth: int) -> Iterator[DepthSession]:
    """The server of one depth, booted once, torn down (whole process group) at the end.

    A server that fails to boot does not raise here: the first test that uses the session
    fails with the reason, the others skip with its first line.
    """
    config = request.config
    settings = config.stash[settings_key]
    sessions = config.stash[sessions_key]
    fresh = specperf_depth not in sessions
    session = DepthSession(settings, specperf_depth, _store(config))
    session.observer = live_progress(config)
    sessions[specperf_depth] = session
    keep_for_refine = settings.refine and not _is_worker(config)
    try:
        session.worker = _worker_slot(config)
        try:
            session.gpus = _server_gpus(config)
        except SpecperfError as exc:
            session.fail_run(str(exc))
        if session.failure is None and not settings.ab_mode:
            with contextlib.suppress(SpecperfError):  # kept in session.failure
                session.open(fresh=fresh)
        yield session
    finally:
        if keep_for_refine and session.failure is None:
            config.stash.setdefault(refine_pending_key, []).append(session)
        else:
            session.close()


def _server_gpus(config: pytest.Config) -> tuple[str, ...] | None:
    """This process's slice of the GPUs (worker gwN: [N*K, (N+1)*K)), or None."""
    present = config.stash.get(present_gpus_key, None)
    per_server = config.stash[settings_key].gpus_per_server
    if present is None or per_server is None:
        return None
    worker_id = getattr(config, "workerinput", {}).get("workerid")
    return gpu_slice(present, worker_id, per_server)


def _worker_slot(config: pytest.Config) -> tuple[int, int]:
    """(this xdist worker's index, the number of workers); (0, 1) without xdist."""
    given = getattr(config, "workerinput", {})
    return worker_index(given.get("workerid")), int(given.get("workercount", 1))


def _fail_or_skip(session: DepthSession, skip_verb: str) -> NoReturn:
    """The first test to meet a failed session fails with the whole story; the rest skip."""
    failure = session.failure or f"steps={session.depth}: the server failed"
    if not session.failure_reported:
        session.failure_reported = True
        pytest.fail(failure, pytrace=False)
    pytest.skip(f"{skip_verb}: {failure.splitlines()[0]}")


def _stop_if_failed(session: DepthSession, skip_verb: str) -> None:
    if session.failure is not None:
        _fail_or_skip(session, skip_verb)


def _ab_run(config: pytest.Config, session: DepthSession) -> AbRun | None:
    """A/B mode: the depth's comparison, run once (on first use); None outside A/B mode."""
    if not session.settings.ab_mode:
        return None
    runs = config.stash.setdefault(ab_runs_key, {})
    if session.depth not in runs:
        runs[session.depth] = run_and_record_ab(session, _ab_prior(config, session))
    found = runs[session.depth]
    if found.head_run is None and session.failure is None:
        session.fail_run(found.failure or f"steps={session.depth} A/B: nothing was measured")
    return found


@pytest.fixture
def specperf_point(
    request: pytest.FixtureRequest, specperf_session: DepthSession, specperf_concurrency: int
) -> Iterator[PointMetrics]:
    """The measured point (depth, concurrency); measured on first use.

    With pytest-benchmark active, the point is also this test's benchmark record (see
    results/benchmark.py), completed with the gate's figures after the test.
    """
    _stop_if_failed(specperf_session, "not measured")
    ab = _ab_run(request.config, specperf_session)
    _stop_if_failed(specperf_session, "not measured")
    try:
        point = (
            specperf_session.measure(specperf_concurrency)
            if ab is None
            else ab_head_point(ab, specperf_concurrency)
        )
    except ServerDied:
        point = None  # reported outside the except block: no "during handling" chain
    if point is None:
        _fail_or_skip(specperf_session, "not measured")
    benchmark = _benchmark_fixture(request)
    recorded = benchmark is not None and record_point(
        benchmark,
        point,
        specperf_session.request_e2e_s.get(specperf_concurrency, ()),
        specperf_session.depth,
        {
            "profile": specperf_session.settings.profile.name,
            "hardware": specperf_session.hardware,
            "backend": specperf_session.settings.backend,
        },
    )
    yield point
    if recorded:
        add_gate_figures(benchmark, request.node.user_properties)


def _benchmark_fixture(request: pytest.FixtureRequest) -> Any | None:
    """pytest-benchmark's fixture for this test, unless the plugin is off or skipping."""
    config = request.config
    if not config.pluginmanager.has_plugin("benchmark"):
        return None
    if config.getoption("benchmark_skip", False):
        return None
    if not config.stash.get(benchmark_output_key, True):
        return None  # no record: pytest-benchmark would only print a table nobody asked for
    return request.getfixturevalue("benchmark")


@pytest.fixture
def specperf_sweep(request: pytest.FixtureRequest, specperf_session: DepthSession) -> DepthRun:
    """Every planned point of this depth (measuring those not measured yet)."""
    _stop_if_failed(specperf_session, "not judged")
    ab = _ab_run(request.config, specperf_session)
    _stop_if_failed(specperf_session, "not judged")
    if ab is not None and ab.head_run is not None:
        return ab.head_run
    run = specperf_session.measure_all()
    _stop_if_failed(specperf_session, "not judged")
    return run


@pytest.fixture
def specperf_gate(request: pytest.FixtureRequest, specperf_session: DepthSession) -> SpecperfGate:
    """The checks; their figures become the test's user properties (JUnit <property>)."""
    _stop_if_failed(specperf_session, "not checked")
    ab = _ab_run(request.config, specperf_session)
    _stop_if_failed(specperf_session, "not checked")
    runner = None if ab is not None else _runner_spread(request.config, specperf_session)
    return SpecperfGate(specperf_session, request.node.user_properties, ab=ab, runner=runner)


# -- issue 38: the history's spread between runs, handed to the gate as plain data ----------
_spreads_key = pytest.StashKey[dict[tuple[int, str], RunnerSpread | None]]()


def _runner_spread(
    config: pytest.Config, session: DepthSession, hardware: str | None = None
) -> RunnerSpread | None:
    """--specperf-history: the spread between this runner's earlier comparable runs of the
    depth (None: no store, or too few such runs in it)."""
    recorder = config.stash.get(history_key, None)
    if recorder is None:
        return None
    from pytest_specperf.history.spread import depth_spread  # only with a store (see above)

    key = (session.depth, hardware or session.hardware)
    cache = config.stash.setdefault(_spreads_key, {})
    if key not in cache:
        s = session.settings
        cache[key] = depth_spread(
            recorder.store,
            profile=s.profile.name,
            hardware=key[1],
            backend=s.backend,
            depth=session.depth,
            workload=s.workload.key(),
            concurrencies=set(s.concurrency),
            exclude_run=config.stash[run_id_key],
        )
    return cache[key]


def _ab_prior(config: pytest.Config, session: DepthSession) -> PriorLookup | None:
    """--specperf-history in A/B mode: the runner's pair spread, once the first boot has named
    the hardware."""
    if config.stash.get(history_key, None) is None:
        return None

    def lookup(hardware: str) -> PairPrior | None:
        found = _runner_spread(config, session, hardware)
        return PairPrior.from_runner(found) if found is not None else None

    return lookup


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed check's short-summary line starts with its figure (`steps=3 C=1 agg 856.8 <
    floor 964.2 (-20.0%)`), not with pytest's "Failed: " prefix."""
    report = yield
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if report.failed and isinstance(message, str) and message.startswith("Failed: steps="):
        crash.message = message.removeprefix("Failed: ")  # type: ignore[union-attr]
    return report


def pytest_report_teststatus(report: pytest.TestReport) -> Any:
    """A test that recorded figures (--specperf-update-baselines) reads RECORDED / R."""
    return recorded_status(report)


# -- after the run ----------------------------------------------------------------------------
def _finished_results(config: pytest.Config) -> RunResults | None:
    settings = config.stash.get(settings_key, None)
    if settings is None:
        return None
    results = _store(config).load()
    return results if results is not None and results.runs else None


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After teardown (an interrupted run's fixtures are torn down in sessionfinish)."""
    config = session.config
    if _is_worker(config):
        return
    if interrupts.interrupted() is not None:
        session.exitstatus = exitstatus = pytest.ExitCode.INTERRUPTED
    _refine_then_stop(config, exitstatus)
    settings = config.stash.get(settings_key, None)
    if interrupts.interrupted() is not None and not _is_worker(config):
        _mark_interrupted(config)
    results = _finished_results(config)
    if settings is not None and exitstatus == pytest.ExitCode.OK:
        line = _no_verdict(config, settings, results)
        if line is not None:
            config.stash[_no_verdict_key] = line
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if settings is None or results is None:
        _finish_history(session, exitstatus, settings)
        return
    if config.stash.get(owns_signals_key, False):
        interrupts.on_interrupt(lambda: _mark_interrupted(config))  # a signal from here on
    step_summary = os.environ.get(STEP_SUMMARY_ENV)
    config.stash[_artifact_notes_key] = write_run_artifacts(
        results, settings.out_dir, Path(step_summary) if step_summary else None
    )
    _finish_history(session, exitstatus, settings)
    if settings.update_baselines:
        problem = None
        if exitstatus != pytest.ExitCode.OK:
            problem = f"the test session did not pass: {_exit_name(exitstatus)}"
        written = write_baselines(settings, list(results.runs), problem)
        config.stash[_written_key] = written
        if any(REFUSED_DOWNGRADE in line for line in written) and exitstatus == 0:
            # Asked to record, and a baseline was kept as it was: not a green recording.
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _no_verdict(
    config: pytest.Config, settings: Settings, results: RunResults | None
) -> str | None:
    """The one line of a gate that judged nothing (None when every gated depth has a verdict,
    or the run records baselines, or the user said it is exploratory, or A/B mode, where the
    depth test judges against the base side and fails itself when it cannot)."""
    if settings.update_baselines or settings.allow_no_baseline or settings.ab_mode:
        return None
    gated = config.stash.get(gated_depths_key, set())
    missing = depths_without_verdict(results.runs if results else [], gated)
    if not missing:
        return None
    reasons: dict[int, str] = {}
    olds = []
    downgrade = False
    for depth in missing:
        run = results.depth(depth) if results else None
        hardware = run.hardware if run is not None else settings.hardware or "unknown-hardware"
        reason, old, other_workload = why_unjudged(settings, depth, hardware)
        reasons[depth] = reason
        downgrade = downgrade or other_workload
        if old is not None:
            olds.append(old)
    command = record_command(
        settings,
        missing,
        old=None if downgrade else (olds[0] if olds else None),
        recording=Recording(allow_downgrade=True) if downgrade else None,
    )
    return no_verdict_line(reasons, command, ALLOW_NO_BASELINE_FLAG)


def _finish_history(session: pytest.Session, exitstatus: int, settings: Settings | None) -> None:
    """Mark the run in the history store; a nightly run's new change point fails the job."""
    config = session.config
    recorder = config.stash.get(history_key, None)
    if recorder is None or settings is None:
        return
    try:
        outcome = recorder.finish(
            config.stash[run_id_key],
            complete=exitstatus != pytest.ExitCode.INTERRUPTED,
            out_dir=settings.out_dir,
        )
    except SpecperfError as exc:
        config.stash[_history_lines_key] = [f"history: {exc}"]
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    lines = outcome.lines
    if outcome.new_changes and settings.history_on_change == "fail":
        lines.append("history: a change point is new with this run: failing the job")
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    config.stash[_history_lines_key] = lines


def _refine_then_stop(config: pytest.Config, exitstatus: int) -> None:
    """--specperf-refine: measure the boundaries on the servers kept up, then stop them all."""
    pending = config.stash.get(refine_pending_key, [])
    if not pending:
        settings = config.stash.get(settings_key, None)
        if (
            settings is not None
            and settings.refine
            and getattr(config.option, "dist", "no") != "no"
        ):
            config.stash[_refine_lines_key] = [
                "refine: not done under xdist (each worker holds only its own depths' servers)"
            ]
        return
    config.stash[refine_pending_key] = []
    try:
        if exitstatus != pytest.ExitCode.INTERRUPTED:
            config.stash[_refine_lines_key] = refine(pending)
    finally:
        for depth_session in pending:
            depth_session.close()


def _exit_name(exitstatus: int) -> str:
    try:
        return pytest.ExitCode(exitstatus).name.lower().replace("_", " ")
    except ValueError:
        return f"exit status {exitstatus}"


_written_key = pytest.StashKey[list[str]]()
_artifact_notes_key = pytest.StashKey[list[str]]()


@pytest.hookimpl(tryfirst=True)  # the suite's tables before pytest-benchmark's
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if _is_worker(config):
        return
    results = _finished_results(config)
    no_verdict = config.stash.get(_no_verdict_key, None)
    if results is None:
        if no_verdict is not None:
            terminalreporter.write_line(no_verdict, red=True, bold=True)
        return
    settings = config.stash[settings_key]
    terminalreporter.section("specperf results")
    terminalreporter.write_line(
        full_report(
            results.runs,
            results.lossless,
            slo=results.slo,
            recommendation=results.recommendation,
        )
    )
    for line in floor_lines(results.runs):  # issue 38: how wide, and from where
        terminalreporter.write_line(line)
    for line in config.stash.get(_refine_lines_key, []):
        terminalreporter.write_line(line)
    for _, ab in sorted(config.stash.get(ab_runs_key, {}).items()):
        for line in ab.summary_lines():
            terminalreporter.write_line(line)
    terminalreporter.write_line(
        f"\nresults: {settings.out_dir / 'results.json'}  report: {settings.out_dir / 'report.md'}"
        " (plots and github-action-benchmark files beside it)"
    )
    for line in config.stash.get(_artifact_notes_key, []):
        terminalreporter.write_line(line)
    for line in recorded_lines(terminalreporter.stats.get(RECORDED_CATEGORY, [])):
        terminalreporter.write_line(line)
    for line in config.stash.get(_written_key, []):
        terminalreporter.write_line(f"baseline {line}")
    for line in config.stash.get(_history_lines_key, []):
        terminalreporter.write_line(line)
    headlines = [
        headline(v) for run in results.runs for v in run.verdicts if v.outcome == "regression"
    ]
    if headlines:
        terminalreporter.write_line("specperf regressions (report.md has the evidence):")
        for line in headlines:
            terminalreporter.write_line(f"  {line}")
    if no_verdict is not None:
        terminalreporter.write_line(no_verdict, red=True, bold=True)
