"""The run store's database schema: SQLAlchemy tables as of the newest migration, and the migrations.

The schema version is kept in `schema_version`; MIGRATIONS run in one transaction when a store is opened
(profiling.runs.store.RunStore). The result columns are RunResult's fields (profiling.runs.records).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from profiling.errors import GemmLensError


class StoreError(GemmLensError):
    """The run store could not be opened, read or written."""


# ---------------------------------------------------------------------------------------------
# ORM models: the schema as of the newest migration (a test checks that they agree).
# ---------------------------------------------------------------------------------------------


class Base(DeclarativeBase):
    pass


class RunRow(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    label: Mapped[str] = mapped_column(sa.String(300))
    author: Mapped[str] = mapped_column(sa.String(200), default="")
    notes: Mapped[str] = mapped_column(sa.Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime)  # naive UTC: when the run was measured
    saved_at: Mapped[dt.datetime] = mapped_column(sa.DateTime)  # naive UTC: when it entered the store
    kind: Mapped[str] = mapped_column(sa.String(20))
    device_name: Mapped[str | None] = mapped_column(sa.String(200))
    device_cc: Mapped[str | None] = mapped_column(sa.String(20))
    driver: Mapped[str | None] = mapped_column(sa.String(50))
    cuda_runtime: Mapped[str | None] = mapped_column(sa.String(50))
    cuda_driver: Mapped[str | None] = mapped_column(sa.String(50))
    sm_clock_mhz: Mapped[float | None] = mapped_column(sa.Float)
    mem_clock_mhz: Mapped[float | None] = mapped_column(sa.Float)
    catalog_commit: Mapped[str | None] = mapped_column(sa.String(64))
    device_json: Mapped[dict | None] = mapped_column(sa.JSON)
    meta: Mapped[dict | None] = mapped_column(sa.JSON)  # v2
    deleted_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime)  # team: naive UTC, set while in the trash
    deleted_by: Mapped[str | None] = mapped_column(sa.String(200))  # team


class ResultRow(Base):
    __tablename__ = "results"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(sa.ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(sa.Integer)
    kernel: Mapped[str] = mapped_column(sa.String(500))
    size_label: Mapped[str | None] = mapped_column(sa.String(100))
    m: Mapped[int | None] = mapped_column(sa.Integer)
    n: Mapped[int | None] = mapped_column(sa.Integer)
    k: Mapped[int | None] = mapped_column(sa.Integer)
    status: Mapped[str] = mapped_column(sa.String(20))
    error: Mapped[str | None] = mapped_column(sa.Text)
    time_median_ms: Mapped[float | None] = mapped_column(sa.Float)
    time_min_ms: Mapped[float | None] = mapped_column(sa.Float)
    time_max_ms: Mapped[float | None] = mapped_column(sa.Float)
    tflops: Mapped[float | None] = mapped_column(sa.Float)
    pct_cublas: Mapped[float | None] = mapped_column(sa.Float)
    rel_error: Mapped[float | None] = mapped_column(sa.Float)
    registers: Mapped[int | None] = mapped_column(sa.Integer)
    shared_bytes: Mapped[int | None] = mapped_column(sa.Integer)
    occupancy_pct: Mapped[float | None] = mapped_column(sa.Float)
    bank_conflicts: Mapped[float | None] = mapped_column(sa.Float)
    dram_bytes: Mapped[float | None] = mapped_column(sa.Float)
    metrics: Mapped[dict | None] = mapped_column(sa.JSON)
    derived: Mapped[dict | None] = mapped_column(sa.JSON)  # v2
    extra: Mapped[dict | None] = mapped_column(sa.JSON)  # v2
    times_ms: Mapped[list | None] = mapped_column(sa.JSON)  # v4: every timed launch, for the verdicts


class AuditRow(Base):
    """One entry of the append-only audit log: who did what to which run, and when (triggers refuse changes)."""

    __tablename__ = "audit"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[dt.datetime] = mapped_column(sa.DateTime)  # naive UTC
    actor: Mapped[str] = mapped_column(sa.String(200))
    action: Mapped[str] = mapped_column(sa.String(20))  # save | import | update | delete | restore | purge
    run_id: Mapped[int | None] = mapped_column(sa.Integer)  # no foreign key: a purged run's entries stay
    detail: Mapped[str] = mapped_column(sa.Text, default="")


class CommentRow(Base):
    """A comment on a run, or on one launch of it (`launch`: the kernel and size it names), with author and time."""

    __tablename__ = "comments"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(sa.ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    launch: Mapped[str] = mapped_column(sa.String(300), default="")
    author: Mapped[str] = mapped_column(sa.String(200))
    at: Mapped[dt.datetime] = mapped_column(sa.DateTime)  # naive UTC
    text: Mapped[str] = mapped_column(sa.Text)


# ---------------------------------------------------------------------------------------------
# Migrations: append only. Each step is frozen DDL (never the ORM models, which follow the newest
# schema), so that an old database upgrades through exactly the steps it has not seen.
# ---------------------------------------------------------------------------------------------


def _migration_1(conn: Connection) -> None:
    """Initial schema: runs and results with the comparison columns and a metrics JSON column."""
    md = sa.MetaData()
    sa.Table(
        "runs",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("label", sa.String(300), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("notes", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("saved_at", sa.DateTime, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("device_name", sa.String(200)),
        sa.Column("device_cc", sa.String(20)),
        sa.Column("driver", sa.String(50)),
        sa.Column("cuda_runtime", sa.String(50)),
        sa.Column("cuda_driver", sa.String(50)),
        sa.Column("sm_clock_mhz", sa.Float),
        sa.Column("mem_clock_mhz", sa.Float),
        sa.Column("catalog_commit", sa.String(64)),
        sa.Column("device_json", sa.JSON),
    )
    sa.Table(
        "results",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("kernel", sa.String(500), nullable=False),
        sa.Column("size_label", sa.String(100)),
        sa.Column("m", sa.Integer),
        sa.Column("n", sa.Integer),
        sa.Column("k", sa.Integer),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("time_median_ms", sa.Float),
        sa.Column("time_min_ms", sa.Float),
        sa.Column("time_max_ms", sa.Float),
        sa.Column("tflops", sa.Float),
        sa.Column("pct_cublas", sa.Float),
        sa.Column("rel_error", sa.Float),
        sa.Column("registers", sa.Integer),
        sa.Column("shared_bytes", sa.Integer),
        sa.Column("occupancy_pct", sa.Float),
        sa.Column("bank_conflicts", sa.Float),
        sa.Column("dram_bytes", sa.Float),
        sa.Column("metrics", sa.JSON),
        sa.Index("ix_results_run_id", "run_id"),
    )
    md.create_all(conn)


def _migration_2(conn: Connection) -> None:
    """Run metadata (settings, tool, source), derived metrics and the untouched source row per result."""
    conn.exec_driver_sql("ALTER TABLE runs ADD COLUMN meta JSON")
    conn.exec_driver_sql("ALTER TABLE results ADD COLUMN derived JSON")
    conn.exec_driver_sql("ALTER TABLE results ADD COLUMN extra JSON")
    # History and filters look runs up by kernel and by date.
    conn.exec_driver_sql("CREATE INDEX ix_results_kernel ON results (kernel)")
    conn.exec_driver_sql("CREATE INDEX ix_runs_created_at ON runs (created_at)")


AUDIT_APPEND_ONLY = "the audit log is append-only: its entries cannot be changed or deleted"

_PG_AUDIT_GUARD = f"""
CREATE FUNCTION gemmlens_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{AUDIT_APPEND_ONLY}';
END
$$"""


def _migration_team(conn: Connection) -> None:
    """Trash (deleted_at, deleted_by on runs) and the append-only audit log; runs saved without an author get
    "unknown" (they predate sign-in). The log refuses UPDATE and DELETE by trigger, on PostgreSQL TRUNCATE too."""
    conn.exec_driver_sql("ALTER TABLE runs ADD COLUMN deleted_at TIMESTAMP")
    conn.exec_driver_sql("ALTER TABLE runs ADD COLUMN deleted_by VARCHAR(200)")
    conn.exec_driver_sql("UPDATE runs SET author = 'unknown' WHERE author = ''")
    md = sa.MetaData()
    sa.Table(
        "audit",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("at", sa.DateTime, nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("run_id", sa.Integer),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Index("ix_audit_at", "at"),
    )
    md.create_all(conn)
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(_PG_AUDIT_GUARD)
        conn.exec_driver_sql(
            "CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit"
            " FOR EACH ROW EXECUTE FUNCTION gemmlens_audit_append_only()"
        )
        conn.exec_driver_sql(
            "CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit"
            " FOR EACH STATEMENT EXECUTE FUNCTION gemmlens_audit_append_only()"
        )
    else:
        for event in ("UPDATE", "DELETE"):
            conn.exec_driver_sql(
                f"CREATE TRIGGER audit_no_{event.lower()} BEFORE {event} ON audit"
                f" BEGIN SELECT RAISE(ABORT, '{AUDIT_APPEND_ONLY}'); END"
            )


def _migration_raw_times(conn: Connection) -> None:
    """Per-launch times of every result (a JSON list of milliseconds), which the verdicts' statistics need.

    Results saved before have only summaries: their column stays NULL, and a comparison that meets one says
    so (profiling.runs.verdict). A row that kept its source row whole in `extra` with a `times_ms` list gets it."""
    conn.exec_driver_sql("ALTER TABLE results ADD COLUMN times_ms JSON")
    table = sa.table(
        "results", sa.column("id", sa.Integer), sa.column("extra", sa.JSON), sa.column("times_ms", sa.JSON)
    )
    for row_id, extra in conn.execute(sa.select(table.c.id, table.c.extra)):
        times = extra.get("times_ms") if isinstance(extra, dict) else None
        if isinstance(times, list) and times:
            conn.execute(sa.update(table).where(table.c.id == row_id).values(times_ms=times))


def _migration_audit_no_replace(conn: Connection) -> None:
    """The audit log refuses an insert that names an existing entry's id.

    SQLite's REPLACE INTO, INSERT OR REPLACE and INSERT OR IGNORE resolve a primary-key conflict by deleting the old
    row or skipping the new one, and no UPDATE or DELETE trigger fires for that, so they could rewrite an entry
    unseen. A BEFORE INSERT trigger runs before the conflict is resolved. On PostgreSQL, INSERT ... ON CONFLICT DO
    UPDATE and MERGE fire the row's UPDATE trigger, which refuses already; nothing to add there."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(
            "CREATE TRIGGER audit_no_replace BEFORE INSERT ON audit WHEN EXISTS (SELECT 1 FROM audit WHERE id = NEW.id)"
            f" BEGIN SELECT RAISE(ABORT, '{AUDIT_APPEND_ONLY}'); END"
        )


