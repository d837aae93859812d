"""The history store: every run appended to one SQL database (SQLite file or PostgreSQL).

Opened by URL (``sqlite:///path``, ``postgresql://...``) or by a plain file path (SQLite).
A writer's opening creates the store and migrates an older schema to the newest (Alembic,
migrations/ shipped in the package); it creates no folder but the suite's own ``.specperf/``
(a store whose folder is missing is a mistyped path, refused), refuses a file that is not a
store before writing anything, and says whether it created the store (``created``). A
reader's (``read_only``: the history commands that only read) needs a store that exists,
writes nothing (SQLite opens the file ``mode=ro``, so a store in a read-only folder can be
read) and refuses another schema revision. Both refuse a newer one. A run's row is written
when it starts (status ``incomplete``), its points as they finish, and it is marked
``complete`` at the end: a run killed midway stays in the store as incomplete.

Several writers at once: every write is one short transaction. SQLite runs in WAL mode with
a busy timeout, writes take the write lock at BEGIN (``BEGIN IMMEDIATE``: no deadlock
between two readers turning writers), and a write that still meets a locked database is
retried; PostgreSQL serialises the same writes in its own transactions.
"""

from __future__ import annotations

import random
import shlex
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from filelock import FileLock
from sqlalchemy.engine import Connection, Engine

from pytest_specperf.errors import SpecperfError
from pytest_specperf.history import store_schema
from pytest_specperf.history.rows import RunContext, now_iso, point_rows, run_row
from pytest_specperf.results.schema import RunResults

DEFAULT_HISTORY = ".specperf/history.sqlite"
# The one folder a writer creates for its store: the suite's own, which every run makes. Any
# other missing folder is a mistyped path, refused rather than starting a new history.
SUITE_FOLDER = Path(DEFAULT_HISTORY).parent.name
SQLITE_HEADER = b"SQLite format 3\x00"
# The tables a history store holds; a database with tables and none of these is another's.
_STORE_TABLES = frozenset({"alembic_version", "runs", "points"})
MIGRATIONS = "pytest_specperf.history:migrations"
_BUSY_TIMEOUT_MS = 30_000
_WRITE_ATTEMPTS = 8
_T = TypeVar("_T")


SUPPORTED = "a file path (SQLite), sqlite:///PATH or postgresql://..."
POSTGRES_EXTRA = 'pip install "pytest-specperf[postgres]"'


def database_url(target: str | Path) -> str:
    """A store's SQLAlchemy URL: a URL as given, a file path as ``sqlite:///<path>``."""
    text = str(target).strip()
    if not text:
        raise SpecperfError("history store: empty location; give a file path or a database URL")
    if "://" in text:
        if text.startswith("postgres://"):  # the spelling some hosts hand out
            text = "postgresql://" + text.removeprefix("postgres://")
        if text.startswith("postgresql://"):
            text = "postgresql+psycopg://" + text.removeprefix("postgresql://")
        scheme = text.split("://", 1)[0]
        if scheme.split("+", 1)[0] not in ("sqlite", "postgresql"):
            raise SpecperfError(
                f"history store {scheme}://...: unsupported scheme {scheme!r}; supported: "
                f"{SUPPORTED} (PostgreSQL with {POSTGRES_EXTRA})"
            )
        return text
    return f"sqlite:///{Path(text).expanduser().resolve()}"


def _sqlite_path(url: sa.URL) -> Path | None:
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def _shown(url: sa.URL) -> str:
    return url.render_as_string(hide_password=True)


def _configure_sqlite(engine: Engine, *, read_only: bool) -> None:
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Autocommit at the driver: the transactions below are begun explicitly.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        if not read_only:  # setting the journal mode writes the file's header
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = FULL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def _read_only_sqlite_url(path: Path, *, immutable: bool) -> sa.URL:
    """The file opened read-only by SQLite itself (``mode=ro``): nothing is written, so a
    store in a read-only folder can be read; ``immutable``: without the WAL's side files."""
    query = "mode=ro&immutable=1&uri=true" if immutable else "mode=ro&uri=true"
    return sa.make_url(f"sqlite:///file:{quote(str(path))}?{query}")


def _missing_store(path: Path) -> SpecperfError:
    return SpecperfError(
        f"history store {path}: no store there (nothing was recorded at this path); give the "
        "store's path with --history or $SPECPERF_HISTORY (a run records one with "
        "pytest --specperf-history=PATH)"
    )


