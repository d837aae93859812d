"""pytest-specperf's hooks, and only hooks: each hands its work to the run's session object
(session.py), the options and settings (configure.py), which tests run in what order
(collection.py), the fixtures (fixtures.py), the gate (gate.py), the terminal (terminal.py) or
xdist (xdist.py). The logic lives in plain modules (config/, run/, gate/, results/).

This module is the pytest11 entry point (``pytest_specperf.plugin``).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_specperf.plugin import run_end
from pytest_specperf.plugin.collection import arrange_items, parametrize
from pytest_specperf.plugin.configure import (
    MARKERS,
    add_options,
    begin_run,
    benchmark_output_wanted,
    configure_run,
    settings_key,
)
from pytest_specperf.plugin.fixtures import (
    specperf_concurrency,
    specperf_depth,
    specperf_gate,
    specperf_load,
    specperf_open_point,
    specperf_point,
    specperf_rate_search,
    specperf_session,
    specperf_settings,
    specperf_sweep,
)
from pytest_specperf.plugin.private_api import scope_scheduling
from pytest_specperf.plugin.session import PLUGIN_NAME, SpecperfRun
from pytest_specperf.plugin.terminal import (
    header_lines,
    make_room_for_not_recorded,
    recorded_status,
    write_header,
    write_summary,
)
from pytest_specperf.plugin.xdist import SPLITTING_DIST_MODES, depth_scope, worker_input

__all__ = [  # the fixtures, found by pytest on this plugin module
    "specperf_concurrency",
    "specperf_depth",
    "specperf_gate",
    "specperf_load",
    "specperf_open_point",
    "specperf_point",
    "specperf_rate_search",
    "specperf_session",
    "specperf_settings",
    "specperf_sweep",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    run = configure_run(config)  # a bad option: pytest's usage error, in one line
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    config.pluginmanager.register(run, PLUGIN_NAME)
    run.benchmark_output = benchmark_output_wanted(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker writes into the controller's run and shares its GPU list."""
    run = SpecperfRun.of(node.config)
    if run is not None:
        node.workerinput.update(worker_input(run))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist: a run that collected the suite's tests takes its out dir now."""
    run = SpecperfRun.of(session.config)
    if run is None or run.is_worker:
        return
    if not any("specperf_depth" in getattr(i, "fixturenames", ()) for i in session.items):
        return
    if session.config.option.collectonly:  # what a run of these tests would boot and take
        write_header(session.config, header_lines(run, session.config))
    else:
        _begin(run, session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """xdist's controller (which collects nothing itself) before any test is scheduled:
    the workers' tests are the suite's when their ids carry a depth (plugin/xdist.py)."""
    run = SpecperfRun.of(node.config)
    suite = any(depth_scope(i) != i for i in ids)
    if run is not None and suite and not node.config.option.collectonly:
        _begin(run, node.config)


def _begin(run: SpecperfRun, config: pytest.Config) -> None:
    """The run begins; the first time, its header: only a session that measures says what
    it will boot and how long that takes (a run of other tests with the plugin installed
    says nothing)."""
    first = run.lock is None
    begin_run(run)
    if first:
        write_header(config, header_lines(run, config))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist: all tests of one depth go to one worker, so each depth boots one server.

    xdist's own 'load' spreads a depth's points over every worker (each would boot a server
    of that depth and append its points to the same run), and its 'loadgroup' does not see
    xdist_group marks under pytest 9 (it renames node ids through an attribute pytest 9 no
    longer reads). Scopes come from the node ids instead: see plugin/xdist.py.
    """
    if config.getoption("dist", "no") not in SPLITTING_DIST_MODES:
        return None
    return scope_scheduling(depth_scope)(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's last word on a signal: exit status 2, no baseline kept, results.json says so."""
    run = SpecperfRun.of(config)
    if run is not None:
        run_end.unconfigure(run)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize(metafunc, metafunc.config.stash[settings_key])


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group by depth (each server boots once), then phase, then concurrency ascending.

    tryfirst: xdist's worker turns the xdist_group marks into node ids in its own
    modifyitems hook, which must see the marks added here.
    """
    arrange_items(config, items, config.stash[settings_key])


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


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """A test that recorded figures (--specperf-update-baselines) reads RECORDED / R."""
    status = recorded_status(report)
    if status is not None:
        make_room_for_not_recorded(config)
    return status


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After teardown (an interrupted run's fixtures are torn down in sessionfinish)."""
    run = SpecperfRun.of(session.config)
    if run is not None and not run.is_worker and not run.refused:
        run_end.finish(run, session, exitstatus)


@pytest.hookimpl(tryfirst=True)  # the suite's tables before pytest-benchmark's
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    run = SpecperfRun.of(config)
    if run is not None and not run.is_worker and not run.refused:
        write_summary(terminalreporter, run, exitstatus)