def _migration_comments(conn: Connection) -> None:
    """Comments on runs and launches, with author and time (a review meeting's notes, kept with the runs)."""
    md = sa.MetaData()
    sa.Table("runs", md, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table(
        "comments",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("launch", sa.String(300), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("at", sa.DateTime, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
    )
    md.tables["comments"].create(conn)


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (
    _migration_1,
    _migration_2,
    _migration_team,
    _migration_raw_times,
    _migration_audit_no_replace,
    _migration_comments,
)


SCHEMA_VERSION = len(MIGRATIONS)


_VERSION_TABLE = sa.Table("schema_version", sa.MetaData(), sa.Column("version", sa.Integer, nullable=False))


def schema_version(conn: Connection) -> int:
    """The schema version of the database behind `conn` (0 for an empty database)."""
    inspector = sa.inspect(conn)
    if not inspector.has_table("schema_version"):
        if inspector.has_table("runs"):
            raise StoreError("the database has a `runs` table but no schema_version: not a GEMM Lens store")
        return 0
    return int(conn.execute(sa.select(sa.func.max(_VERSION_TABLE.c.version))).scalar() or 0)


@contextmanager
def _owner_needed(version: int, target: int) -> Iterator[None]:
    """A migration refused for want of privileges (PostgreSQL's 42501, an app role that owns no table) as one line
    saying who must run it."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if getattr(exc.orig, "sqlstate", None) != "42501":
            raise
        raise StoreError(
            f"the run store has schema version {version} and this GEMM Lens needs {target}, but this database role "
            "may not change the tables: run `gemmlens migrate` as the role that owns them (docs/team-store.md)"
        ) from None


def migrate(engine: Engine, target: int = SCHEMA_VERSION) -> int:
    """Bring the database up to `target` in one transaction; return the version it had before."""
    if not 0 < target <= SCHEMA_VERSION:
        raise ValueError(f"target schema version must be 1..{SCHEMA_VERSION}")
    with engine.connect() as conn:
        # The common case, an up-to-date store, must not wait for the write lock behind a long save.
        with conn.begin():
            before = schema_version(conn)
        if before >= target and before <= SCHEMA_VERSION:
            return before
        conn = conn.execution_options(gemmlens_write=True)
        with _owner_needed(before, target), conn.begin():
            if conn.dialect.name == "postgresql":
                # Two processes starting on a new shared database must not both create the tables.
                conn.exec_driver_sql("SELECT pg_advisory_xact_lock(74110007)")
            before = schema_version(conn)
            if before > SCHEMA_VERSION:
                raise StoreError(
                    f"the run store has schema version {before}, newer than this GEMM Lens "
                    f"({SCHEMA_VERSION}): update GEMM Lens"
                )
            if before >= target:
                return before
            if before == 0:
                _VERSION_TABLE.create(conn)
            for step in MIGRATIONS[before:target]:
                step(conn)
            conn.execute(sa.delete(_VERSION_TABLE))
            conn.execute(sa.insert(_VERSION_TABLE).values(version=target))
            return before