def _check_writer_path(path: Path) -> None:
    """Refuse, before anything is written, a path a writer must not make a store of: a
    folder that does not exist (a mistyped path; only the suite's own folder is created), a
    folder, a file that is not an SQLite database, another program's database."""
    folder = path.parent
    if not folder.is_dir():
        if folder.exists():
            raise SpecperfError(f"history store {path}: {folder} is not a folder")
        if folder.name != SUITE_FOLDER or not folder.parent.is_dir():
            raise SpecperfError(
                f"history store {path}: its folder {folder} does not exist (a mistyped path "
                "would start a new, empty history); to start a store there, create the folder "
                f"first: mkdir -p {shlex.quote(str(folder))}"
            )
        return
    if path.is_dir():
        raise SpecperfError(f"history store {path}: a folder, not a store file")
    try:
        with path.open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SpecperfError(f"history store {path}: {exc.strerror or exc}") from None
    if not header:
        return  # an empty file: SQLite makes a new database of it
    if header != SQLITE_HEADER:
        raise SpecperfError(
            f"history store {path}: not an SQLite database, so not a history store; give the "
            "store's path, or a new file's"
        )
    tables = _sqlite_tables(path)
    if tables and not tables & _STORE_TABLES:
        raise SpecperfError(
            f"history store {path}: its tables are another program's "
            f"({', '.join(sorted(tables))}), not a history store's; give the store's path, or a "
            "new file's"
        )


def _sqlite_tables(path: Path) -> set[str]:
    """The tables of the SQLite file. A read, so nothing is written to another program's
    database; not ``immutable``, which reads a store another writer is creating as corrupt."""
    try:
        connection = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as exc:
        raise SpecperfError(f"history store {path}: {_one_line(exc)}") from None
    try:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {str(row[0]) for row in rows}
    except sqlite3.Error as exc:
        raise SpecperfError(f"history store {path}: {_one_line(exc)}") from None
    finally:
        connection.close()


def _is_transient(exc: sa.exc.DBAPIError) -> bool:
    text = str(exc.orig).lower()
    return any(
        word in text
        for word in ("database is locked", "busy", "deadlock", "could not serialize", "duplicate")
    ) or isinstance(exc, sa.exc.IntegrityError)


def _engine(url: sa.URL, *, read_only: bool) -> Engine:
    try:
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    except ImportError as exc:
        if url.get_backend_name() == "postgresql":
            raise SpecperfError(
                f"history store {_shown(url)}: PostgreSQL needs psycopg, which is not "
                f"installed ({exc}): {POSTGRES_EXTRA}"
            ) from None
        raise SpecperfError(f"history store {_shown(url)}: {exc}") from None
    except sa.exc.ArgumentError as exc:
        raise SpecperfError(f"history store {_shown(url)}: {exc}") from None
    if url.get_backend_name() == "sqlite":
        _configure_sqlite(engine, read_only=read_only)
    return engine


def _wal_files_exist(path: Path) -> bool:
    return Path(f"{path}-wal").exists() and Path(f"{path}-shm").exists()


