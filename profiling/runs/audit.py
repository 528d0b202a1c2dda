"""The run store's audit log and trash, as statements on an open connection (profiling.runs.store runs them
inside its own transactions, so a run and its log entry are saved, trashed or purged together or not at all).

An audit entry (`audit_log()`): {"id", "at_utc", "actor", "action", "run_id", "detail"}; the actions are save,
import, update, delete (to the trash), restore and purge. The table refuses UPDATE and DELETE by trigger
(profiling.runs.schema._migration_team).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from profiling.runs.schema import AuditRow, ResultRow, RunRow
from profiling.runs.values import iso_utc, to_utc

ACTIONS = ("save", "import", "update", "delete", "restore", "purge", "comment")


def record(conn: Connection, actor: str, action: str, run_id: int | None, detail: str = "") -> None:
    """Append one entry to the audit log (in the caller's transaction)."""
    assert action in ACTIONS, action
    values = {"at": to_utc(None), "actor": actor[:200], "action": action, "run_id": run_id, "detail": detail[:2000]}
    conn.execute(sa.insert(AuditRow).values(**values))


def entries(conn: Connection, limit: int | None = None, run_id: int | None = None) -> list[dict[str, Any]]:
    """Audit entries, newest first (at most `limit`; only those of `run_id` when given)."""
    query = sa.select(AuditRow).order_by(AuditRow.id.desc())
    if run_id is not None:
        query = query.where(AuditRow.run_id == run_id)
    if limit is not None:
        query = query.limit(limit)
    return [
        {
            "id": r.id,
            "at_utc": iso_utc(r.at),
            "actor": r.actor,
            "action": r.action,
            "run_id": r.run_id,
            "detail": r.detail,
        }
        for r in conn.execute(query)
    ]


def label_of(conn: Connection, run_id: int) -> str | None:
    """A run's label, trashed or not (None when there is no such run)."""
    return conn.execute(sa.select(RunRow.label).where(RunRow.id == run_id)).scalar()


def trash(conn: Connection, run_id: int, actor: str) -> bool:
    """Move a live run to the trash; False when there is no live run `run_id`."""
    done = conn.execute(
        sa.update(RunRow)
        .where(RunRow.id == run_id, RunRow.deleted_at.is_(None))
        .values(deleted_at=to_utc(None), deleted_by=actor[:200])
    )
    return done.rowcount > 0


def restore(conn: Connection, run_id: int) -> bool:
    """Take a run out of the trash; False when `run_id` is not in the trash."""
    done = conn.execute(
        sa.update(RunRow)
        .where(RunRow.id == run_id, RunRow.deleted_at.is_not(None))
        .values(deleted_at=None, deleted_by=None)
    )
    return done.rowcount > 0


def purge(conn: Connection, run_ids: Sequence[int]) -> list[tuple[int, str]]:
    """Delete for good those of `run_ids` that are in the trash (never a live run); returns (id, label) of each."""
    query = sa.select(RunRow.id, RunRow.label).where(RunRow.id.in_(list(run_ids)), RunRow.deleted_at.is_not(None))
    gone = [(int(i), label) for i, label in conn.execute(query)]
    ids = [i for i, _ in gone]
    if ids:
        conn.execute(sa.delete(ResultRow).where(ResultRow.run_id.in_(ids)))
        conn.execute(sa.delete(RunRow).where(RunRow.id.in_(ids)))
    return gone


def trashed(conn: Connection) -> list[dict[str, Any]]:
    """The runs in the trash, most recently deleted first: id, label, author, kind, created_utc, deleted_utc,
    deleted_by, n_results."""
    counts = sa.select(ResultRow.run_id, sa.func.count().label("n")).group_by(ResultRow.run_id).subquery()
    query = (
        sa.select(
            RunRow.id,
            RunRow.label,
            RunRow.author,
            RunRow.kind,
            RunRow.created_at,
            RunRow.deleted_at,
            RunRow.deleted_by,
            counts.c.n,
        )
        .outerjoin(counts, counts.c.run_id == RunRow.id)
        .where(RunRow.deleted_at.is_not(None))
        .order_by(RunRow.deleted_at.desc(), RunRow.id.desc())
    )
    return [
        {
            "id": r.id,
            "label": r.label,
            "author": r.author,
            "kind": r.kind,
            "created_utc": iso_utc(r.created_at),
            "deleted_utc": iso_utc(r.deleted_at),
            "deleted_by": r.deleted_by,
            "n_results": int(r.n or 0),
        }
        for r in conn.execute(query)
    ]
