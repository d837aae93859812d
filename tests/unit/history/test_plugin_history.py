"""--specperf-history in a pytest run (pytester): the run's row at configure, errors as usage."""

from __future__ import annotations

import pytest

from pytest_specperf.history.store import HistoryStore


def test_the_run_is_in_the_store_from_its_start(pytester: pytest.Pytester) -> None:
    """Configured, nothing measured yet: the run is there, incomplete, with its run profile."""
    store = pytester.path / "h.sqlite"
    pytester.parseconfigure("--specperf-history=h.sqlite", "--specperf-run-profile=nightly")
    (run,) = HistoryStore.open(store).runs()
    assert (run["status"], run["kind"], run["run_profile"]) == ("incomplete", "nightly", "nightly")


def test_an_unreachable_store_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--specperf-history=postgresql://nobody@127.0.0.1:9/none?connect_timeout=2"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*history store postgresql*"])


def test_a_bad_on_change_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--specperf-history-on-change=explode")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--specperf-history-on-change: 'explode' is not one of*"])