class HistoryStore:
    """One history database. ``open`` migrates it; every method is one transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.shown_as: str | None = None  # how errors name it (default: its URL)
        # Whether this opening created the store (its schema was not there): a new, empty
        # history, which a run says so that a mistyped path is noticed.
        self.created = False

    @classmethod
    def open(cls, target: str | Path, *, read_only: bool = False) -> HistoryStore:
        """The store at ``target``: created and migrated for a writer; for a reader
        (``read_only``), one that exists, opened without a write of any kind. A path that is
        not a store is refused before anything is written."""
        url = sa.make_url(database_url(target))
        path = _sqlite_path(url)
        if read_only:
            return cls._open_for_reading(url, path)
        if path is not None:
            _check_writer_path(path)
            try:
                path.parent.mkdir(exist_ok=True)
            except OSError as exc:
                raise SpecperfError(f"history store {_shown(url)}: {exc}") from None
        store = cls(_engine(url, read_only=False))
        if path is not None:
            store.shown_as = str(path)
        store._migrate(path)
        return store

    @classmethod
    def _open_for_reading(cls, url: sa.URL, path: Path | None) -> HistoryStore:
        if path is None:
            store = cls(_engine(url, read_only=True))
            store._check_readable_schema()
            return store
        if not path.is_file():
            raise _missing_store(path)
        # Without a writer's -wal and -shm files beside it, even a read-only connection to a
        # WAL database creates them (and leaves them); immutable reads the file alone, which
        # then holds every committed write (the last writer to close checkpointed them).
        immutable = not _wal_files_exist(path)
        store = cls(_engine(_read_only_sqlite_url(path, immutable=immutable), read_only=True))
        store.shown_as = str(path)
        store._check_readable_schema()
        return store

    def close(self) -> None:
        self.engine.dispose()

    # -- schema --------------------------------------------------------------------------------
    def _migrate(self, sqlite_path: Path | None) -> None:
        config = _alembic_config()
        script = ScriptDirectory.from_config(config)
        head = script.get_current_head()
        lock_path = Path(f"{sqlite_path}.migrate.lock") if sqlite_path is not None else None
        lock = FileLock(str(lock_path)) if lock_path is not None else None
        # A refused store is left as it was: a lock file this opening made goes with it.
        lock_was_there = lock_path is not None and lock_path.exists()
        refused = True
        try:
            if lock is not None:
                lock.acquire(timeout=120)
            with self.engine.begin() as connection:
                if connection.dialect.name == "postgresql":
                    # One migrating writer at a time; released with the transaction.
                    connection.exec_driver_sql(
                        "SELECT pg_advisory_xact_lock(hashtext('pytest_specperf_history'))"
                    )
                current = MigrationContext.configure(connection).get_current_revision()
                if current is not None and current not in {
                    r.revision for r in script.walk_revisions()
                }:
                    raise SpecperfError(
                        f"history store {self._shown()}: schema revision {current} is newer "
                        f"than this pytest-specperf knows (newest: {head}); upgrade "
                        "pytest-specperf to read it"
                    )
                if current != head:
                    config.attributes["connection"] = connection
                    command.upgrade(config, "head")
                self.created = current is None
            refused = False
        except SpecperfError:
            raise
        except (sa.exc.DBAPIError, CommandError) as exc:
            raise SpecperfError(f"history store {self._shown()}: {_one_line(exc)}") from None
        except Exception as exc:
            # A driver error SQLAlchemy did not wrap (its driver module imported twice, as a
            # pytester run in the same process does), or a filesystem one: still one line.
            raise SpecperfError(f"history store {self._shown()}: {_one_line(exc)}") from None
        finally:
            if lock is not None and lock.is_locked:
                lock.release()
            if refused and lock_path is not None and not lock_was_there:
                lock_path.unlink(missing_ok=True)

    def _check_readable_schema(self) -> None:
        """A reader's check: a store of this version's schema, changing nothing."""
        script = ScriptDirectory.from_config(_alembic_config())
        head = script.get_current_head()
        try:
            current = self.revision()
        except sa.exc.DBAPIError as exc:
            raise SpecperfError(f"history store {self._shown()}: {_one_line(exc)}") from None
        if current is None:
            raise SpecperfError(
                f"history store {self._shown()}: not a history store (no pytest-specperf "
                "tables in it)"
            )
        if current == head:
            return
        if current not in {r.revision for r in script.walk_revisions()}:
            raise SpecperfError(
                f"history store {self._shown()}: schema revision {current} is newer than this "
                f"pytest-specperf knows (newest: {head}); upgrade pytest-specperf to read it"
            )
        raise SpecperfError(
            f"history store {self._shown()}: schema revision {current} is older than this "
            f"pytest-specperf's ({head}) and reading changes nothing; a writer upgrades it "
            "(the next pytest --specperf-history run into it, or specperf history import)"
        )

    def revision(self) -> str | None:
        with self.engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()

    @property
    def name(self) -> str:
        """The store as messages name it: its file, or its URL without the password."""
        return self._shown()

    def _shown(self) -> str:
        return self.shown_as or _shown(self.engine.url)

    # -- writing -------------------------------------------------------------------------------
    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        with self.engine.begin() as connection:
            yield connection

    def _write(self, work: Callable[[Connection], _T]) -> _T:
        """``work`` in one transaction, retried while the database is busy."""
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                with self._transaction() as connection:
                    return work(connection)
            except sa.exc.DBAPIError as exc:
                if attempt == _WRITE_ATTEMPTS - 1 or not _is_transient(exc):
                    raise SpecperfError(
                        f"history store {self._shown()}: {_one_line(exc)}"
                    ) from None
                time.sleep(min(2.0, 0.05 * 2**attempt) * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable")

    def begin_run(self, results: RunResults, context: RunContext) -> None:
        """The run's row, status incomplete (a run that dies before its end stays so)."""
        self.record(results, context)

    def record(self, results: RunResults, context: RunContext) -> None:
        """The run's row and every point measured so far (replacing what it held before)."""
        row = run_row(results, context)
        points = point_rows(results)

        def work(connection: Connection) -> None:
            seq = _upsert_run(connection, row)
            connection.execute(
                sa.delete(store_schema.points).where(store_schema.points.c.run_seq == seq)
            )
            if points:
                connection.execute(
                    sa.insert(store_schema.points), [{**point, "run_seq": seq} for point in points]
                )

        self._write(work)

    def finish_run(self, run_id: str, status: str = "complete") -> None:
        def work(connection: Connection) -> None:
            connection.execute(
                sa.update(store_schema.runs)
                .where(store_schema.runs.c.run_id == run_id)
                .values(status=status, finished_at=now_iso())
            )

        self._write(work)

    def record_bisect_pair(self, run_id: str, row: dict[str, Any]) -> None:
        """One pair of boots of a bisection's step (history/bisect_log.py), under its run."""

        def work(connection: Connection) -> None:
            seq = self._run_seq(connection, run_id)
            connection.execute(sa.insert(store_schema.bisect_pairs).values(**row, run_seq=seq))

        self._write(work)

    @staticmethod
    def _run_seq(connection: Connection, run_id: str) -> int:
        runs = store_schema.runs
        seq = connection.execute(sa.select(runs.c.seq).where(runs.c.run_id == run_id)).scalar()
        if seq is None:
            raise SpecperfError(f"history store: no run {run_id}")
        return int(seq)

    # -- reading -------------------------------------------------------------------------------
    def bisect_pairs(self, run_id: str, step: str) -> list[dict[str, Any]]:
        """A bisection's pairs of one step, first first."""
        runs, pairs = store_schema.runs, store_schema.bisect_pairs
        query = (
            sa.select(pairs)
            .join(runs, runs.c.seq == pairs.c.run_seq)
            .where(runs.c.run_id == run_id, pairs.c.step == step)
            .order_by(pairs.c.pair)
        )
        return self._read(query)

    def bisect_pair_seconds(self, run_id: str) -> list[float]:
        """The server-seconds of every pair a bisection recorded, over all its steps."""
        runs, pairs = store_schema.runs, store_schema.bisect_pairs
        query = (
            sa.select(pairs.c.server_seconds)
            .join(runs, runs.c.seq == pairs.c.run_seq)
            .where(runs.c.run_id == run_id)
        )
        return [float(row["server_seconds"]) for row in self._read(query)]

    def runs(self, *, complete_only: bool = False) -> list[dict[str, Any]]:
        """Every run, oldest first (by the order they were first written)."""
        query = sa.select(store_schema.runs).order_by(store_schema.runs.c.seq)
        if complete_only:
            query = query.where(store_schema.runs.c.status == "complete")
        return self._read(query)

    def kinds(self) -> list[str]:
        """The kinds of run the store holds (nightly, pr, ...), sorted."""
        query = sa.select(store_schema.runs.c.kind).distinct().order_by(store_schema.runs.c.kind)
        return [row["kind"] for row in self._read(query)]

    def points(self, run_seqs: list[int] | None = None) -> list[dict[str, Any]]:
        query = sa.select(store_schema.points).order_by(
            store_schema.points.c.run_seq,
            store_schema.points.c.depth,
            store_schema.points.c.concurrency,
        )
        if run_seqs is not None:
            query = query.where(store_schema.points.c.run_seq.in_(run_seqs))
        return self._read(query)

    def _read(self, query: sa.Select[Any]) -> list[dict[str, Any]]:
        try:
            with self.engine.connect() as connection:
                return [dict(row._mapping) for row in connection.execute(query)]
        except sa.exc.DBAPIError as exc:
            raise SpecperfError(f"history store {self._shown()}: {_one_line(exc)}") from None


def _alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    return config


def _upsert_run(connection: Connection, row: dict[str, Any]) -> int:
    runs = store_schema.runs
    seq = connection.execute(sa.select(runs.c.seq).where(runs.c.run_id == row["run_id"])).scalar()
    if seq is None:
        inserted = connection.execute(sa.insert(runs).values(**row, status="incomplete"))
        key = inserted.inserted_primary_key
        assert key is not None
        return int(key[0])
    # A later write of the same run keeps its start time and identity fields it already had.
    kept = {k: v for k, v in row.items() if v is not None and k not in ("run_id", "started_at")}
    connection.execute(sa.update(runs).where(runs.c.seq == seq).values(**kept))
    return int(seq)


def _one_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return " ".join(str(orig).split())[:300]
