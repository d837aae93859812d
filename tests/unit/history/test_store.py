"""The history store on a real SQLite file: rows, statuses, migrations, refusals."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from pytest_specperf.errors import SpecperfError
from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.store import MIGRATIONS, HistoryStore, database_url
from tests.support.history_writer import sample_point, sample_results

CONTEXT = RunContext(run_profile="nightly", runner="test-runner")


def test_a_run_is_incomplete_until_finished(tmp_path: Path) -> None:
    store = HistoryStore.open(tmp_path / "h.sqlite")
    store.begin_run(sample_results("r1", []), CONTEXT)
    store.record(sample_results("r1", [sample_point(1)]), CONTEXT)
    assert [r["status"] for r in store.runs()] == ["incomplete"]
    store.finish_run("r1")
    (run,) = store.runs()
    assert (run["status"], run["kind"], run["runner"], run["tested_commit"]) == (
        "complete",
        "nightly",
        "test-runner",
        "c0",
    )
    assert run["finished_at"] is not None


def test_each_write_replaces_the_runs_points(tmp_path: Path) -> None:
    store = HistoryStore.open(tmp_path / "h.sqlite")
    store.record(sample_results("r1", [sample_point(1)]), CONTEXT)
    store.record(sample_results("r1", [sample_point(1), sample_point(4, agg=3000.0)]), CONTEXT)
    points = store.points()
    assert [(p["concurrency"], p["agg_tok_s"]) for p in points] == [(1, 1000.0), (4, 3000.0)]
    assert points[1]["verify_steps_s"] == pytest.approx(3000.0 / 2.5)


def test_a_file_path_and_its_sqlite_url_are_one_store(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    HistoryStore.open(path).record(sample_results("r1", []), CONTEXT)
    assert database_url(path) == f"sqlite:///{path}"
    assert [r["run_id"] for r in HistoryStore.open(f"sqlite:///{path}").runs()] == ["r1"]


def test_an_older_schema_is_migrated_keeping_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    _store_at_revision_0001(
        path,
        "INSERT INTO runs (run_id, kind, status, started_at) "
        "VALUES ('old', 'nightly', 'complete', '2026-11-01T00:00:00+00:00')",
    )
    store = HistoryStore.open(path)
    assert store.revision() == "0004"
    assert [r["run_id"] for r in store.runs()] == ["old"]
    assert store.runs()[0]["recommendation_json"] is None


def test_a_newer_schema_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    HistoryStore.open(path).close()
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0099'")
    engine.dispose()
    with pytest.raises(SpecperfError, match="schema revision 0099 is newer") as caught:
        HistoryStore.open(path)
    assert "\n" not in str(caught.value)


def test_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SpecperfError, match="history store postgresql") as caught:
        HistoryStore.open("postgresql://nobody:secret@127.0.0.1:9/none?connect_timeout=2")
    assert "\n" not in str(caught.value)
    assert "secret" not in str(caught.value)


# -- a reader's opening: never creates, never writes -------------------------------------------
def _store_at_revision_0001(path: Path, *statements: str) -> None:
    """A SQLite store migrated only to revision 0001, then ``statements`` run on it."""
    engine = sa.create_engine(f"sqlite:///{path}")
    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        for statement in statements:
            connection.exec_driver_sql(statement)
    engine.dispose()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def _files_and_folders(folder: Path) -> dict[str, bytes | None]:
    return {p.name: p.read_bytes() if p.is_file() else None for p in folder.iterdir()}


def _recorded_store(path: Path) -> None:
    store = HistoryStore.open(path)
    store.record(sample_results("r1", [sample_point(1)]), CONTEXT)
    store.close()


def test_a_reader_of_a_missing_store_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(SpecperfError, match="no store there") as caught:
        HistoryStore.open(tmp_path / "sub" / "h.sqlite", read_only=True)
    assert "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_a_writer_in_a_folder_that_does_not_exist_is_refused_creating_nothing(
    tmp_path: Path,
) -> None:
    """A mistyped path (.../nodir/sub/h.sqlite) is refused in one line naming the folder and
    how to create it on purpose, instead of silently starting a new, empty history there."""
    path = tmp_path / "nodir" / "sub" / "h.sqlite"
    with pytest.raises(SpecperfError) as caught:
        HistoryStore.open(path)
    message = str(caught.value)
    assert message.startswith(f"history store {path}: its folder {path.parent} does not exist")
    assert f"mkdir -p {path.parent}" in message and "\n" not in message
    assert list(tmp_path.iterdir()) == []


def test_a_writer_creates_the_suites_own_folder_for_its_store(tmp_path: Path) -> None:
    """The default store's folder, .specperf (every run makes it), is created when missing."""
    store = HistoryStore.open(tmp_path / ".specperf" / "history.sqlite")
    store.close()
    assert (tmp_path / ".specperf" / "history.sqlite").is_file()


