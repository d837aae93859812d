"""pytest_specperf.results.store: results.json written atomically after every point."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from pytest_specperf import interrupts
from pytest_specperf.results.previous_run import PREVIOUS_RUN_DIR
from pytest_specperf.results.schema import DepthRun, RunResults
from pytest_specperf.results.store import (
    RESULTS_FILE,
    ResultsFileWarning,
    ResultsStore,
    append_step_summary,
    git_commit,
    report_context,
)
from tests.support.signals import own_policy


def add_run(depth: int) -> Callable[[RunResults], None]:
    def change(results: RunResults) -> None:
        results.runs.append(
            DepthRun(depth=depth, profile="p", backend="sim", hardware="h", workload={})
        )

    return change


def read(path: Path) -> RunResults:
    return msgspec.json.decode(path.read_bytes(), type=RunResults)


def test_update_writes_valid_json_of_this_run(tmp_path: Path) -> None:
    """After an update, results.json decodes to this run's results with the change applied."""
    store = ResultsStore(tmp_path / "out", run_id="run-a")
    store.update(add_run(3))
    results = read(tmp_path / "out" / RESULTS_FILE)
    assert results.run_id == "run-a"
    assert [run.depth for run in results.runs] == [3]


def test_update_accumulates_changes(tmp_path: Path) -> None:
    """Successive updates of one run build on the stored results."""
    store = ResultsStore(tmp_path, run_id="run-a")
    store.update(add_run(1))
    store.update(add_run(2))
    assert [run.depth for run in read(tmp_path / RESULTS_FILE).runs] == [1, 2]


def test_first_write_records_the_start_the_run_gave_not_its_own_time(tmp_path: Path) -> None:
    """An A/B run writes first once a comparison is decided: its start is the run's."""
    start = "2026-12-01T08:00:00+00:00"
    store = ResultsStore(tmp_path, run_id="run-a", started_at=start)
    store.update(add_run(1))
    store.update(add_run(2))
    assert read(tmp_path / RESULTS_FILE).started_at == start


def test_update_leaves_no_temporary_files(tmp_path: Path) -> None:
    """An atomic write leaves only results.json and the lock file."""
    ResultsStore(tmp_path, run_id="run-a").update(add_run(1))
    assert sorted(item.name for item in tmp_path.iterdir()) == [".results.lock", RESULTS_FILE]


def test_a_signal_during_a_write_is_raised_once_written_and_the_lock_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C inside an update: the write lands whole, then the interrupt; the next write
    (the run's mark of the interruption) takes the lock at once (it once timed out on it)."""

    def change_then_signal(results: RunResults) -> None:
        add_run(3)(results)
        os.kill(os.getpid(), signal.SIGTERM)

    store = ResultsStore(tmp_path / "out", run_id="run-a")
    store._lock.timeout = 5
    with own_policy(monkeypatch):
        with pytest.raises(interrupts.Interrupted):
            store.update(change_then_signal)
        assert [run.depth for run in read(tmp_path / "out" / RESULTS_FILE).runs] == [3]
        interrupts.ending()
        store.update(lambda results: setattr(results, "interrupted", "interrupted (SIGTERM)"))
    assert read(tmp_path / "out" / RESULTS_FILE).interrupted == "interrupted (SIGTERM)"


def test_a_new_runs_first_write_moves_another_runs_file_into_previous(tmp_path: Path) -> None:
    """Written without a run taking the folder first (which sets the previous run aside), a
    new run's first write still keeps the last run's file: in previous/, where a run's
    out dir keeps the run before it (no results.previous.json beside it)."""
    ResultsStore(tmp_path, run_id="run-a").update(add_run(1))
    ResultsStore(tmp_path, run_id="run-b").update(add_run(2))
    assert read(tmp_path / PREVIOUS_RUN_DIR / RESULTS_FILE).run_id == "run-a"
    assert not (tmp_path / "results.previous.json").exists()
    current = read(tmp_path / RESULTS_FILE)
    assert current.run_id == "run-b" and [run.depth for run in current.runs] == [2]


def test_second_write_of_a_run_does_not_move_its_own_file(tmp_path: Path) -> None:
    """Only another run's file is moved; a run's later writes keep the previous one."""
    ResultsStore(tmp_path, run_id="run-a").update(add_run(1))
    store = ResultsStore(tmp_path, run_id="run-b")
    store.update(add_run(2))
    store.update(add_run(3))
    assert read(tmp_path / PREVIOUS_RUN_DIR / RESULTS_FILE).run_id == "run-a"
    assert [run.depth for run in read(tmp_path / RESULTS_FILE).runs] == [2, 3]


def test_load_ignores_another_runs_file(tmp_path: Path) -> None:
    """load() returns None when results.json belongs to another run."""
    ResultsStore(tmp_path, run_id="run-a").update(add_run(1))
    assert ResultsStore(tmp_path, run_id="run-b").load() is None


def test_load_returns_this_runs_results(tmp_path: Path) -> None:
    """load() returns this run's stored results."""
    ResultsStore(tmp_path, run_id="run-a").update(add_run(1))
    loaded = ResultsStore(tmp_path, run_id="run-a").load()
    assert loaded is not None and loaded.runs[0].depth == 1


def test_load_before_any_write_is_none(tmp_path: Path) -> None:
    """A store with no file yet has nothing to load."""
    assert ResultsStore(tmp_path / "missing").load() is None


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{corrupt", "not a results file"),
        ('{"schema_version": 99, "run_id": "x"}', "schema_version 99"),
        ('{"schema_version": 1, "run_id": 5}', "not a valid results file"),
    ],
)
def test_unreadable_file_is_moved_aside_with_a_warning(
    tmp_path: Path, content: str, reason: str
) -> None:
    """A corrupt or newer-schema results.json is kept beside the new one, and named."""
    (tmp_path / RESULTS_FILE).write_text(content, encoding="utf-8")
    with pytest.warns(ResultsFileWarning, match=reason):
        ResultsStore(tmp_path, run_id="run-a").update(add_run(1))
    (aside,) = tmp_path.glob(f"{RESULTS_FILE}.corrupt-*")
    assert aside.read_text(encoding="utf-8") == content
    assert read(tmp_path / RESULTS_FILE).run_id == "run-a"


