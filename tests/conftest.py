"""Shared test setup: pytester for the plugin's end-to-end tests, tests/support's fixtures,
and which tests share a worker under xdist."""

import signal
from typing import Any

import pytest

from pytest_specperf.plugin.private_api import scope_scheduling
from pytest_specperf.plugin.xdist import depth_scope

pytest_plugins = ["pytester", "tests.support.sim", "tests.support.e2e", "tests.support.nights"]

# A job a non-interactive shell starts in the background (`cmd &`) inherits SIGINT ignored,
# and so would every process these tests start: their Ctrl-C would then do nothing, and the
# tests of what Ctrl-C does would fail for the way CI was started. Ctrl-C means Ctrl-C here.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Fixtures that run something long once per worker process (a fault scenario's suite run,
# the signal campaign, the history tests' simulated nights) and that several tests read: under
# xdist each worker given one of those tests would run it again, or wait on another's lock.
SHARED_RUNS = {
    "scenario_run": "reliability-scenarios",  # session-scoped: tests/reliability/conftest.py
    "outcomes": "signal-moments",
    "clean_run": "signal-moments",
    "bad_baselines_run": "bad-baselines",
    "nights": "history-nights",
    "replay": "printed-commands",  # tests/e2e/test_printed_commands_e2e.py: one scratch clone
    "shared_plain_run": "suite-runs",  # tests/support/e2e.py: a plain run and a recording
    "shared_recording": "suite-runs",
    "shared_three_depths": "suite-runs",
}
# So the modules that use them run each on one worker, those of one group on the same one.
# By module: xdist's controller schedules node ids and sees no fixtures.
SHARED_RUN_MODULES = {
    "tests/reliability/test_fault_matrix.py": "reliability-scenarios",
    "tests/reliability/test_bad_server.py": "reliability-scenarios",
    "tests/reliability/test_nothing_lost.py": "reliability-scenarios",
    "tests/reliability/test_security.py": "reliability-scenarios",
    "tests/reliability/test_signal_moments.py": "signal-moments",
    "tests/reliability/test_baseline_files.py": "bad-baselines",
    "tests/e2e/test_history_site_browser.py": "history-nights",
    "tests/e2e/test_history_nights.py": "history-nights",
    "tests/e2e/test_printed_commands_e2e.py": "printed-commands",
    "tests/e2e/test_suite_e2e.py": "suite-runs",
    "tests/e2e/test_report_artifacts.py": "suite-runs",
    "tests/e2e/test_pytest_ecosystem.py": "suite-runs",
}


def shared_run_scope(nodeid: str) -> str:
    """A test's xdist scope: its module's group if it reads a shared run, else the plugin's."""
    return SHARED_RUN_MODULES.get(nodeid.split("::", 1)[0]) or depth_scope(nodeid)


@pytest.hookimpl(tryfirst=True)  # before the plugin's own scheduler (plugin/__init__.py)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's load-by-scope scheduling with shared_run_scope's scopes (biggest first)."""
    return scope_scheduling(shared_run_scope)(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that reads a shared run from a module not grouped for it is a usage error."""
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        for fixture in getattr(item, "fixturenames", ()):
            group = SHARED_RUNS.get(fixture)
            if group is not None and SHARED_RUN_MODULES.get(module) != group:
                raise pytest.UsageError(
                    f"{item.nodeid} uses the shared run {fixture!r}: add "
                    f"{module!r}: {group!r} to SHARED_RUN_MODULES in tests/conftest.py"
                )


@pytest.fixture(autouse=True)
def _no_history_store_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's $SPECPERF_HISTORY is pytest's --specperf-history too: the runs these
    tests start must not record into it."""
    monkeypatch.delenv("SPECPERF_HISTORY", raising=False)
