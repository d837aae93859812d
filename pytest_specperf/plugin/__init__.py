"""pytest-specperf's hooks, and only hooks: each hands its work to the run's session object
(session.py), the settings (configure.py), the fixtures (fixtures.py), the gate (gate.py) or
the terminal (terminal.py). The logic lives in plain modules (config/, run/, gate/, results/).

This module is the pytest11 entry point (``pytest_specperf.plugin``).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings
from pytest_specperf.config.table import OPTIONS
from pytest_specperf.errors import SpecperfError
from pytest_specperf.history.rows import tested_commit_override
from pytest_specperf.plugin import run_end
from pytest_specperf.plugin.configure import (
    SPLITTING_DIST_MODES,
    begin_run,
    open_history,
    plan_gpus,
    quiet_benchmark_unless_asked,
    settings_from,
)
from pytest_specperf.plugin.fixtures import (
    specperf_concurrency,
    specperf_depth,
    specperf_gate,
    specperf_point,
    specperf_session,
    specperf_settings,
    specperf_sweep,
)
from pytest_specperf.plugin.private_api import scope_scheduling
from pytest_specperf.plugin.session import PLUGIN_NAME, SpecperfRun
from pytest_specperf.plugin.terminal import (
    make_room_for_not_recorded,
    recorded_status,
    summary_lines,
)
from pytest_specperf.plugin.xdist import depth_scope
from pytest_specperf.run.budget import check_budget

__all__ = [  # the fixtures, found by pytest on this plugin module
    "specperf_concurrency",
    "specperf_depth",
    "specperf_gate",
    "specperf_point",
    "specperf_session",
    "specperf_settings",
    "specperf_sweep",
]

# The run's settings, for whoever reads them from the config (the run holds them too).
settings_key = pytest.StashKey[Settings]()


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


def pytest_configure(config: pytest.Config) -> None:
    # First, so that a Ctrl-C or SIGTERM from here on ends the run as interrupted.
    owns_signals = interrupts.install()
    is_worker = hasattr(config, "workerinput")
    try:
        settings = settings_from(config, is_worker=is_worker)
        present_gpus = plan_gpus(config, settings)
        estimate = None if is_worker else check_budget(settings)
        run = SpecperfRun(
            config, settings, owns_signals=owns_signals, tested_commit=tested_commit_override()
        )
        run.history = open_history(run)
    except SpecperfError as exc:
        if owns_signals:
            interrupts.conclude()  # no run: nothing to take back
        raise pytest.UsageError(str(exc)) from None
    run.estimate, run.present_gpus = estimate, present_gpus
    config.stash[settings_key] = settings
    config.addinivalue_line(
        "markers",
        "specperf_phase(n): order of a check within a depth (0 first, 2 after the points)",
    )
    config.pluginmanager.register(run, PLUGIN_NAME)
    run.benchmark_output = quiet_benchmark_unless_asked(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker writes into the controller's run and shares its GPU list."""
    run = SpecperfRun.of(node.config)
    if run is None:
        return
    node.workerinput["specperf_run_id"] = run.run_id
    node.workerinput["specperf_started_at"] = run.started_at
    if run.present_gpus is not None:
        node.workerinput["specperf_gpus"] = list(run.present_gpus.ids)
        node.workerinput["specperf_gpus_from"] = run.present_gpus.source


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist: a run that collected the suite's tests takes its out dir now."""
    run = SpecperfRun.of(session.config)
    if run is None or session.config.option.collectonly:
        return
    if any("specperf_depth" in getattr(i, "fixturenames", ()) for i in session.items):
        begin_run(run)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """xdist's controller (which collects nothing itself) before any test is scheduled:
    the workers' tests are the suite's when their ids carry a depth (plugin/xdist.py)."""
    run = SpecperfRun.of(node.config)
    suite = any(depth_scope(i) != i for i in ids)
    if run is not None and suite and not node.config.option.collectonly:
        begin_run(run)


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


def pytest_report_header(config: pytest.Config) -> list[str]:
    run = SpecperfRun.of(config)
    if run is None:
        return []
    settings = run.settings
    where = f"url={settings.url}" if settings.url else f"backend={settings.backend}"
    run_profile = f" run-profile={settings.run_profile}" if settings.run_profile else ""
    lines = [
        f"specperf: profile={settings.profile.name}{run_profile} {where} "
        f"depths={list(settings.depths)} concurrency={list(settings.concurrency)} "
        f"out={settings.out_dir}"
    ]
    if run.estimate is not None:
        lines.append(f"specperf: {run.estimate.line()}")
    dist = getattr(config.option, "dist", "no")
    if dist in SPLITTING_DIST_MODES and getattr(config.option, "tx", None):
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
    if run is None or run.is_worker or run.refused:
        return
    results = run.finished_results()
    if results is not None:
        terminalreporter.section("specperf results")
    stopped = exitstatus == pytest.ExitCode.INTERRUPTED or interrupts.interrupted() is not None
    for line, red in summary_lines(run, results, terminalreporter.stats, stopped=stopped):
        terminalreporter.write_line(line, red=red, bold=red)
