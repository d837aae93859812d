"""The plugin's fixtures: the run's settings, one server per depth, its points, sweep and gate.

A server that fails to boot does not raise in its fixture: the first test that uses it fails
with the reason, the others skip with its first line.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NoReturn

import pytest

from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import SpecperfError
from pytest_specperf.gate.ab import AbRun
from pytest_specperf.gate.ab_prior import PairPrior
from pytest_specperf.plugin.benchmark import add_gate_figures, record_point
from pytest_specperf.plugin.configure import server_gpus, worker_slot
from pytest_specperf.plugin.gate import SpecperfGate
from pytest_specperf.plugin.session import SpecperfRun
from pytest_specperf.plugin.terminal import live_progress
from pytest_specperf.results.runner_spread import RunnerSpread
from pytest_specperf.results.schema import DepthRun, PointMetrics, RateSearch
from pytest_specperf.run.ab.comparison import ab_head_point, run_and_record_ab
from pytest_specperf.run.ab.pairs import PriorLookup
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.sampling import ServerDied


def _run(config: pytest.Config) -> SpecperfRun:
    run = SpecperfRun.of(config)
    assert run is not None, "pytest_configure registers the run"
    return run


@pytest.fixture(scope="session")
def specperf_settings(request: pytest.FixtureRequest) -> Settings:
    return _run(request.config).settings


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
    run = _run(config)
    settings = run.settings
    fresh = specperf_depth not in run.sessions
    session = DepthSession(settings, specperf_depth, run.store())
    session.observer = live_progress(config)
    run.sessions[specperf_depth] = session
    keep_for_refine = settings.refine and not run.is_worker
    try:
        session.worker = worker_slot(config)
        try:
            session.gpus = server_gpus(config, run)
        except SpecperfError as exc:
            session.fail_run(str(exc))
        if session.failure is None and not settings.ab_mode:  # A/B mode: fresh boots per pair
            with contextlib.suppress(SpecperfError):  # kept in session.failure
                session.open(fresh=fresh)
        yield session
    finally:
        if keep_for_refine and session.failure is None:
            run.refine_pending.append(session)
        else:
            session.close()


def _ab_run(config: pytest.Config, session: DepthSession) -> AbRun | None:
    """A/B mode: the depth's comparison, run once (on first use); None outside A/B mode."""
    if not session.settings.ab_mode:
        return None
    runs = _run(config).ab_runs
    if session.depth not in runs:
        runs[session.depth] = run_and_record_ab(session, _ab_prior(config, session))
    return runs[session.depth]


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


@pytest.fixture
def specperf_point(
    request: pytest.FixtureRequest, specperf_session: DepthSession, specperf_concurrency: int
) -> Iterator[PointMetrics]:
    """The measured point (depth, concurrency); measured on first use.

    With pytest-benchmark active, the point is also this test's benchmark record (see
    plugin/benchmark.py), completed with the gate's figures after the test.
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


@pytest.fixture
def specperf_load(request: pytest.FixtureRequest) -> str:
    """An open-loop point's key: ``trace`` or ``rate=4`` (``--specperf-request-rate``)."""
    return str(request.param)


def load_id(load: str) -> str:
    """A test id for an open-loop point: ``trace``, ``rate4``, ``rate0.5-burstiness0.5``."""
    return load.replace("=", "").replace(",", "-")


@pytest.fixture
def specperf_open_point(
    request: pytest.FixtureRequest, specperf_session: DepthSession, specperf_load: str
) -> PointMetrics:
    """The measured open-loop point (depth, load); measured on first use."""
    _stop_if_failed(specperf_session, "not measured")
    if specperf_session.settings.ab_mode:
        pytest.skip("A/B mode compares the closed-loop points; open-loop points are not run")
    try:
        point = specperf_session.open_loop.measure(specperf_load)
    except ServerDied:
        point = None
    if point is None:
        _fail_or_skip(specperf_session, "not measured")
    return point


@pytest.fixture
def specperf_rate_search(specperf_session: DepthSession) -> RateSearch:
    """This depth's highest request rate meeting the SLOs (searched on first use)."""
    _stop_if_failed(specperf_session, "not searched")
    try:
        found = specperf_session.open_loop.search_rate()
    except ServerDied:
        found = None
    if found is None:
        _fail_or_skip(specperf_session, "not searched")
    return found


def _benchmark_fixture(request: pytest.FixtureRequest) -> Any | None:
    """pytest-benchmark's fixture for this test, unless the plugin is off or skipping."""
    config = request.config
    if not config.pluginmanager.has_plugin("benchmark"):
        return None
    if config.getoption("benchmark_skip", False):
        return None
    if not _run(config).benchmark_output:
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
def _runner_spread(
    config: pytest.Config, session: DepthSession, hardware: str | None = None
) -> RunnerSpread | None:
    """--specperf-history: the spread between this runner's earlier comparable runs of the
    depth (None: no store, or too few such runs in it)."""
    run = _run(config)
    recorder = run.history
    if recorder is None:
        return None
    from pytest_specperf.history.spread_lookup import depth_spread  # only with a store

    key = (session.depth, hardware or session.hardware)
    if key not in run.runner_spreads:
        s = session.settings
        run.runner_spreads[key] = depth_spread(
            recorder.store,
            profile=s.profile.name,
            hardware=key[1],
            backend=s.backend,
            depth=session.depth,
            workload=s.workload.key(),
            concurrencies=set(s.concurrency),
            exclude_run=run.run_id,
            placement=s.server_cpu,
        )
    return run.runner_spreads[key]


def _ab_prior(config: pytest.Config, session: DepthSession) -> PriorLookup | None:
    """--specperf-history in A/B mode: the runner's pair spread, once the first boot has named
    the hardware."""
    if _run(config).history is None:
        return None

    def lookup(hardware: str) -> PairPrior | None:
        found = _runner_spread(config, session, hardware)
        return PairPrior.from_runner(found) if found is not None else None

    return lookup
