"""pytest_specperf.plugin.private_api: the other plugins' internals it uses are still there.

Each test fails when an installed pytest-benchmark or pytest-xdist changes what the adapter
relies on, so an upgrade breaks here, by name, instead of silently (a record with no rounds,
depths split across workers).
"""

from __future__ import annotations

import inspect
from typing import Any

from pytest_benchmark.fixture import BenchmarkFixture
from xdist.scheduler import LoadScopeScheduling

from pytest_specperf.plugin.private_api import (
    mark_benchmark_used,
    record_benchmark_rounds,
    scope_scheduling,
)
from tests.unit.plugin.test_benchmark import make_fixture


class RecordingLogger:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning(self, text: str, **_: Any) -> None:
        self.warnings.append(text)


def test_a_marked_fixture_is_not_reported_unused() -> None:
    """pytest-benchmark warns at teardown about a fixture whose ``_mode`` is still unset."""
    used, unused = make_fixture(), make_fixture()
    mark_benchmark_used(used)
    for fixture in (used, unused):
        fixture._logger = RecordingLogger()
        fixture._cleanup()
    assert used._logger.warnings == []
    assert unused._logger.warnings  # the check the marking avoids still exists


def test_recorded_rounds_become_the_records_stats() -> None:
    fixture = make_fixture()
    mark_benchmark_used(fixture)
    record_benchmark_rounds(fixture, [0.5, 1.0, 1.5])
    stats = fixture.added[0].stats
    assert (stats.rounds, stats.min, stats.max, stats.mean) == (3, 0.5, 1.5, 1.0)


def test_make_stats_takes_the_iterations_per_round() -> None:
    assert list(inspect.signature(BenchmarkFixture._make_stats).parameters) == [
        "self",
        "iterations",
    ]


def test_load_scope_scheduling_groups_by_split_scope() -> None:
    """xdist's scheduler still asks ``_split_scope(nodeid)`` for each test's scope."""
    assert list(inspect.signature(LoadScopeScheduling._split_scope).parameters) == [
        "self",
        "nodeid",
    ]
    assert "self._split_scope(" in inspect.getsource(LoadScopeScheduling)


def test_the_scheduling_uses_the_given_scope() -> None:
    scheduling = scope_scheduling(lambda nodeid: nodeid.split("[")[1][:6])
    assert issubclass(scheduling, LoadScopeScheduling)
    assert scheduling._split_scope(None, "perf_tests/t.py::test_x[steps3-c4]") == "steps3"  # type: ignore[attr-defined]
