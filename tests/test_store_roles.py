"""Team mode held by the store itself: every write and admin read called directly as each role (no page in between),
and the audit log append-only against every statement form that could rewrite an entry.

Runs on SQLite, and on PostgreSQL when GEMMLENS_TEST_PG_URL is set (`.ci/postgres.sh`): once connected as the test
server's superuser, once in the two-role deployment of docs/team-store.md (an owner role that migrates, an app role
with INSERT and SELECT only on the audit log), which is also tested for what the app role can no longer do.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from test_store import PG_URL, bench_doc

from profiling import app_command, usecases
from profiling.app.gpu_queue import GpuJobQueue
from profiling.cli import main
from profiling.gpu.jobs import BenchSettings
from profiling.runs import convert, schema
from profiling.runs.store import RunStore, StoreError
from profiling.shape import Shape
from profiling.team.roles import Identity, PermissionDenied

VIEWER = Identity("vera@example.com", "viewer", "Vera", signed_in=True)
AUTHOR = Identity("rui@example.com", "runner", "Rui", signed_in=True)
OTHER = Identity("oli@example.com", "runner", "Oli", signed_in=True)
ADMIN = Identity("ada@example.com", "admin", "Ada", signed_in=True)
ROLES = {"viewer": VIEWER, "author": AUTHOR, "other runner": OTHER, "admin": ADMIN, "no identity": None}


def a_run(label: str = "run"):
    return convert.run_from_bench(bench_doc({"v3": 3.0, "v5": 2.0}), label=label)


def pg_url(user: str, search_path: str) -> str:
    """The test server's URL as `user`, with `search_path` as the schema."""
    url = sa.engine.make_url(PG_URL).set(username=user)
    return url.update_query_dict({"options": f"-csearch_path={search_path}"}).render_as_string(hide_password=False)


@contextmanager
def two_roles(target: int | None = None) -> Iterator[tuple[str, str]]:
    """(owner URL, app URL) of a fresh schema that a new owner role owns and has migrated (`gemmlens migrate
    --app-role`, or schema.migrate to `target` and the same grants), with a new app role that owns nothing."""
    tag = uuid.uuid4().hex[:10]
    owner, app, where = f"gl_owner_{tag}", f"gl_app_{tag}", f"t_{tag}"
    superuser = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with superuser.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {owner} LOGIN")
        conn.exec_driver_sql(f"CREATE ROLE {app} LOGIN")
        conn.exec_driver_sql(f"CREATE SCHEMA {where} AUTHORIZATION {owner}")
    try:
        if target is None:
            assert main(["migrate", "--db", pg_url(owner, where), "--app-role", app]) == 0
        else:
            from profiling.runs.privileges import grant_app_role
            from profiling.runs.store import make_engine

            engine = make_engine(pg_url(owner, where))
            schema.migrate(engine, target)
            with engine.begin() as conn:
                grant_app_role(conn, app)
            engine.dispose()
        yield pg_url(owner, where), pg_url(app, where)
    finally:
        with superuser.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {where} CASCADE")
            for role in (app, owner):
                conn.exec_driver_sql(f"DROP OWNED BY {role}")
                conn.exec_driver_sql(f"DROP ROLE {role}")
        superuser.dispose()


@pytest.fixture(params=["sqlite", "postgresql", "postgresql, two roles"])
def team_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty store: an SQLite file; a schema of the test PostgreSQL server, as its superuser; or the two-role
    deployment, as the app role."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store' / 'runs.sqlite'}"
        return
    if not PG_URL:
        pytest.skip('GEMMLENS_TEST_PG_URL is not set (start a server with `eval "$(.ci/postgres.sh)"`)')
    if request.param == "postgresql":
        where = f"t_{uuid.uuid4().hex[:12]}"
        superuser = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
        with superuser.connect() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA {where}")
        try:
            yield pg_url(sa.engine.make_url(PG_URL).username, where)
        finally:
            with superuser.connect() as conn:
                conn.exec_driver_sql(f"DROP SCHEMA {where} CASCADE")
            superuser.dispose()
        return
    with two_roles() as (_, app):
        yield app


@pytest.fixture
def team_store(team_url: str) -> Iterator[RunStore]:
    with RunStore(team_url, require_actor=True) as s:
        yield s


