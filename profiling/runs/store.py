"""Run store: benchmark, profile and uploaded runs saved durably in an SQL database (SQLAlchemy 2.x).

A *run record* is a plain JSON-able dict and is the one exchange format of this module, of the review
functions and of the JSON export (`schema: gemmlens.run.v1`):

    {"schema": "gemmlens.run.v1", "id": 12 (when read from a store), "label": "...", "author": "...",
     "notes": "...", "created_utc": "2026-11-22T01:23:45Z", "saved_utc": "...", "kind": "bench",
     "device": {"name", "cc", "driver", "cuda_runtime", "cuda_driver", "max_sm_clock_mhz", ...},
     "catalog_commit": "abc1234" | null, "meta": {...settings, tool, source...},
     "results": [{"kernel", "size_label", "m", "n", "k", "status", "error", "time_median_ms",
                  "time_min_ms", "time_max_ms", "tflops", "pct_cublas", "rel_error", "registers",
                  "shared_bytes", "occupancy_pct", "bank_conflicts", "dram_bytes",
                  "metrics": {name: number}, "derived": {name: number}, "extra": {...}}]}

Build records with run_from_bench() (results files) or run_from_report() (Nsight Compute reports, as
objects or as `report --json` dicts), then RunStore.save_run().

Database: GEMMLENS_DB_URL (any SQLAlchemy URL; PostgreSQL via postgresql+psycopg://) or an SQLite file
at GEMMLENS_DB_PATH or ~/.local/share/gemmlens/runs.sqlite, created on first use. The schema version is
kept in `schema_version`; MIGRATIONS run in one transaction when a store is opened.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from profiling.errors import GemmLensError, InvalidInput
from profiling.runs.results import SCHEMA as RESULTS_SCHEMA

RUN_SCHEMA = "gemmlens.run.v1"
BENCH_SCHEMA = RESULTS_SCHEMA  # the results files written by `python -m profiling bench`
KINDS = ("bench", "profile", "upload")
DEFAULT_DB_PATH = Path("~/.local/share/gemmlens/runs.sqlite")

# Result fields stored in their own columns (everything else of a result lives in the JSON columns).
RESULT_FIELDS: tuple[str, ...] = (
    "kernel", "size_label", "m", "n", "k", "status", "error",
    "time_median_ms", "time_min_ms", "time_max_ms", "tflops", "pct_cublas", "rel_error",
    "registers", "shared_bytes", "occupancy_pct", "bank_conflicts", "dram_bytes",
)  # fmt: skip
_INT_FIELDS = frozenset({"m", "n", "k", "registers", "shared_bytes"})
_STR_FIELDS = frozenset({"kernel", "size_label", "status", "error"})

# Canonical ncu metric names (see profiling/metrics.py) that feed the comparison columns.
NCU_TIME = "gpu__time_duration.sum"  # nanoseconds
NCU_REGISTERS = "launch__registers_per_thread"
NCU_SMEM_STATIC = "launch__shared_mem_per_block_static"
NCU_SMEM_DYNAMIC = "launch__shared_mem_per_block_dynamic"
NCU_OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
NCU_BANK_CONFLICTS = (
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
)
NCU_DRAM_BYTES = "dram__bytes.sum"
NCU_FP32 = {
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": 1,
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": 1,
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 2,
}

# Rows are inserted in chunks so that a huge run never builds one giant statement.
_CHUNK = 500

# Test seam: called inside the save transaction after each chunk of results is flushed, with the number
# of result rows written so far. Tests set it in a child process to pause (and kill) a save mid-way.
_save_hook: Callable[[int], None] | None = None


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


# ---------------------------------------------------------------------------------------------
# Migrations: append only. Each step is frozen DDL (never the ORM models, which follow the newest
# schema), so that an old database upgrades through exactly the steps it has not seen.
# ---------------------------------------------------------------------------------------------


def _migration_1(conn: Connection) -> None:
    """Initial schema: runs and results with the comparison columns and a metrics JSON column."""
    md = sa.MetaData()
    sa.Table(
        "runs", md,
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
    )  # fmt: skip
    sa.Table(
        "results", md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("kernel", sa.String(500), nullable=False),
        sa.Column("size_label", sa.String(100)),
        sa.Column("m", sa.Integer), sa.Column("n", sa.Integer), sa.Column("k", sa.Integer),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("time_median_ms", sa.Float), sa.Column("time_min_ms", sa.Float),
        sa.Column("time_max_ms", sa.Float), sa.Column("tflops", sa.Float),
        sa.Column("pct_cublas", sa.Float), sa.Column("rel_error", sa.Float),
        sa.Column("registers", sa.Integer), sa.Column("shared_bytes", sa.Integer),
        sa.Column("occupancy_pct", sa.Float), sa.Column("bank_conflicts", sa.Float),
        sa.Column("dram_bytes", sa.Float),
        sa.Column("metrics", sa.JSON),
        sa.Index("ix_results_run_id", "run_id"),
    )  # fmt: skip
    md.create_all(conn)


def _migration_2(conn: Connection) -> None:
    """Run metadata (settings, tool, source), derived metrics and the untouched source row per result."""
    conn.exec_driver_sql("ALTER TABLE runs ADD COLUMN meta JSON")
    conn.exec_driver_sql("ALTER TABLE results ADD COLUMN derived JSON")
    conn.exec_driver_sql("ALTER TABLE results ADD COLUMN extra JSON")
    # History and filters look runs up by kernel and by date.
    conn.exec_driver_sql("CREATE INDEX ix_results_kernel ON results (kernel)")
    conn.exec_driver_sql("CREATE INDEX ix_runs_created_at ON runs (created_at)")


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (_migration_1, _migration_2)
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
        with conn.begin():
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


# ---------------------------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------------------------


def default_db_url() -> str:
    """GEMMLENS_DB_URL, else an SQLite file at GEMMLENS_DB_PATH or ~/.local/share/gemmlens/runs.sqlite."""
    url = os.environ.get("GEMMLENS_DB_URL", "").strip()
    if url:
        return url
    path = Path(os.environ.get("GEMMLENS_DB_PATH", "").strip() or DEFAULT_DB_PATH).expanduser()
    return f"sqlite:///{path}"


def _sqlite_events(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # pysqlite's own transaction handling skips BEGIN before DDL and cannot BEGIN IMMEDIATE;
        # take it over (SQLAlchemy's documented recipe) so migrations and saves are truly atomic.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout = 60000")
        cur.execute("PRAGMA journal_mode = WAL")  # readers never block the writer, and vice versa
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers take the write lock up front: a deferred transaction that upgrades from read to write
        # fails at once with SQLITE_BUSY when another process wrote meanwhile, whatever the busy timeout.
        write = conn.get_execution_options().get("gemmlens_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def make_engine(url: str, *, create: bool = True) -> Engine:
    """An engine for `url`; for an SQLite file, its directory is created when `create` is set."""
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
    try:
        engine = sa.create_engine(parsed, pool_pre_ping=True, **kwargs)
    except (ModuleNotFoundError, sa.exc.NoSuchModuleError) as exc:
        raise StoreError(
            f"no database driver for {parsed.drivername}: {exc} (for PostgreSQL: pip install psycopg[binary])"
        ) from exc
    if parsed.get_backend_name() == "sqlite":
        _sqlite_events(engine)
    return engine


def _one_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return text[0] if text else type(orig).__name__


@contextmanager
def _db_errors(action: str, url: str) -> Iterator[None]:
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        raise StoreError(f"could not {action} ({url}): {_one_line(exc)}") from exc


# ---------------------------------------------------------------------------------------------
# Record helpers
# ---------------------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    """A JSON-safe copy: numpy scalars, dataclasses and objects become plain data; NaN/inf become None
    (PostgreSQL's json type rejects them, and they mean "no value" in every source we read)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value))
    if hasattr(value, "item"):  # numpy / pandas scalars
        try:
            return _jsonable(value.item())
        except (TypeError, ValueError):
            pass
    if hasattr(value, "__dict__"):
        return _jsonable({k: v for k, v in vars(value).items() if not k.startswith("_")})
    return str(value)


def finite_number(value: Any) -> float | None:
    """A finite float from a number, a {"value": ...} dict or a Metric-like object; else None."""
    if isinstance(value, Mapping):
        value = value.get("value")
    elif hasattr(value, "value") and not isinstance(value, (int, float, str)):
        value = value.value
    if isinstance(value, bool) or value is None:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _int(value: Any) -> int | None:
    num = finite_number(value)
    return None if num is None else int(round(num))


def _utc(value: Any) -> dt.datetime:
    """Naive UTC datetime from an ISO string or datetime (naive input is taken as UTC)."""
    if value is None or value == "":
        return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise InvalidInput(f"not an ISO date/time: {value!r}") from exc
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if not isinstance(value, dt.datetime):
        raise InvalidInput(f"not a date/time: {value!r}")
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _iso(value: dt.datetime | None) -> str | None:
    return None if value is None else value.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def size_text(result: Mapping[str, Any]) -> str:
    """How a result's size is shown and matched: "MxNxK", else its size label, else ""."""
    m, n, k = result.get("m"), result.get("n"), result.get("k")
    if m is not None and n is not None and k is not None:
        return f"{m}x{n}x{k}"
    return str(result.get("size_label") or "")


def normalize_result(result: Mapping[str, Any], where: str = "result") -> dict[str, Any]:
    """A result dict with every field of RESULT_FIELDS (typed) plus metrics/derived/extra dicts."""
    if not isinstance(result, Mapping):
        raise InvalidInput(f"{where} is not an object")
    kernel = result.get("kernel")
    if not isinstance(kernel, str) or not kernel.strip():
        raise InvalidInput(f"{where} has no kernel name")
    out: dict[str, Any] = {}
    for field in RESULT_FIELDS:
        value = result.get(field)
        if field in _STR_FIELDS:
            out[field] = None if value is None else str(value)
        elif field in _INT_FIELDS:
            out[field] = _int(value)
        else:
            out[field] = finite_number(value)
    out["kernel"] = kernel.strip()
    out["status"] = out["status"] or "ok"
    for field in ("metrics", "derived"):
        raw = result.get(field) or {}
        if not isinstance(raw, Mapping):
            raise InvalidInput(f"{where}: {field} is not an object")
        out[field] = {str(name): finite_number(v) for name, v in raw.items()}
    extra = result.get("extra") or {}
    out["extra"] = _jsonable(extra) if isinstance(extra, Mapping) else {"value": _jsonable(extra)}
    return out


def normalize_run(record: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a run record and return a clean copy (raises InvalidInput with a one-line reason)."""
    if not isinstance(record, Mapping):
        raise InvalidInput("a run must be a JSON object")
    schema = record.get("schema", RUN_SCHEMA)
    if schema != RUN_SCHEMA:
        raise InvalidInput(f"not a run record: schema is {schema!r}, expected {RUN_SCHEMA!r}")
    kind = record.get("kind", "bench")
    if kind not in KINDS:
        raise InvalidInput(f"run kind must be one of {', '.join(KINDS)}, not {kind!r}")
    results = record.get("results")
    if not isinstance(results, Sequence) or isinstance(results, (str, bytes)):
        raise InvalidInput("a run needs a `results` list")
    device = record.get("device") or {}
    if not isinstance(device, Mapping):
        raise InvalidInput("run `device` must be an object")
    created = _utc(record.get("created_utc"))
    label = str(record.get("label") or "").strip() or f"{kind} {created:%Y-%m-%d %H:%M}"
    return {
        "schema": RUN_SCHEMA,
        "label": label[:300],
        "author": str(record.get("author") or "").strip()[:200],
        "notes": str(record.get("notes") or ""),
        "created_utc": _iso(created),
        "kind": kind,
        "device": _jsonable(device),
        "catalog_commit": (str(record["catalog_commit"]) if record.get("catalog_commit") else None),
        "meta": _jsonable(record.get("meta") or {}),
        "results": [normalize_result(r, f"result {i + 1}") for i, r in enumerate(results)],
    }


def _flatten_numbers(value: Any, prefix: str, out: dict[str, float]) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            _flatten_numbers(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        num = finite_number(value)
        if num is not None:
            out[prefix] = num


def run_from_bench(
    doc: Mapping[str, Any],
    *,
    label: str | None = None,
    author: str = "",
    notes: str = "",
    kind: str = "bench",
) -> dict[str, Any]:
    """A run record from a `gemmlens.bench.v1` results document (docs/results-format.md)."""
    if not isinstance(doc, Mapping) or doc.get("schema") != BENCH_SCHEMA:
        found = doc.get("schema") if isinstance(doc, Mapping) else type(doc).__name__
        raise InvalidInput(f"not a benchmark results file: schema is {found!r}, expected {BENCH_SCHEMA!r}")
    rows = doc.get("results")
    if not isinstance(rows, list):
        raise InvalidInput("benchmark results file has no `results` list")
    results = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InvalidInput(f"benchmark result {i + 1} is not an object")
        times = row.get("time_ms") if isinstance(row.get("time_ms"), Mapping) else {}
        compile_info = row.get("compile") if isinstance(row.get("compile"), Mapping) else {}
        launch = row.get("launch") if isinstance(row.get("launch"), Mapping) else {}
        static, dynamic = compile_info.get("shared_static_bytes"), launch.get("dynamic_smem_bytes")
        shared = None
        if static is not None or dynamic is not None:
            shared = (_int(static) or 0) + (_int(dynamic) or 0)
        metrics: dict[str, float] = {}
        for key in ("time_ms", "tflops", "pct_peak", "pct_cublas", "rel_error", "compile", "launch", "nvml"):
            _flatten_numbers(row.get(key), key, metrics)
        if isinstance(row.get("metrics"), Mapping):  # ncu metrics merged into a bench row, if any
            metrics.update({str(k): v for k, v in row["metrics"].items() if finite_number(v) is not None})
        results.append(
            {
                "kernel": row.get("kernel"),
                "m": row.get("m"), "n": row.get("n"), "k": row.get("k"),
                "status": row.get("status") or "ok", "error": row.get("error"),
                "time_median_ms": times.get("median"), "time_min_ms": times.get("min"),
                "time_max_ms": times.get("max"),
                "tflops": row.get("tflops"), "pct_cublas": row.get("pct_cublas"),
                "rel_error": row.get("rel_error"),
                "registers": compile_info.get("registers"), "shared_bytes": shared,
                "occupancy_pct": _metric(metrics, NCU_OCCUPANCY),
                "bank_conflicts": _sum_metrics(metrics, NCU_BANK_CONFLICTS),
                "dram_bytes": _metric(metrics, NCU_DRAM_BYTES),
                "metrics": metrics,
                "extra": row,
            }
        )  # fmt: skip
    tool = doc.get("tool") if isinstance(doc.get("tool"), Mapping) else {}
    return normalize_run(
        {
            "label": label,
            "author": author,
            "notes": notes,
            "created_utc": doc.get("created_utc"),
            "kind": kind,
            "device": doc.get("device") or {},
            "catalog_commit": tool.get("gemmlens_commit"),
            "meta": {"source_schema": BENCH_SCHEMA, "tool": tool, "settings": doc.get("settings") or {}},
            "results": results,
        }
    )


def _metric(metrics: Mapping[str, Any], name: str) -> float | None:
    return finite_number(metrics.get(name))


def _sum_metrics(metrics: Mapping[str, Any], names: Sequence[str]) -> float | None:
    values = [finite_number(metrics.get(n)) for n in names]
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return None


def run_from_report(
    report: Any,
    *,
    label: str | None = None,
    author: str = "",
    notes: str = "",
    kind: str = "profile",
    device: Mapping[str, Any] | None = None,
    catalog_commit: str | None = None,
    created_utc: str | dt.datetime | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A run record from an Nsight Compute report: an object with `.launches`, a `report --json` dict,
    or a list of launches. Each launch gives name, metrics {canonical name: number | {"value"} | Metric},
    optionally derived, findings, block, grid, cc, and a size (m/n/k or `size_label`)."""
    launches = report if isinstance(report, Sequence) else _get(report, "launches")
    if not isinstance(launches, Sequence) or isinstance(launches, (str, bytes)):
        raise InvalidInput("not a profile report: no list of kernel launches")
    names = [str(_get(launch, "name", "kernel") or "") for launch in launches]
    seen: dict[str, int] = {}
    results = []
    first_device: Any = None
    for i, launch in enumerate(launches):
        name = names[i]
        if not name:
            raise InvalidInput(f"profile launch {i + 1} has no kernel name")
        raw_metrics = _get(launch, "metrics") or {}
        if not isinstance(raw_metrics, Mapping):
            raise InvalidInput(f"profile launch {i + 1}: metrics is not a mapping")
        metrics = {str(k): v for k, v in ((k, finite_number(v)) for k, v in raw_metrics.items()) if v is not None}
        raw_derived = _get(launch, "derived") or {}
        derived = {str(k): finite_number(v) for k, v in dict(raw_derived).items()} if raw_derived else {}
        size_label = _get(launch, "size_label", "size")
        m, n, k = _get(launch, "m"), _get(launch, "n"), _get(launch, "k")
        if size_label is None and m is None and names.count(name) > 1:
            # Repeated launches of one kernel with no known size: number them so runs still line up.
            seen[name] = seen.get(name, 0) + 1
            size_label = f"#{seen[name]}"
        time_ns = _metric(metrics, NCU_TIME)
        flops = None
        if all(n_ in metrics for n_ in NCU_FP32):
            flops = sum(metrics[n_] * w for n_, w in NCU_FP32.items())
        tflops = flops / time_ns / 1e3 if flops and time_ns else None
        smem = _sum_metrics(metrics, (NCU_SMEM_STATIC, NCU_SMEM_DYNAMIC))
        first_device = first_device or _get(launch, "device")
        results.append(
            {
                "kernel": name, "size_label": size_label, "m": m, "n": n, "k": k,
                "status": "ok",
                "time_median_ms": None if time_ns is None else time_ns / 1e6,
                "tflops": tflops,
                "registers": _metric(metrics, NCU_REGISTERS), "shared_bytes": smem,
                "occupancy_pct": _metric(metrics, NCU_OCCUPANCY),
                "bank_conflicts": _sum_metrics(metrics, NCU_BANK_CONFLICTS),
                "dram_bytes": _metric(metrics, NCU_DRAM_BYTES),
                "metrics": metrics, "derived": derived,
                "extra": {
                    "id": _get(launch, "id"), "block": _get(launch, "block"), "grid": _get(launch, "grid"),
                    "cc": _get(launch, "cc"), "device": _get(launch, "device"),
                    "units": {str(k): _get(v, "unit") for k, v in raw_metrics.items() if _get(v, "unit")},
                    "findings": _get(launch, "findings") or [],
                },
            }
        )  # fmt: skip
    dev = dict(device or {})
    if not dev.get("name") and isinstance(first_device, str):
        dev["name"] = first_device
    if not dev.get("cc") and launches:
        cc = _get(launches[0], "cc")
        if cc:
            dev["cc"] = str(cc)
    info = dict(meta or {})
    for key in ("source", "path", "layout", "warnings"):
        value = _get(report, key) if not isinstance(report, Sequence) else None
        if value:
            info.setdefault(key, value)
    return normalize_run(
        {
            "label": label,
            "author": author,
            "notes": notes,
            "created_utc": created_utc,
            "kind": kind,
            "device": dev,
            "catalog_commit": catalog_commit,
            "meta": info,
            "results": results,
        }
    )


def load_run_file(path: str | Path, *, label: str | None = None) -> dict[str, Any]:
    """A run record from a results JSON file: a bench file, a one-run export, or a `report --json` file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise InvalidInput(f"no such file: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from exc
    default_label = label or path.stem
    if isinstance(doc, Mapping) and doc.get("schema") == BENCH_SCHEMA:
        return run_from_bench(doc, label=default_label)
    if isinstance(doc, Mapping) and doc.get("schema") in (RUN_SCHEMA, EXPORT_SCHEMA):
        runs = doc["runs"] if doc.get("schema") == EXPORT_SCHEMA else [doc]
        if not isinstance(runs, list) or len(runs) != 1:
            count = len(runs) if isinstance(runs, list) else "no"
            raise InvalidInput(f"{path} holds {count} runs; compare needs a file with exactly one")
        record = normalize_run(runs[0])
        if label:
            record["label"] = label
        return record
    if isinstance(doc, Mapping) and "launches" in doc:
        return run_from_report(doc, label=default_label, kind="upload")
    found = doc.get("schema") if isinstance(doc, Mapping) else type(doc).__name__
    raise InvalidInput(
        f"{path}: unsupported JSON (schema {found!r}); expected {BENCH_SCHEMA}, {RUN_SCHEMA} or a report"
    )


EXPORT_SCHEMA = "gemmlens.runs.v1"


# ---------------------------------------------------------------------------------------------
# The store
# ---------------------------------------------------------------------------------------------


class RunStore:
    """Saved runs in one database. Opening migrates the schema; every save is one transaction."""

    def __init__(self, url: str | None = None, *, create: bool = True) -> None:
        self.url = url or default_db_url()
        self.engine = make_engine(self.url, create=create)
        self.display_url = self.engine.url.render_as_string(hide_password=True)
        # Saves go through this view of the engine so that SQLite takes its write lock at BEGIN.
        self._write_engine = self.engine.execution_options(gemmlens_write=True)
        with _db_errors("open the run store", self.display_url):
            migrate(self.engine)

    def close(self) -> None:
        """Release pooled connections."""
        self.engine.dispose()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def save_run(self, record: Mapping[str, Any]) -> int:
        """Save a run record (see normalize_run) in one transaction; return its new id."""
        rec = normalize_run(record)
        with _db_errors("save the run", self.display_url), Session(self._write_engine) as session:
            with session.begin():
                return self._add(session, rec)

    def get_run(self, run_id: int) -> dict[str, Any]:
        """The full run record of `run_id` (raises InvalidInput when there is none)."""
        with _db_errors("read the run", self.display_url), Session(self.engine) as session:
            run = session.get(RunRow, run_id)
            if run is None:
                raise InvalidInput(f"no run {run_id} in the run store ({self.display_url})")
            rows = session.scalars(
                sa.select(ResultRow).where(ResultRow.run_id == run_id).order_by(ResultRow.position)
            ).all()
            return {**_run_fields(run), "results": [_result_fields(r) for r in rows]}

    def get_runs(self, run_ids: Sequence[int]) -> list[dict[str, Any]]:
        """Full records of several runs, in the order asked."""
        return [self.get_run(i) for i in run_ids]

    def list_runs(self) -> list[dict[str, Any]]:
        """Summaries of every run, newest first: run fields (no results) plus n_results and kernels."""
        with _db_errors("list runs", self.display_url), Session(self.engine) as session:
            newest_first = sa.select(RunRow).order_by(RunRow.created_at.desc(), RunRow.id.desc())
            runs = session.scalars(newest_first).all()
            kernels: dict[int, set[str]] = {}
            counts: dict[int, int] = {}
            pairs = session.execute(
                sa.select(ResultRow.run_id, ResultRow.kernel, sa.func.count())
                .group_by(ResultRow.run_id, ResultRow.kernel)
            )  # fmt: skip
            for run_id, kernel, count in pairs:
                kernels.setdefault(run_id, set()).add(kernel)
                counts[run_id] = counts.get(run_id, 0) + count
            return [
                {**_run_fields(r), "n_results": counts.get(r.id, 0), "kernels": sorted(kernels.get(r.id, ()))}
                for r in runs
            ]

    def result_rows(
        self, *, kernel: str | None = None, device: str | None = None, run_ids: Sequence[int] | None = None
    ) -> list[dict[str, Any]]:
        """Flat result rows joined with their run (run_id, run_label, created_utc, device_name, ...)."""
        query = sa.select(ResultRow, RunRow).join(RunRow, ResultRow.run_id == RunRow.id)
        if kernel is not None:
            query = query.where(ResultRow.kernel == kernel)
        if device is not None:
            query = query.where(RunRow.device_name == device)
        if run_ids is not None:
            query = query.where(ResultRow.run_id.in_(list(run_ids)))
        query = query.order_by(RunRow.created_at, RunRow.id, ResultRow.position)
        with _db_errors("read results", self.display_url), Session(self.engine) as session:
            out = []
            for result, run in session.execute(query):
                fields = _result_fields(result)
                out.append(
                    {
                        "run_id": run.id, "run_label": run.label, "author": run.author,
                        "created_utc": _iso(run.created_at), "kind": run.kind,
                        "device_name": run.device_name, "device_cc": run.device_cc, **fields,
                    }
                )  # fmt: skip
            return out

    def update_run(
        self, run_id: int, *, label: str | None = None, author: str | None = None, notes: str | None = None
    ) -> None:
        """Change a run's label, author or notes (None leaves a field as it is)."""
        values: dict[str, Any] = {}
        if label is not None:
            if not label.strip():
                raise InvalidInput("a run label cannot be empty")
            values["label"] = label.strip()[:300]
        if author is not None:
            values["author"] = author.strip()[:200]
        if notes is not None:
            values["notes"] = notes
        if not values:
            return
        with _db_errors("update the run", self.display_url), self._write_engine.begin() as conn:
            done = conn.execute(sa.update(RunRow).where(RunRow.id == run_id).values(**values))
            if done.rowcount == 0:
                raise InvalidInput(f"no run {run_id} in the run store ({self.display_url})")

    def delete_run(self, run_id: int) -> bool:
        """Delete a run and its results (the UI asks for confirmation first); False when there was none."""
        with _db_errors("delete the run", self.display_url), self._write_engine.begin() as conn:
            conn.execute(sa.delete(ResultRow).where(ResultRow.run_id == run_id))
            return conn.execute(sa.delete(RunRow).where(RunRow.id == run_id)).rowcount > 0

    def import_runs(self, records: Sequence[Mapping[str, Any]]) -> list[int]:
        """Save several records (e.g. from review.import_runs_json); all or none are saved."""
        clean = [normalize_run(r) for r in records]
        with _db_errors("import runs", self.display_url):
            ids = []
            # One transaction for the batch: a failed import leaves nothing behind to clean up.
            with Session(self._write_engine) as session, session.begin():
                for rec in clean:
                    ids.append(self._add(session, rec))
            return ids

    def _add(self, session: Session, rec: dict[str, Any]) -> int:
        device = rec["device"]
        run = RunRow(
            label=rec["label"], author=rec["author"], notes=rec["notes"],
            created_at=_utc(rec["created_utc"]), saved_at=_utc(None), kind=rec["kind"],
            device_name=_str_or_none(device.get("name")), device_cc=_str_or_none(device.get("cc")),
            driver=_str_or_none(device.get("driver")),
            cuda_runtime=_str_or_none(device.get("cuda_runtime")),
            cuda_driver=_str_or_none(device.get("cuda_driver")),
            sm_clock_mhz=finite_number(device.get("max_sm_clock_mhz")),
            mem_clock_mhz=finite_number(device.get("max_mem_clock_mhz")),
            catalog_commit=rec["catalog_commit"], device_json=device, meta=rec["meta"],
        )  # fmt: skip
        session.add(run)
        session.flush()
        rows = [
            {**{f: r[f] for f in RESULT_FIELDS}, "metrics": r["metrics"], "derived": r["derived"],
             "extra": r["extra"], "run_id": run.id, "position": i}
            for i, r in enumerate(rec["results"])
        ]  # fmt: skip
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start : start + _CHUNK]
            session.execute(sa.insert(ResultRow), chunk)
            if _save_hook is not None:
                _save_hook(start + len(chunk))
        return run.id


def _str_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _run_fields(run: RunRow) -> dict[str, Any]:
    return {
        "schema": RUN_SCHEMA,
        "id": run.id,
        "label": run.label,
        "author": run.author,
        "notes": run.notes,
        "created_utc": _iso(run.created_at),
        "saved_utc": _iso(run.saved_at),
        "kind": run.kind,
        "device": dict(run.device_json or {}),
        "device_name": run.device_name,
        "device_cc": run.device_cc,
        "catalog_commit": run.catalog_commit,
        "meta": dict(run.meta or {}),
    }


def _result_fields(row: ResultRow) -> dict[str, Any]:
    out = {f: getattr(row, f) for f in RESULT_FIELDS}
    out["metrics"] = dict(row.metrics or {})
    out["derived"] = dict(row.derived or {})
    out["extra"] = dict(row.extra or {})
    return out


def open_store(url: str | None = None, *, create: bool = True) -> RunStore:
    """Open (and migrate) the store at `url`, or the default one (see default_db_url)."""
    return RunStore(url, create=create)
