"""The history store on a real SQLite file: rows, statuses, migrations, refusals."""

from __future__ import annotations

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
    path = tmp_path / "sub" / "h.sqlite"
    HistoryStore.open(path).record(sample_results("r1", []), CONTEXT)
    assert database_url(path) == f"sqlite:///{path}"
    assert [r["run_id"] for r in HistoryStore.open(f"sqlite:///{path}").runs()] == ["r1"]


def test_an_older_schema_is_migrated_keeping_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    engine = sa.create_engine(f"sqlite:///{path}")
    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.exec_driver_sql(
            "INSERT INTO runs (run_id, kind, status, started_at) "
            "VALUES ('old', 'nightly', 'complete', '2026-11-01T00:00:00+00:00')"
        )
    engine.dispose()
    store = HistoryStore.open(path)
    assert store.revision() == "0003"
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