# Each call as `who` on a store holding AUTHOR's live run `live` and trashed run `gone`; the roles it is allowed.
CALLS: dict[str, tuple[Callable[[RunStore, Identity | None, int, int], object], set[str], str]] = {
    "save": (
        lambda s, who, live, gone: s.save_run(a_run("new"), actor=who),
        {"author", "other runner", "admin"},
        "saving runs needs the runner or admin role",
    ),
    "import": (
        lambda s, who, live, gone: s.import_runs([a_run("imported")], actor=who),
        {"author", "other runner", "admin"},
        "saving runs needs the runner or admin role",
    ),
    "rename": (
        lambda s, who, live, gone: s.update_run(live, label="renamed", actor=who),
        {"author", "admin"},
        f"only run {{live}}'s author ({AUTHOR.id}) or an admin may change it",
    ),
    "re-note": (
        lambda s, who, live, gone: s.update_run(live, notes="new notes", actor=who),
        {"author", "admin"},
        f"only run {{live}}'s author ({AUTHOR.id}) or an admin may change it",
    ),
    "comment": (
        lambda s, who, live, gone: s.add_comment(live, "looks right", actor=who),
        {"author", "other runner", "admin"},
        "commenting on runs needs the runner or admin role",
    ),
    "delete": (
        lambda s, who, live, gone: s.delete_run(live, actor=who),
        {"admin"},
        "deleting or restoring runs needs the admin role",
    ),
    "restore": (
        lambda s, who, live, gone: s.restore_run(gone, actor=who),
        {"admin"},
        "deleting or restoring runs needs the admin role",
    ),
    "purge": (
        lambda s, who, live, gone: s.purge_trash([gone], actor=who),
        {"admin"},
        "purging the trash needs the admin role",
    ),
    "read the trash": (
        lambda s, who, live, gone: s.trash(actor=who),
        {"admin"},
        "deleting or restoring runs needs the admin role",
    ),
    "read the audit log": (
        lambda s, who, live, gone: s.audit_log(actor=who),
        {"admin"},
        "reading the audit log needs the admin role",
    ),
}


def snapshot(s: RunStore) -> tuple:
    """Everything a refused call must leave as it was: the runs, their comments, the trash and the audit log."""
    runs = [(r["id"], r["label"], r["author"], r["notes"]) for r in s.list_runs()]
    trash = [t["id"] for t in s.trash(actor=ADMIN)]
    return runs, s.comments([r[0] for r in runs] + trash), trash, s.audit_log(actor=ADMIN)


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
]
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
]


def test_no_statement_rewrites_or_removes_an_audit_entry(team_store: RunStore) -> None:
    team_store.save_run(a_run("first"), actor=AUTHOR)
    team_store.save_run(a_run("second"), actor=ADMIN)
    before = team_store.audit_log(actor=ADMIN)
    forms = POSTGRES_FORMS if team_store.engine.dialect.name == "postgresql" else SQLITE_FORMS
    # The app role of the two-role deployment is refused before any trigger runs: it may not update or delete.
    refusal = "permission denied for table audit" if "gl_app_" in team_store.url else "the audit log is append-only"
    for statement in forms:
        with pytest.raises(sa.exc.DBAPIError, match=refusal):
            with team_store.engine.begin() as conn:
                conn.exec_driver_sql(statement)
        assert team_store.audit_log(actor=ADMIN) == before, statement
    # Appending stays possible: a new entry, with a new id, by the store's own writes.
    team_store.save_run(a_run("third"), actor=AUTHOR)
    after = team_store.audit_log(actor=ADMIN)
    assert after[1:] == before and after[0]["id"] > before[0]["id"]


# --- the two-role PostgreSQL deployment ---------------------------------------------------------------

needs_pg = pytest.mark.skipif(not PG_URL, reason="GEMMLENS_TEST_PG_URL is not set (`.ci/postgres.sh` starts a server)")


