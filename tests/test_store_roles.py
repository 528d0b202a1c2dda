"""Team mode held by the store itself: every write and admin read called directly as each role (no page in between),
and the audit log append-only against every statement form that could rewrite an entry.

Runs on SQLite, and on PostgreSQL when GEMMLENS_TEST_PG_URL is set (`.ci/postgres.sh`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from test_store import bench_doc, db_url  # noqa: F401 - db_url is the SQLite / PostgreSQL fixture

from profiling import usecases
from profiling.app.gpu_queue import GpuJobQueue
from profiling.gpu.jobs import BenchSettings
from profiling.runs import convert
from profiling.runs.store import RunStore
from profiling.shape import Shape
from profiling.team.roles import Identity, PermissionDenied

VIEWER = Identity("vera@example.com", "viewer", "Vera", signed_in=True)
AUTHOR = Identity("rui@example.com", "runner", "Rui", signed_in=True)
OTHER = Identity("oli@example.com", "runner", "Oli", signed_in=True)
ADMIN = Identity("ada@example.com", "admin", "Ada", signed_in=True)
ROLES = {"viewer": VIEWER, "author": AUTHOR, "other runner": OTHER, "admin": ADMIN, "no identity": None}


def a_run(label: str = "run"):
    return convert.run_from_bench(bench_doc({"v3": 3.0, "v5": 2.0}), label=label)


@pytest.fixture
def team_store(db_url: str) -> Iterator[RunStore]:  # noqa: F811 - the imported fixture, used by name
    with RunStore(db_url, require_actor=True) as s:
        yield s


# Each call as `who` on a store holding AUTHOR's live run `live` and trashed run `gone`; the roles it is allowed.
CALLS: dict[str, tuple[Callable[[RunStore, Identity | None, int, int], object], set[str], str]] = {
    "save": (lambda s, who, live, gone: s.save_run(a_run("new"), actor=who), {"author", "other runner", "admin"},
             "saving runs needs the runner or admin role"),
    "import": (lambda s, who, live, gone: s.import_runs([a_run("imported")], actor=who),
               {"author", "other runner", "admin"}, "saving runs needs the runner or admin role"),
    "rename": (lambda s, who, live, gone: s.update_run(live, label="renamed", actor=who), {"author", "admin"},
               f"only run {{live}}'s author ({AUTHOR.id}) or an admin may change it"),
    "re-note": (lambda s, who, live, gone: s.update_run(live, notes="new notes", actor=who), {"author", "admin"},
                f"only run {{live}}'s author ({AUTHOR.id}) or an admin may change it"),
    "delete": (lambda s, who, live, gone: s.delete_run(live, actor=who), {"admin"},
               "deleting or restoring runs needs the admin role"),
    "restore": (lambda s, who, live, gone: s.restore_run(gone, actor=who), {"admin"},
                "deleting or restoring runs needs the admin role"),
    "purge": (lambda s, who, live, gone: s.purge_trash([gone], actor=who), {"admin"},
              "purging the trash needs the admin role"),
    "read the trash": (lambda s, who, live, gone: s.trash(actor=who), {"admin"},
                       "deleting or restoring runs needs the admin role"),
    "read the audit log": (lambda s, who, live, gone: s.audit_log(actor=who), {"admin"},
                           "reading the audit log needs the admin role"),
}  # fmt: skip


def snapshot(s: RunStore) -> tuple:
    """Everything a refused call must leave as it was: the runs, the trash and the audit log."""
    runs = [(r["id"], r["label"], r["author"], r["notes"]) for r in s.list_runs()]
    return runs, [t["id"] for t in s.trash(actor=ADMIN)], s.audit_log(actor=ADMIN)


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("role", list(ROLES))
def test_each_role_may_do_exactly_what_its_role_allows(team_store: RunStore, role: str, call: str) -> None:
    live = team_store.save_run(a_run("live"), actor=AUTHOR)
    gone = team_store.save_run(a_run("gone"), actor=AUTHOR)
    assert team_store.delete_run(gone, actor=ADMIN)
    who = ROLES[role]
    do, allowed, why = CALLS[call]
    before = snapshot(team_store)
    if role in allowed:
        do(team_store, who, live, gone)
        return
    with pytest.raises(PermissionDenied) as info:
        do(team_store, who, live, gone)
    message = str(info.value)
    if who is None:
        assert message.startswith("sign in first:")
    elif role == "viewer" and call in ("rename", "re-note"):  # changing a run needs a role that saves, first
        assert message.startswith(f"{VIEWER.id} is a viewer: saving runs needs the runner or admin role"), message
    else:
        assert message.startswith(f"{who.id} is a {who.role}: ") and why.format(live=live) in message, message
    assert "\n" not in message
    assert snapshot(team_store) == before


def test_the_author_and_an_admin_change_a_run_and_the_author_stays(team_store: RunStore) -> None:
    assert "author" not in inspect.signature(RunStore.update_run).parameters  # authorship never changes
    run_id = team_store.save_run(a_run("first"), actor=AUTHOR)
    team_store.update_run(run_id, label="by its author", actor=AUTHOR)
    team_store.update_run(run_id, notes="checked by an admin", actor=ADMIN)
    run = team_store.read_run(run_id)
    assert (run.label, run.notes, run.author) == ("by its author", "checked by an admin", AUTHOR.id)
    log = team_store.audit_log(actor=ADMIN)
    assert [(e["actor"], e["action"], e["detail"]) for e in log[:2]] == [
        (ADMIN.id, "update", "changed notes"),
        (AUTHOR.id, "update", "changed label"),
    ]


def test_a_run_saved_before_sign_in_is_changed_by_an_admin_only(team_store: RunStore) -> None:
    """Runs from before sign-in carry the author "unknown": no runner is their author."""
    with RunStore(team_store.url) as local:  # the command line: the local user, who keeps the named author
        run_id = local.save_run(convert.run_from_bench(bench_doc({"v3": 3.0}), label="old", author="unknown"))
    with pytest.raises(PermissionDenied, match=rf"only run {run_id}'s author \(unknown\) or an admin"):
        team_store.update_run(run_id, label="mine now", actor=AUTHOR)
    team_store.update_run(run_id, label="tidied", actor=ADMIN)
    assert team_store.read_run(run_id).author == "unknown"


@pytest.mark.parametrize("role", list(ROLES))
def test_gpu_jobs_are_queued_by_runners_and_admins_only(role: str) -> None:
    """The use case behind the Benchmark page's Run button, queued as each role."""
    queue = GpuJobQueue(require_identity=True)
    fn = usecases.bench_job(["v3"], [Shape(256, 256, 256)], BenchSettings(repeats=2))
    who = ROLES[role]
    if who is not None and who.may("run"):
        job = queue.submit("benchmark", who, fn)
        assert queue.cancel(job.id) and job.owner == who.id
        return
    with pytest.raises(PermissionDenied, match="running GPU jobs"):
        queue.submit("benchmark", who if who is not None else "typed name", fn)
    assert queue.waiting() == []


