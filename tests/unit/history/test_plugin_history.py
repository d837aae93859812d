"""--specperf-history in a pytest run (pytester): the run's row once the suite's tests are
collected (before any boot), errors as usage."""

from __future__ import annotations

import pytest

from pytest_specperf.config.table import HISTORY_ENV, OPTIONS_BY_KEY
from pytest_specperf.history import commands
from pytest_specperf.history.store import HistoryStore


def test_the_run_is_in_the_store_before_its_first_test(pytester: pytest.Pytester) -> None:
    """Collected, nothing measured yet: the run is there, incomplete, with its run profile."""
    pytester.makepyfile(
        """
        from pytest_specperf.history.store import HistoryStore

        def test_first(specperf_depth):
            (run,) = HistoryStore.open("h.sqlite").runs()
            assert (run["status"], run["kind"], run["run_profile"]) == (
                "incomplete", "nightly", "nightly"
            )
        """
    )
    result = pytester.runpytest(
        "--specperf-history=h.sqlite", "--specperf-run-profile=nightly", "--spec-steps=3"
    )
    result.assert_outcomes(passed=1)


def test_a_run_that_collects_none_of_the_suites_tests_records_nothing(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_other(): pass")
    result = pytester.runpytest("--specperf-history=h.sqlite")
    result.assert_outcomes(passed=1)
    assert HistoryStore.open(pytester.path / "h.sqlite").runs() == []
    assert not (pytester.path / ".specperf").exists()  # nor takes the out dir


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


def test_specperf_history_in_the_environment_is_the_default_store(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_first(specperf_depth): pass")
    monkeypatch.setenv(HISTORY_ENV, str(pytester.path / "env.sqlite"))
    pytester.runpytest("--spec-steps=3").assert_outcomes(passed=1)
    assert len(HistoryStore.open(pytester.path / "env.sqlite").runs()) == 1
    # The command line wins over the environment.
    pytester.runpytest("--spec-steps=3", "--specperf-history=flag.sqlite").assert_outcomes(passed=1)
    assert len(HistoryStore.open(pytester.path / "flag.sqlite").runs()) == 1
    assert len(HistoryStore.open(pytester.path / "env.sqlite").runs()) == 1


def test_pytest_and_the_command_name_one_environment_variable() -> None:
    assert OPTIONS_BY_KEY["history"].env == HISTORY_ENV == commands.HISTORY_ENV


def test_a_store_in_a_folder_that_does_not_exist_is_a_usage_error_creating_nothing(
    pytester: pytest.Pytester,
) -> None:
    """A nightly pointed at a mistyped store (nodir/sub/h.sqlite) stops at once, in one line
    naming the folder, instead of starting a new history and staying green."""
    pytester.makepyfile("def test_first(specperf_depth): pass")
    result = pytester.runpytest("--spec-steps=3", "--specperf-history=nodir/sub/h.sqlite")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*history store *nodir/sub/h.sqlite: its folder *does not exist*"])
    assert not (pytester.path / "nodir").exists()


def test_a_file_that_is_not_a_store_is_a_usage_error_leaving_no_lock_beside_it(
    pytester: pytest.Pytester,
) -> None:
    """--specperf-history=README.md: refused; README.md as it was, no README.md.migrate.lock."""
    pytester.makepyfile("def test_first(specperf_depth): pass")
    readme = pytester.path / "README.md"
    readme.write_text("# notes\n")
    before = sorted(p.name for p in pytester.path.iterdir())
    result = pytester.runpytest("--spec-steps=3", "--specperf-history=README.md")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*history store *README.md: not an SQLite database*"])
    assert sorted(p.name for p in pytester.path.iterdir()) == before
    assert readme.read_text() == "# notes\n"


def test_a_run_that_creates_the_store_says_so_in_its_header_and_summary(
    pytester: pytest.Pytester,
) -> None:
    """The first run into a store says, at its start and its end, that the store is new and
    empty (so a path that was meant to be an existing store is noticed); the next does not."""
    pytester.makepyfile("def test_first(specperf_depth): pass")
    first = pytester.runpytest("--spec-steps=3", "--specperf-history=h.sqlite")
    first.assert_outcomes(passed=1)
    store = pytester.path / "h.sqlite"
    first.stdout.fnmatch_lines(
        [
            f"specperf: history store {store}: new, created empty by this run*",
            f"history: run * recorded in {store}, a new store: its first run*",
        ]
    )
    second = pytester.runpytest("--spec-steps=3", "--specperf-history=h.sqlite")
    second.assert_outcomes(passed=1)
    assert "new" not in " ".join(line for line in second.stdout.lines if "history" in line), (
        second.stdout.str()
    )