@needs_pg
def test_the_app_role_cannot_rewrite_history_and_is_not_warned_about(capsys: pytest.CaptureFixture[str]) -> None:
    with two_roles() as (owner_url, app_url):
        assert "GRANT SELECT, INSERT ON audit TO gl_app_" in capsys.readouterr().out  # what `migrate` did, printed
        with RunStore(app_url, require_actor=True) as app:
            assert app.warnings == []
            app.save_run(a_run("kept"), actor=AUTHOR)
            before = app.audit_log(actor=ADMIN)
            for statement, refusal in [
                ("ALTER TABLE audit DISABLE TRIGGER ALL", "must be owner of table audit"),
                ("ALTER TABLE audit DISABLE TRIGGER audit_append_only", "must be owner of table audit"),
                (
                    "CREATE OR REPLACE FUNCTION gemmlens_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS "
                    "$$ BEGIN RETURN NEW; END $$",
                    "permission denied for schema t_|must be owner of function",
                ),
                ("DROP TRIGGER audit_append_only ON audit", "must be owner of (relation|table) audit"),
                ("DROP TABLE audit", "must be owner of table audit"),
                ("UPDATE audit SET actor = 'x'", "permission denied for table audit"),
                ("DELETE FROM audit", "permission denied for table audit"),
                ("TRUNCATE audit", "permission denied for table audit"),
                ("SET session_replication_role = replica", "permission denied to set parameter"),
            ]:
                with pytest.raises(sa.exc.DBAPIError, match=refusal), app.engine.begin() as conn:
                    conn.exec_driver_sql(statement)
            assert app.audit_log(actor=ADMIN) == before
        with RunStore(owner_url) as owner:
            (warning,) = owner.warnings
        assert (
            warning.startswith("the database role gl_owner_") and "could rewrite the run store's audit log" in warning
        )
        assert "it owns the audit table (it can disable its triggers)" in warning
        assert "it owns the schema t_" in warning and "docs/team-store.md" in warning


@needs_pg
def test_the_app_warns_at_start_when_its_role_could_rewrite_history(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with two_roles() as (owner_url, app_url):
        monkeypatch.setenv("GEMMLENS_DB_URL", owner_url)
        (warning,) = app_command.history_check()
        assert capsys.readouterr().err == f"warning: {warning}\n"
        monkeypatch.setenv("GEMMLENS_DB_URL", app_url)
        assert app_command.history_check() == [] and capsys.readouterr().err == ""
    where = f"t_{uuid.uuid4().hex[:12]}"
    superuser = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with superuser.connect() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {where}")
    try:
        url = pg_url(sa.engine.make_url(PG_URL).username, where)  # one role for everything, as before
        with RunStore(url) as single:
            (warning,) = single.warnings
            assert "it is a superuser" in warning
        with RunStore(url, create=False) as reader:
            assert reader.warnings == []  # opened for reading only: it writes nothing, so no warning
    finally:
        with superuser.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {where} CASCADE")
        superuser.dispose()
    monkeypatch.setenv("GEMMLENS_DB_URL", "sqlite:////nonexistent/runs.sqlite")
    assert app_command.history_check() == []  # SQLite: no roles to check, and nothing opened before the app runs


@needs_pg
def test_an_app_role_meeting_an_older_schema_says_who_must_migrate() -> None:
    with two_roles(target=schema.SCHEMA_VERSION - 1) as (owner_url, app_url):
        with pytest.raises(StoreError) as info:
            RunStore(app_url)
        assert str(info.value) == (
            f"the run store has schema version {schema.SCHEMA_VERSION - 1} and this GEMM Lens needs "
            f"{schema.SCHEMA_VERSION}, but this database role may not change the tables: run `gemmlens migrate` as "
            "the role that owns them (docs/team-store.md)"
        )
        assert main(["migrate", "--db", owner_url]) == 0
        with RunStore(app_url) as app:
            assert app.warnings == [] and app.list_runs() == []


def test_migrate_refuses_an_app_role_on_sqlite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", "--db", f"sqlite:///{tmp_path / 'runs.sqlite'}", "--app-role", "app"]) == 2
    assert capsys.readouterr().err == "error: --app-role is for PostgreSQL: an SQLite file has no database roles\n"


# --- roles come from a verified e-mail claim -----------------------------------------------------------

POLICY = {"ada@example.com": "admin", "example.com": "runner"}


@pytest.mark.parametrize(
    "claim,role",
    [
        (True, "admin"),
        ("true", "admin"),
        ("TRUE", "admin"),
        (None, "admin"),
        (False, None),
        ("false", None),
        ("yes", None),
        (1, None),
    ],
)
def test_an_address_the_provider_did_not_verify_gets_no_role(claim: object, role: str | None) -> None:
    from profiling.team.roles import RolePolicy

    who = RolePolicy.from_mapping(POLICY).identity("ada@example.com", "Ada", claim)
    assert (who.role if who else None) == role
    strict = RolePolicy.from_mapping(POLICY, True).identity("ada@example.com", "Ada", claim)
    assert (strict.role if strict else None) == (role if claim is not None else None)  # no claim: refused too


def test_the_reason_names_the_claim_and_the_setting() -> None:
    from profiling.errors import InvalidInput
    from profiling.team.roles import RolePolicy

    policy = RolePolicy.from_mapping(POLICY)
    assert policy.unverified("ada@example.com", False) == (
        "the sign-in provider has not verified the address ada@example.com (email_verified is False): verify it "
        "with the provider, then sign in again"
    )
    assert policy.unverified("ada@example.com", None) is None
    assert RolePolicy.from_mapping(POLICY, True).unverified("ada@example.com", None) == (
        "the sign-in provider did not say whether ada@example.com is verified (no email_verified claim), and this "
        "server requires it (require_verified_email): ask an admin"
    )
    with pytest.raises(InvalidInput, match="require_verified_email must be true or false, not 'yes'"):
        RolePolicy.from_mapping(POLICY, "yes")


SIGN_IN = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "test-cookie-secret",
    "client_id": "gemmlens-test",
    "client_secret": "gemmlens-test-secret",
    "server_metadata_url": "http://localhost:1/.well-known/openid-configuration",
}