# --- the audit log is append-only against every statement form ---------------------------------------

SQLITE_FORMS = [
    "INSERT OR REPLACE INTO audit (id, at, actor, action, run_id, detail) VALUES (1, '2026-01-01', 'x', 'save', 1, 'forged')",
    "REPLACE INTO audit (id, at, actor, action, run_id, detail) VALUES (1, '2026-01-01', 'x', 'save', 1, 'forged')",
    "INSERT OR IGNORE INTO audit (id, at, actor, action, run_id, detail) VALUES (1, '2026-01-01', 'x', 'save', 1, 'x')",
    "INSERT INTO audit (id, at, actor, action, run_id, detail) VALUES (1, '2026-01-01', 'x', 'save', 1, 'forged')"
    " ON CONFLICT (id) DO UPDATE SET actor = excluded.actor",
    "INSERT INTO audit (id, at, actor, action, run_id, detail) SELECT id, at, 'x', action, run_id, detail FROM audit"
    " WHERE true ON CONFLICT (id) DO UPDATE SET detail = 'forged'",
    "UPDATE audit SET actor = 'x'",
    "UPDATE OR REPLACE audit SET actor = 'x' WHERE id = 1",
    "UPDATE OR IGNORE audit SET detail = 'forged'",
    "UPDATE audit SET id = id + 100",
    "DELETE FROM audit",
    "DELETE FROM audit WHERE id = 1",
]  # fmt: skip
POSTGRES_FORMS = [
    "INSERT INTO audit (id, at, actor, action, run_id, detail) VALUES (1, now(), 'x', 'save', 1, 'forged')"
    " ON CONFLICT (id) DO UPDATE SET actor = excluded.actor",
    "UPDATE audit SET actor = 'x'",
    "UPDATE audit SET id = id + 100",
    "DELETE FROM audit",
    "DELETE FROM audit WHERE id = 1",
    "TRUNCATE audit",
    "MERGE INTO audit a USING (SELECT 1 AS id) s ON a.id = s.id WHEN MATCHED THEN UPDATE SET detail = 'forged'",
    "MERGE INTO audit a USING (SELECT 1 AS id) s ON a.id = s.id WHEN MATCHED THEN DELETE",
]  # fmt: skip


def test_no_statement_rewrites_or_removes_an_audit_entry(team_store: RunStore) -> None:
    team_store.save_run(a_run("first"), actor=AUTHOR)
    team_store.save_run(a_run("second"), actor=ADMIN)
    before = team_store.audit_log(actor=ADMIN)
    forms = POSTGRES_FORMS if team_store.engine.dialect.name == "postgresql" else SQLITE_FORMS
    for statement in forms:
        with pytest.raises(sa.exc.DBAPIError, match="the audit log is append-only"):
            with team_store.engine.begin() as conn:
                conn.exec_driver_sql(statement)
        assert team_store.audit_log(actor=ADMIN) == before, statement
    # Appending stays possible: a new entry, with a new id, by the store's own writes.
    team_store.save_run(a_run("third"), actor=AUTHOR)
    after = team_store.audit_log(actor=ADMIN)
    assert after[1:] == before and after[0]["id"] > before[0]["id"]
