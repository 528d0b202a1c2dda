"""SQLAlchemy engines for the run store: SQLite (WAL, a write lock, read-only files) or PostgreSQL."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from functools import partial
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

from profiling.errors import InvalidInput
from profiling.runs.schema import StoreError


def _sqlite_events(engine: Engine, read_only: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # pysqlite's own transaction handling skips BEGIN before DDL and cannot BEGIN IMMEDIATE;
        # take it over (SQLAlchemy's documented recipe) so migrations and saves are truly atomic.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout = 60000")
        if not read_only:  # switching to WAL writes the file
            cur.execute("PRAGMA journal_mode = WAL")  # readers never block the writer, and vice versa
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers take the write lock up front: a deferred transaction that upgrades from read to write
        # fails at once with SQLITE_BUSY when another process wrote meanwhile, whatever the busy timeout.
        write = conn.get_execution_options().get("gemmlens_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def sqlite_read_only(url: str) -> Path | None:
    """The SQLite file of `url` when it exists and this process may not write it or create its journal beside it
    (a read-only folder or file); None for a writable or absent file, and for other databases."""
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database.startswith("file:"):
        return None
    path = Path(parsed.database).expanduser()
    if not path.is_file():
        return None
    return None if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK) else path


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file `path` that sees everything its writers committed.

    mode=ro reads the write-ahead log, which holds what a live writer (the team server) acknowledged but has not
    yet folded into the file, and what a killed writer left there. Reading a WAL database needs its -shm index
    beside it, which SQLite creates if it is missing; a read-only folder or mount cannot hold a new one. Where
    that fails and there is no log either, the file alone is the whole store and is read as it is (immutable=1).
    Where a log exists but cannot be read that way, reading the file alone would miss acknowledged runs: that is
    an error saying what to do."""
    location = urllib.parse.quote(str(path))
    conn = sqlite3.connect(f"file:{location}?mode=ro", uri=True, timeout=60, check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the WAL index, where there is one
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
        if wal.exists():
            raise StoreError(
                f"cannot read the run store {path}: its write-ahead log {wal.name} holds changes not yet in the file, "
                f"and reading them needs {shm.name} beside it, which this user may not create or open ({exc}); "
                f"open the store once as a user who may write {path.parent} (that folds the log into the file), "
                "or copy the folder somewhere this user may write"
            ) from None
    return sqlite3.connect(f"file:{location}?immutable=1", uri=True, timeout=60, check_same_thread=False)


def make_engine(url: str, *, create: bool = True, read_only: bool = False) -> Engine:
    """An engine for `url`; for an SQLite file, its directory is created when `create` is set, and with `read_only`
    the file is opened read-only (it must exist)."""
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError as exc:
        raise InvalidInput(f"not a database URL: {url!r} (expected e.g. sqlite:///runs.sqlite)") from exc
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        db = parsed.database or ""
        if db in ("", ":memory:") or db.startswith("file:"):
            raise InvalidInput("the run store needs an SQLite file, not an in-memory database")
        path = Path(db).expanduser()
        if not path.exists():
            if not create:
                raise StoreError(f"no run store at {path}")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the run store directory {path.parent}: {exc}") from exc
        parsed = parsed.set(database=str(path))
        kwargs["connect_args"] = {"timeout": 60}
        if read_only:
            # Read-only connections never write the file (not even the header that switching an empty file to WAL
            # writes) and read the WAL (_connect_read_only). Each is made when it is needed (no pool): whether a
            # log exists is decided again for every one, since a writer may start or stop meanwhile.
            kwargs = {"creator": partial(_connect_read_only, path.resolve()), "poolclass": NullPool}
    try:
        engine = sa.create_engine(parsed, **({"pool_pre_ping": True} | kwargs))
    except (ModuleNotFoundError, sa.exc.NoSuchModuleError) as exc:
        raise StoreError(
            f"no database driver for {parsed.drivername}: {exc} (for PostgreSQL: pip install psycopg[binary])"
        ) from exc
    if parsed.get_backend_name() == "sqlite":
        _sqlite_events(engine, read_only)
    return engine