@pytest.mark.parametrize(
    "user,settings,shown",
    [
        ({"email": "ada@example.com", "email_verified": False}, {}, "has not verified the address ada@example.com"),
        ({"email": "ada@example.com"}, {"require_verified_email": True}, "did not say whether ada@example.com"),
        ({"email": "ada@example.com", "email_verified": True}, {}, None),
        ({"email": "ada@example.com"}, {}, None),
    ],
)
def test_the_sign_in_screen_refuses_an_unverified_address(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, user: dict, settings: dict, shown: str | None
) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60)
    at.secrets["auth"] = SIGN_IN
    at.secrets["gemmlens"] = {"roles": POLICY, **settings}
    at.user = {"is_logged_in": True, "name": "Ada", **user}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    signed_in = [c.value for c in at.sidebar.caption if c.value.startswith("Signed in as")]
    if shown is None:
        assert signed_in == ["Signed in as Ada \\<ada\u2060@example\\.com\\> (admin)"]
    else:
        assert signed_in == [] and any(shown in w.value.replace("\\", "").replace("\u2060", "") for w in at.warning)


def test_the_frame_looks_the_secrets_up_once_a_run_and_again_the_next_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """sign_in_configured answers from the look-up of the run's sign-in gate (Streamlit opens every secrets path
    again on each call while there is no file), and secrets that appear between runs count from the next run."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from profiling.app import auth

    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    looked = []
    real = auth._secrets_ask_for_sign_in
    monkeypatch.setattr(auth, "_secrets_ask_for_sign_in", lambda: looked.append(1) or real())
    app = str(Path(__file__).resolve().parents[1] / "app.py")
    at = AppTest.from_file(app, default_timeout=60)
    at.run()  # the frame, then the Overview, which asks again whether to offer the local user's tools
    assert not at.exception, [e.value for e in at.exception]
    assert len(looked) == 1 and any(b.label == "Look for a GPU again" for b in at.button)
    assert auth.sign_in_configured() is False and len(looked) == 2  # outside a run: looked up on each call
    at = AppTest.from_file(app, default_timeout=60)  # the secrets gain an [auth] table: the next run signs in
    at.secrets["auth"] = SIGN_IN
    at.secrets["gemmlens"] = {"roles": POLICY}
    at.user = {"is_logged_in": True, "name": "Ada", "email": "ada@example.com", "email_verified": True}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [c.value for c in at.sidebar.caption if c.value.startswith("Signed in as")] == [
        "Signed in as Ada \\<ada\u2060@example\\.com\\> (admin)"
    ]