def test_a_writer_says_whether_it_created_the_store(tmp_path: Path) -> None:
    """The first opening creates a new, empty store and says so; the next finds it."""
    first = HistoryStore.open(tmp_path / "h.sqlite")
    first.close()
    second = HistoryStore.open(tmp_path / "h.sqlite")
    second.close()
    assert (first.created, second.created) == (True, False)


def _another_programs_database(path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE notes (body TEXT)")
    engine.dispose()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda path: path.write_text("# README\n"), "not an SQLite database"),
        (_another_programs_database, "its tables are another program's (notes)"),
        (lambda path: path.mkdir(), "a folder"),
    ],
    ids=["text-file", "another-database", "folder"],
)
def test_a_writer_refuses_a_path_that_is_not_a_store_leaving_nothing_beside_it(
    tmp_path: Path, make: Callable[[Path], object], message: str
) -> None:
    """--specperf-history=README.md (or another program's database, or a folder): refused in
    one line, the file untouched and nothing left beside it (no README.md.migrate.lock, no
    -wal or -shm)."""
    path = tmp_path / "README.md"
    make(path)
    before = _files_and_folders(tmp_path)
    with pytest.raises(SpecperfError) as caught:
        HistoryStore.open(path)
    assert str(caught.value).startswith(f"history store {path}: ")
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert _files_and_folders(tmp_path) == before


def test_a_refused_newer_store_is_left_as_it_was(tmp_path: Path) -> None:
    """A store of a newer schema is refused and nothing is added beside it."""
    path = tmp_path / "new.sqlite"
    HistoryStore.open(path).close()
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0099'")
    engine.dispose()
    for extra in tmp_path.iterdir():
        if extra != path:
            extra.unlink()
    with pytest.raises(SpecperfError, match="newer"):
        HistoryStore.open(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.sqlite"]


def test_a_reader_of_a_file_that_is_no_store_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.sqlite").write_text("not a database")
    sqlite_without_tables = tmp_path / "empty.sqlite"
    sa.create_engine(f"sqlite:///{sqlite_without_tables}").connect().close()
    for path in (tmp_path / "notes.sqlite", sqlite_without_tables):
        before = _files(tmp_path)
        with pytest.raises(SpecperfError, match=f"history store {path}: ") as caught:
            HistoryStore.open(path, read_only=True)
        assert "\n" not in str(caught.value)
        assert _files(tmp_path) == before


def test_a_store_in_a_read_only_folder_is_read_without_a_file_written(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    _recorded_store(folder / "h.sqlite")
    before = _files(folder)
    folder.chmod(0o555)  # root ignores it: hence the checks below of what was written
    try:
        store = HistoryStore.open(folder / "h.sqlite", read_only=True)
        assert [r["run_id"] for r in store.runs()] == ["r1"]
        assert store.kinds() == ["nightly"]
        with pytest.raises(SpecperfError, match="readonly"):
            store.finish_run("r1")  # SQLite itself refuses: opened mode=ro
        store.close()
        assert _files(folder) == before  # no -wal, -shm or journal left behind
    finally:
        folder.chmod(0o755)


def test_a_reader_sees_what_a_writer_still_holds_in_its_wal(tmp_path: Path) -> None:
    writer = HistoryStore.open(tmp_path / "h.sqlite")
    with writer.engine.connect():  # a writer's open connection keeps its WAL un-checkpointed
        writer.record(sample_results("r1", [sample_point(1)]), CONTEXT)
        reader = HistoryStore.open(tmp_path / "h.sqlite", read_only=True)
        assert [r["run_id"] for r in reader.runs()] == ["r1"]
        reader.close()
    writer.close()


def test_a_reader_of_an_older_schema_changes_nothing_and_says_who_upgrades_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite"
    _store_at_revision_0001(path)
    before = _files(tmp_path)
    with pytest.raises(SpecperfError, match=r"revision 0001 is older.*a writer upgrades it"):
        HistoryStore.open(path, read_only=True)
    assert _files(tmp_path) == before


def test_an_unsupported_scheme_lists_the_supported_ones() -> None:
    with pytest.raises(SpecperfError) as caught:
        HistoryStore.open("mysql://user@db/history", read_only=True)
    assert str(caught.value) == (
        "history store mysql://...: unsupported scheme 'mysql'; supported: a file path "
        "(SQLite), sqlite:///PATH or postgresql://... (PostgreSQL with "
        'pip install "pytest-specperf[postgres]")'
    )


def test_postgresql_without_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    with pytest.raises(SpecperfError) as caught:
        HistoryStore.open("postgresql://nobody:secret@127.0.0.1:9/none", read_only=True)
    message = str(caught.value)
    assert message.startswith("history store postgresql+psycopg://nobody:***@127.0.0.1:9/none:")
    assert message.endswith('pip install "pytest-specperf[postgres]"')
