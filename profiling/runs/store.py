"""Run store: benchmark, profile and uploaded runs saved durably in an SQL database (SQLAlchemy 2.x).

A run is a SavedRun (profiling.runs.records); its record dict (`schema: gemmlens.run.v1`, SavedRun.to_dict)
is what get_run() returns and what the JSON export holds:

    {"schema": "gemmlens.run.v1", "id": 12 (when read from a store), "label": "...", "author": "...",
     "notes": "...", "created_utc": "2026-11-22T01:23:45Z", "saved_utc": "...", "kind": "bench",
     "device": {"name", "cc", "driver", "cuda_runtime", "cuda_driver", "max_sm_clock_mhz", ...},
     "catalog_commit": "abc1234" | null, "meta": {...settings, tool, source...},
     "results": [{"kernel", "size_label", "m", "n", "k", "status", "error", "time_median_ms",
                  "time_min_ms", "time_max_ms", "tflops", "pct_cublas", "rel_error", "registers",
                  "shared_bytes", "occupancy_pct", "bank_conflicts", "dram_bytes",
                  "metrics": {name: number}, "derived": {name: number}, "extra": {...}}]}

Build runs with profiling.runs.convert (bench_run for results files, report_run for Nsight Compute
reports), then RunStore.save_run(), which also takes record dicts.

Writes take the identity that acts (`actor`, profiling.team.roles.Identity) and check its role there, so no page
or command can skip the check: saving and commenting need runner, changing a run's label or notes its author or
an admin (its author never changes), deleting (to the trash), restoring, purging and reading the trash need admin.
Every write is logged in the append-only audit log (profiling.runs.audit) in the same transaction. A store opened
with `require_actor` (the app with sign-in configured) refuses writes without an identity; otherwise a write
without one is the local single user's (the command line), who keeps the author the run names.

Database: GEMMLENS_DB_URL (any SQLAlchemy URL; PostgreSQL via postgresql+psycopg://) or an SQLite file
at GEMMLENS_DB_PATH or ~/.local/share/gemmlens/runs.sqlite, created on first use. The schema and its
migrations are in profiling.runs.schema.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from profiling.device_model import DeviceInfo
from profiling.errors import InvalidInput, error_line
from profiling.runs import audit
from profiling.runs.comments import launches_of
from profiling.runs.engine import make_engine, sqlite_read_only
from profiling.runs.privileges import history_warning
from profiling.runs.records import RESULT_FIELDS, RunResult, SavedRun, as_run, size_text
from profiling.runs.schema import (
    SCHEMA_VERSION,
    AuditRow,
    CommentRow,
    ResultRow,
    RunRow,
    StoreError,
    migrate,
    schema_version,
)
from profiling.runs.values import STORE_INT_MAX, finite_number, iso_utc, nonempty_str, to_utc
from profiling.team.roles import (
    Action,
    Identity,
    PermissionDenied,
    check_author,
    local_identity,
    require,
    require_author_or_admin,
)

__all__ = ["DEFAULT_DB_PATH", "RunStore", "StoreError", "default_db_url", "make_engine", "open_store"]

DEFAULT_DB_PATH = Path("~/.local/share/gemmlens/runs.sqlite")

# Rows are inserted in chunks so that a huge run never builds one giant statement.
_CHUNK = 500

# Test seam: called inside the save transaction after each chunk of results is flushed, with the number
# of result rows written so far. Tests set it in a child process to pause (and kill) a save mid-way.
_save_hook: Callable[[int], None] | None = None


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


@contextmanager
def _db_errors(action: str, url: str) -> Iterator[None]:
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        cause = getattr(exc, "orig", None) or exc  # the driver's own error, without SQLAlchemy's SQL dump
        raise StoreError(f"could not {action} ({url}): {error_line(cause)}") from exc


MAX_COMMENT_CHARS = 5000
"""A comment is a note for a review, not a document."""


# ---------------------------------------------------------------------------------------------
# The store
# ---------------------------------------------------------------------------------------------


class RunStore:
    """Saved runs in one database; every save is one transaction.

    Opening with `create` (the default) creates the store where there is none and migrates an older one; without
    it (commands that only read) neither happens: a store that is missing, empty or older is an error. An SQLite
    file that this process may not write (or whose folder it may not write) opens read-only: it can be read,
    and saves say why they cannot be made.
    """

    def __init__(self, url: str | None = None, *, create: bool = True, require_actor: bool = False) -> None:
        self.url = url or default_db_url()
        self.require_actor = require_actor
        locked = sqlite_read_only(self.url)
        self.read_only_reason = (
            f"this user may not write {locked} or its folder" if locked else None if create else "opened for reading"
        )
        self.engine = make_engine(self.url, create=create, read_only=self.read_only)
        self.display_url = _display_url(self.engine)
        # Saves go through this view of the engine so that SQLite takes its write lock at BEGIN.
        self._write_engine = self.engine.execution_options(gemmlens_write=True)
        self.warnings: list[str] = []
        """What the operator should know about this store: where the database role could rewrite the audit log
        (profiling.runs.privileges), shown by `gemmlens app` at start, the commands that save, and to admins."""
        with _db_errors("open the run store", self.display_url):
            if create and not self.read_only:
                migrate(self.engine)
            else:
                self._check_schema()
            if not self.read_only and self.engine.dialect.name == "postgresql":
                with self.engine.connect() as conn:
                    self.warnings = [w for w in [history_warning(conn)] if w]

    @property
    def read_only(self) -> bool:
        """Whether this store was opened for reading, or is an SQLite file that this process may not write."""
        return self.read_only_reason is not None

    def _check_schema(self) -> None:
        """A store opened without migrating must already have the newest schema."""
        with self.engine.connect() as conn:
            version = schema_version(conn)
        if version == SCHEMA_VERSION:
            return
        if version == 0:
            raise StoreError(f"{self.display_url} is not a GEMM Lens run store (it holds no runs table)")
        how = "update GEMM Lens" if version > SCHEMA_VERSION else "open it once with the app or a save to upgrade it"
        raise StoreError(
            f"the run store {self.display_url} has schema version {version}, this GEMM Lens reads {SCHEMA_VERSION}"
            f" ({self.read_only_reason}): {how}"
        )

    def _check_writable(self, action: str) -> None:
        if self.read_only:
            raise StoreError(
                f"cannot {action}: the run store is read-only ({self.read_only_reason}); nothing was saved"
            )

    def _acting(self, actor: Identity | None, action: Action, doing: str) -> str:
        """The name to log for a write by `actor` after checking its role; for no actor, the local user's."""
        if actor is None:
            if self.require_actor:
                raise PermissionDenied(f"sign in first: {doing} on this server needs a signed-in identity")
            return local_identity().id
        require(actor, action)
        return actor.id

    def close(self) -> None:
        """Release pooled connections."""
        self.engine.dispose()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def save_run(self, run: SavedRun | Mapping[str, Any], *, actor: Identity | None = None) -> int:
        """Save a run (or its record dict, checked by SavedRun.from_dict) in one transaction; return its new id.
        With an `actor` (runner or admin), the run's author is the actor: an author naming anyone else is refused."""
        run = as_run(run)
        who = self._acting(actor, "save", "saving runs")
        if actor is not None:
            run = dataclasses.replace(run, author=check_author(actor, run.author))
        self._check_writable("save the run")
        with _db_errors("save the run", self.display_url), Session(self._write_engine) as session:
            with session.begin():
                run_id = self._add(session, run)
                audit.record(session.connection(), who, "save", run_id, f"{run.kind} run {run.label!r}")
                return run_id

    def read_run(self, run_id: int) -> SavedRun:
        """The run `run_id` with its results (raises InvalidInput when there is none, or it is in the trash)."""
        if not 0 < run_id <= STORE_INT_MAX:  # beyond the id column: no driver may even be asked
            raise InvalidInput(f"no run {run_id} in the run store ({self.display_url})")
        with _db_errors("read the run", self.display_url), Session(self.engine) as session:
            run = session.get(RunRow, run_id)
            if run is None:
                raise InvalidInput(f"no run {run_id} in the run store ({self.display_url})")
            if run.deleted_at is not None:
                raise InvalidInput(
                    f"no run {run_id} in the run store ({self.display_url}): it is in the trash, where an admin "
                    "can restore it"
                )
            rows = session.scalars(
                sa.select(ResultRow).where(ResultRow.run_id == run_id).order_by(ResultRow.position)
            ).all()
            return _saved_run(run, [_run_result(r) for r in rows])

    def read_runs(self, run_ids: Sequence[int]) -> list[SavedRun]:
        """Several runs, in the order asked."""
        return [self.read_run(i) for i in run_ids]

    def get_run(self, run_id: int) -> dict[str, Any]:
        """read_run() as its record dict."""
        return self.read_run(run_id).to_dict()

    def get_runs(self, run_ids: Sequence[int]) -> list[dict[str, Any]]:
        """read_runs() as record dicts."""
        return [self.get_run(i) for i in run_ids]

    def list_runs(self, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
        """Summaries of the runs, newest first: run fields (no results) plus n_results and kernels; one page of
        `limit` runs after skipping `offset` (all runs when limit is None). Results are counted for that page only;
        a run's results are read when it is opened (read_run)."""
        with _db_errors("list runs", self.display_url), Session(self.engine) as session:
            newest_first = (
                sa.select(RunRow)
                .where(RunRow.deleted_at.is_(None))
                .order_by(RunRow.created_at.desc(), RunRow.id.desc())
            )
            if limit is not None or offset:
                newest_first = newest_first.limit(limit).offset(max(0, offset))
            runs = session.scalars(newest_first).all()
            kernels: dict[int, set[str]] = {}
            counts: dict[int, int] = {}
            shown = sa.select(ResultRow.run_id, ResultRow.kernel, sa.func.count())
            if limit is not None or offset:
                shown = shown.where(ResultRow.run_id.in_([r.id for r in runs]))
            pairs = session.execute(shown.group_by(ResultRow.run_id, ResultRow.kernel))
            for run_id, kernel, count in pairs:
                kernels.setdefault(run_id, set()).add(kernel)
                counts[run_id] = counts.get(run_id, 0) + count
            summaries = []
            for r in runs:
                summary = _saved_run(r, ()).to_dict()
                del summary["results"]
                summaries.append(summary | {"n_results": counts.get(r.id, 0), "kernels": sorted(kernels.get(r.id, ()))})
            return summaries

    def revision(self) -> int:
        """A number that grows with every change to the store (its newest audit entry: every save, import, update,
        delete, restore and purge writes one), so reads can be cached until it moves."""
        with _db_errors("read the audit log", self.display_url), self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.max(AuditRow.id))).scalar() or 0)

    def count_runs(self) -> int:
        """How many runs the store holds outside the trash (for paging through list_runs)."""
        with _db_errors("count runs", self.display_url), Session(self.engine) as session:
            live = sa.select(sa.func.count()).select_from(RunRow).where(RunRow.deleted_at.is_(None))
            return session.scalar(live) or 0

    def result_keys(self, run_ids: Sequence[int]) -> list[dict[str, Any]]:
        """What identifies each result of the runs, without its values: run_id, kernel, size (records.size_text),
        and its run's device_name and created_utc, in result_rows' order. Enough to match runs by kernel and size
        (the Review page's default pair) at a fraction of result_rows' cost."""
        query = (
            sa.select(
                ResultRow.run_id,
                ResultRow.kernel,
                ResultRow.m,
                ResultRow.n,
                ResultRow.k,
                ResultRow.size_label,
                RunRow.device_name,
                RunRow.created_at,
            )
            .join(RunRow, ResultRow.run_id == RunRow.id)
            .where(RunRow.deleted_at.is_(None), ResultRow.run_id.in_([int(i) for i in run_ids]))
            .order_by(RunRow.created_at, RunRow.id, ResultRow.position)
        )
        with _db_errors("read results", self.display_url), Session(self.engine) as session:
            return [
                {
                    "run_id": run_id,
                    "kernel": kernel,
                    "size": size_text({"m": m, "n": n, "k": k, "size_label": size_label}),
                    "device_name": device_name,
                    "created_utc": iso_utc(created_at),
                }
                for run_id, kernel, m, n, k, size_label, device_name, created_at in session.execute(query)
            ]

    def result_rows(
        self, *, kernel: str | None = None, device: str | None = None, run_ids: Sequence[int] | None = None
    ) -> list[dict[str, Any]]:
        """Flat result rows joined with their run (run_id, run_label, created_utc, device_name, ...)."""
        query = (
            sa.select(ResultRow, RunRow).join(RunRow, ResultRow.run_id == RunRow.id).where(RunRow.deleted_at.is_(None))
        )
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
                out.append(
                    {
                        "run_id": run.id,
                        "run_label": run.label,
                        "author": run.author,
                        "created_utc": iso_utc(run.created_at),
                        "kind": run.kind,
                        "device_name": run.device_name,
                        "device_cc": run.device_cc,
                        **_run_result(result).to_dict(),
                    }
                )
            return out

    def update_run(
        self, run_id: int, *, label: str | None = None, notes: str | None = None, actor: Identity | None = None
    ) -> None:
        """Change a run's label or notes (None leaves a field as it is). With an `actor`, only the run's author or
        an admin may (require_author_or_admin); a run's author never changes."""
        who = self._acting(actor, "save", "changing runs")
        values: dict[str, Any] = {}
        if label is not None:
            if not label.strip():
                raise InvalidInput("a run label cannot be empty")
            values["label"] = label.strip()[:300]
        if notes is not None:
            values["notes"] = notes
        if not values:
            return
        self._check_writable("update the run")
        with _db_errors("update the run", self.display_url), self._write_engine.begin() as conn:
            # Read under the write lock (SQLite) or with the row locked (PostgreSQL): the author checked is the
            # author of the row changed.
            live = sa.select(RunRow.author).where(RunRow.id == run_id, RunRow.deleted_at.is_(None))
            if conn.dialect.name != "sqlite":
                live = live.with_for_update()
            author = conn.execute(live).scalar()
            if author is None:
                raise InvalidInput(f"no run {run_id} in the run store ({self.display_url})")
            if actor is not None:
                require_author_or_admin(actor, author, run_id)
            conn.execute(sa.update(RunRow).where(RunRow.id == run_id).values(**values))
            audit.record(conn, who, "update", run_id, "changed " + ", ".join(sorted(values)))

    def add_comment(self, run_id: int, text: str, *, launch: str = "", actor: Identity | None = None) -> int:
        """Comment on a run, or on one of its launches (`launch`: the kernel and size, as comments.launch_name names
        them). Commenting is a write: runners and admins comment, viewers read. The comment keeps its author (the
        acting identity) and time."""
        who = self._acting(actor, "comment", "commenting on runs")
        text = text.strip()
        if not text or len(text) > MAX_COMMENT_CHARS:
            raise InvalidInput(f"a comment needs 1 to {MAX_COMMENT_CHARS:,} characters of text")
        self._check_writable("save the comment")
        with _db_errors("save the comment", self.display_url), self._write_engine.begin() as conn:
            live = sa.select(RunRow.id).where(RunRow.id == run_id, RunRow.deleted_at.is_(None))
            if conn.execute(live).scalar() is None:
                raise InvalidInput(f"no run {run_id} in the run store ({self.display_url})")
            if launch and launch not in launches_of(conn, run_id):
                raise InvalidInput(f"run {run_id} has no launch {launch[:200]!r} to comment on")
            values = {"run_id": run_id, "launch": launch[:300], "author": who[:200], "at": to_utc(None), "text": text}
            comment_id = conn.execute(sa.insert(CommentRow).values(**values)).inserted_primary_key[0]
            audit.record(conn, who, "comment", run_id, f"comment {comment_id}" + (f" on {launch}" if launch else ""))
            return int(comment_id)

    def comments(self, run_ids: Sequence[int]) -> list[dict[str, Any]]:
        """The comments on these runs, oldest first: id, run_id, launch, author, at (ISO UTC), text."""
        with _db_errors("read comments", self.display_url), self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(CommentRow).where(CommentRow.run_id.in_(list(run_ids))).order_by(CommentRow.id)
            ).mappings()
            return [{**dict(r), "at": iso_utc(r["at"])} for r in rows]

    def delete_run(self, run_id: int, *, actor: Identity | None = None) -> bool:
        """Move a run to the trash (an admin's action; restore_run brings it back, purge_trash deletes it for
        good); False when there is no such run outside the trash."""
        who = self._acting(actor, "delete", "deleting runs")
        self._check_writable("delete the run")
        with _db_errors("delete the run", self.display_url), self._write_engine.begin() as conn:
            if not audit.trash(conn, run_id, who):
                return False
            audit.record(conn, who, "delete", run_id, f"moved {audit.label_of(conn, run_id)!r} to the trash")
            return True

    def restore_run(self, run_id: int, *, actor: Identity | None = None) -> bool:
        """Take a run out of the trash (an admin's action); False when it is not in the trash."""
        who = self._acting(actor, "delete", "restoring runs")
        self._check_writable("restore the run")
        with _db_errors("restore the run", self.display_url), self._write_engine.begin() as conn:
            if not audit.restore(conn, run_id):
                return False
            audit.record(conn, who, "restore", run_id, f"restored {audit.label_of(conn, run_id)!r} from the trash")
            return True

    def purge_trash(self, run_ids: Sequence[int], *, actor: Identity | None = None) -> list[int]:
        """Delete for good the runs of `run_ids` that are in the trash (an admin's action, which the app asks to
        confirm); runs outside the trash are never touched. Returns the ids purged."""
        who = self._acting(actor, "purge", "purging the trash")
        self._check_writable("purge the trash")
        with _db_errors("purge the trash", self.display_url), self._write_engine.begin() as conn:
            gone = audit.purge(conn, run_ids)
            for run_id, label in gone:
                audit.record(conn, who, "purge", run_id, f"deleted {label!r} for good")
            return [run_id for run_id, _ in gone]

    def trash(self, *, actor: Identity | None = None) -> list[dict[str, Any]]:
        """The runs in the trash (profiling.runs.audit.trashed), most recently deleted first; an admin's view, like
        the audit log (only admins restore or purge what is there)."""
        self._acting(actor, "delete", "reading the trash")
        with _db_errors("read the trash", self.display_url), self.engine.connect() as conn:
            return audit.trashed(conn)

    def audit_log(
        self, limit: int | None = None, *, run_id: int | None = None, actor: Identity | None = None
    ) -> list[dict[str, Any]]:
        """The audit log, newest first (profiling.runs.audit.entries); reading it is an admin's right."""
        self._acting(actor, "audit", "reading the audit log")
        with _db_errors("read the audit log", self.display_url), self.engine.connect() as conn:
            return audit.entries(conn, limit, run_id)

    def import_runs(self, runs: Sequence[SavedRun | Mapping[str, Any]], *, actor: Identity | None = None) -> list[int]:
        """Save several runs (e.g. from runs.export.read_runs_json); all or none are saved. With an `actor`, the
        runs are the actor's (the author an export names is kept in the audit log)."""
        clean = [as_run(r) for r in runs]
        who = self._acting(actor, "save", "importing runs")
        self._check_writable("import runs")
        with _db_errors("import runs", self.display_url):
            ids = []
            # One transaction for the batch: a failed import leaves nothing behind to clean up.
            with Session(self._write_engine) as session, session.begin():
                for run in clean:
                    named = run.author
                    if actor is not None:
                        run = dataclasses.replace(run, author=actor.id)
                    ids.append(self._add(session, run))
                    was = f" (exported with author {named!r})" if named and named != run.author else ""
                    audit.record(session.connection(), who, "import", ids[-1], f"{run.kind} run {run.label!r}{was}")
            return ids

    def _add(self, session: Session, run: SavedRun) -> int:
        device = run.device.to_dict()  # the store's JSON column, and its typed columns read from it
        row = RunRow(
            label=run.label,
            author=run.author,
            notes=run.notes,
            created_at=run.created,
            saved_at=to_utc(None),
            kind=run.kind,
            device_name=run.device_name,
            device_cc=run.device_cc,
            driver=nonempty_str(device.get("driver")),
            cuda_runtime=nonempty_str(device.get("cuda_runtime")),
            cuda_driver=nonempty_str(device.get("cuda_driver")),
            sm_clock_mhz=finite_number(device.get("max_sm_clock_mhz")),
            mem_clock_mhz=finite_number(device.get("max_mem_clock_mhz")),
            catalog_commit=run.catalog_commit,
            device_json=device,
            meta=run.meta,
        )
        session.add(row)
        session.flush()
        rows = [
            {
                **r.columns(),
                "metrics": r.metrics,
                "derived": r.derived,
                "extra": r.extra,
                "times_ms": None if r.times_ms is None else list(r.times_ms),
                "run_id": row.id,
                "position": i,
            }
            for i, r in enumerate(run.results)
        ]
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start : start + _CHUNK]
            session.execute(sa.insert(ResultRow), chunk)
            if _save_hook is not None:
                _save_hook(start + len(chunk))
        return row.id


def _display_url(engine: Engine) -> str:
    """The engine's URL without its password."""
    return engine.url.render_as_string(hide_password=True)


def _saved_run(row: RunRow, results: Sequence[RunResult]) -> SavedRun:
    """A stored run exactly as its row holds it (no cleaning: it was cleaned when saved)."""
    return SavedRun(
        label=row.label,
        kind=row.kind,
        created=row.created_at,
        results=tuple(results),
        author=row.author,
        notes=row.notes,
        device=DeviceInfo.from_dict(row.device_json),
        catalog_commit=row.catalog_commit,
        meta=dict(row.meta or {}),
        id=row.id,
        saved=row.saved_at,
        device_name=row.device_name,
        device_cc=row.device_cc,
    )


def _run_result(row: ResultRow) -> RunResult:
    return RunResult(
        **{f: getattr(row, f) for f in RESULT_FIELDS},
        metrics=dict(row.metrics or {}),
        derived=dict(row.derived or {}),
        extra=dict(row.extra or {}),
        times_ms=None if not row.times_ms else tuple(row.times_ms),
    )


def open_store(url: str | None = None, *, create: bool = True) -> RunStore:
    """Open (and migrate) the store at `url`, or the default one (see default_db_url)."""
    return RunStore(url, create=create)