def test_load_of_an_unreadable_file_is_none_and_leaves_it(tmp_path: Path) -> None:
    """Reading (not writing) an unreadable file neither fails nor moves it."""
    (tmp_path / RESULTS_FILE).write_text('{"schema_version": 99}', encoding="utf-8")
    assert ResultsStore(tmp_path, run_id="run-a").load() is None
    assert (tmp_path / RESULTS_FILE).exists()


def test_step_summary_is_appended_not_replaced(tmp_path: Path) -> None:
    """A CI job summary keeps what earlier steps wrote; the report follows it."""
    summary = tmp_path / "summary.md"
    summary.write_text("# build\n", encoding="utf-8")
    results = RunResults(run_id="r", started_at="2026-12-01T08:00:00+00:00", tool_version="0")
    append_step_summary(summary, results)
    append_step_summary(summary, results)
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# build\n# pytest-specperf results")
    assert text.count("# pytest-specperf results") == 2


def test_results_record_the_tested_commit(tmp_path: Path) -> None:
    """The commit given to the store is written into results.json."""
    ResultsStore(tmp_path, run_id="run-a", tested_commit="abc123").update(add_run(1))
    assert read(tmp_path / RESULTS_FILE).tested_commit == "abc123"


def test_git_commit_of_a_checkout_is_its_head(tmp_path: Path) -> None:
    """In a git checkout, git_commit is `git rev-parse HEAD`."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    git("init", "-q")
    git("commit", "-q", "--allow-empty", "-m", "first")
    assert git_commit(tmp_path) == git("rev-parse", "HEAD")


def test_git_commit_outside_a_checkout_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory outside any git checkout has no commit."""
    # git must not find a checkout above the temporary directory either.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert git_commit(tmp_path) is None


def test_the_report_context_carries_the_run_s_own_fields_and_its_output_comparisons() -> None:
    results = RunResults(
        run_id="r1",
        started_at="2026-12-04T02:00:00+00:00",
        tool_version="9.9",
        tested_commit="ab" * 20,
        runs=[DepthRun(depth=3, profile="p", backend="sim", hardware="h", workload={})],
        interrupted="SIGTERM",
        exit_status=1,
        exit_reasons=["a regression"],
    )
    context = report_context(results, notes=["a note"], embed_plots=False)
    assert (context.run_id, context.started_at, context.tool_version) == (
        "r1",
        "2026-12-04T02:00:00+00:00",
        "9.9",
    )
    assert context.tested_commit == "ab" * 20 and context.runs == results.runs
    assert (context.interrupted, context.exit_status) == ("SIGTERM", 1)
    assert context.exit_reasons == ["a regression"] and context.comparisons is results.lossless
    assert context.notes == ["a note"] and not context.embed_plots
