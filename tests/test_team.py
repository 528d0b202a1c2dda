"""A team server: roles checked where the writes happen (run store, GPU queue), trash, restore, purge, the
append-only audit log, and the migration of a store that predates them.

Store tests run on SQLite, and on PostgreSQL when GEMMLENS_TEST_PG_URL is set (`.ci/postgres.sh`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from test_store import bench_doc, db_url  # noqa: F401 - db_url is the SQLite / PostgreSQL fixture

from profiling import cli, usecases
from profiling.app.gpu_queue import GpuJobQueue, QueueFull
from profiling.errors import InvalidInput
from profiling.gpu.jobs import BenchSettings
from profiling.runs import convert, schema, store, values
from profiling.runs.store import RunStore, StoreError
from profiling.shape import Shape
from profiling.team.roles import SERVER, Identity, PermissionDenied, RolePolicy, check_author, local_identity

VIEWER = Identity("vera@example.com", "viewer", "Vera", signed_in=True)
RUNNER = Identity("rui@example.com", "runner", "Rui", signed_in=True)
ADMIN = Identity("ada@example.com", "admin", "Ada", signed_in=True)


@pytest.fixture
def team_store(db_url: str) -> Iterator[RunStore]:  # noqa: F811 - the imported fixture, used by name
    """A store as the app opens it with sign-in configured: every write must name who acts."""
    with RunStore(db_url, require_actor=True) as s:
        yield s


def a_run(label: str = "run", author: str = "", kernels: dict[str, float] | None = None):
    return convert.run_from_bench(bench_doc(kernels or {"v3": 3.0, "v5": 2.0}), label=label, author=author)


# --- roles ----------------------------------------------------------------------------------------


def test_policy_maps_address_then_domain_then_everyone() -> None:
    policy = RolePolicy.from_mapping({"ada@example.com": "admin", "@example.com": "runner", "*": "viewer"})
    assert policy.role_for("Ada@Example.com") == "admin"
    assert policy.role_for("rui@example.com") == "runner"
    assert policy.role_for("someone@elsewhere.org") == "viewer"
    assert RolePolicy.from_mapping({"example.com": "runner"}).identity("x@other.org") is None  # no role, no entry
    who = policy.identity("Ada@Example.com", "Ada")
    assert who == Identity("ada@example.com", "admin", "Ada", signed_in=True) and who.label == "Ada <ada@example.com>"
    with pytest.raises(InvalidInput, match=r"roles table: x@y.z = 'owner' is not a role; roles: viewer, runner, admin"):
        RolePolicy.from_mapping({"x@y.z": "owner"})


def test_local_user_without_sign_in_is_the_admin() -> None:
    me = local_identity()
    assert me.role == "admin" and not me.signed_in and me.id
    assert local_identity("  ann ").id == "ann"  # the command line's --author in single-user mode


# --- role checks where the writes happen: no page or command can go around them --------------------


def test_a_viewer_submitting_a_gpu_job_is_refused_with_a_message(tmp_path: Path) -> None:
    queue = GpuJobQueue(require_identity=True)
    fn = usecases.bench_job(["v3"], [Shape(256, 256, 256)], BenchSettings(repeats=2))
    with pytest.raises(PermissionDenied) as info:
        queue.submit("benchmark", VIEWER, fn)
    assert str(info.value) == (
        "vera@example.com is a viewer: running GPU jobs needs the runner or admin role (an admin of this server sets roles)"
    )
    with pytest.raises(PermissionDenied, match="sign in first: running GPU jobs"):
        queue.submit("benchmark", "a name typed anywhere", fn)  # a plain name is no identity on a team server
    assert queue.running() is None and queue.waiting() == []
    job = queue.submit("device query", SERVER, lambda job: 42)  # the app's own GPU probe may queue
    assert queue.wait(job.id, 10).result == 42


def test_a_runner_deleting_a_run_is_refused_and_nothing_changes(team_store: RunStore) -> None:
    run_id = team_store.save_run(a_run(), actor=RUNNER)
    for call in (team_store.delete_run, team_store.restore_run):
        with pytest.raises(PermissionDenied) as info:
            call(run_id, actor=RUNNER)
        assert str(info.value).startswith(
            "rui@example.com is a runner: deleting or restoring runs needs the admin role"
        )
    with pytest.raises(PermissionDenied, match="purging the trash needs the admin role"):
        team_store.purge_trash([run_id], actor=RUNNER)
    with pytest.raises(PermissionDenied, match="sign in first: deleting runs"):
        team_store.delete_run(run_id)  # no identity at all
    assert [r["id"] for r in team_store.list_runs()] == [run_id] and team_store.trash(actor=ADMIN) == []
    assert [e["action"] for e in team_store.audit_log(actor=ADMIN)] == ["save"]


def test_a_forged_author_is_refused(team_store: RunStore) -> None:
    with pytest.raises(PermissionDenied) as info:
        team_store.save_run(a_run(author="ada@example.com"), actor=RUNNER)
    assert (
        str(info.value)
        == "a run is saved under the identity that saves it: author 'ada@example.com' is not rui@example.com"
    )
    team_store.save_run(a_run(), actor=RUNNER)
    assert team_store.list_runs()[0]["author"] == "rui@example.com"  # the saver, not a typed name
    assert check_author(RUNNER, "Rui") == check_author(RUNNER, "") == "rui@example.com"


def test_viewers_may_not_save_or_import_and_writes_need_an_identity(team_store: RunStore) -> None:
    with pytest.raises(PermissionDenied, match="vera@example.com is a viewer: saving runs needs the runner or admin"):
        team_store.save_run(a_run(), actor=VIEWER)
    with pytest.raises(PermissionDenied, match="sign in first: saving runs"):
        team_store.save_run(a_run())
    with pytest.raises(PermissionDenied, match="sign in first: importing runs"):
        team_store.import_runs([a_run()])
    with pytest.raises(PermissionDenied, match="reading the audit log needs the admin role"):
        team_store.audit_log(actor=RUNNER)
    assert team_store.list_runs() == []


# --- trash, restore, purge and the audit log ---------------------------------------------------------


def test_trash_restore_purge_with_the_audit_log(team_store: RunStore) -> None:
    keep = team_store.save_run(a_run("keep"), actor=RUNNER)
    gone = team_store.save_run(a_run("gone", kernels={"v1": 9.0}), actor=ADMIN)
    imported = team_store.import_runs([a_run("from elsewhere", author="bo")], actor=RUNNER)[0]
    assert team_store.read_run(imported).author == "rui@example.com"

    assert team_store.delete_run(gone, actor=ADMIN) is True
    assert team_store.delete_run(gone, actor=ADMIN) is False  # already in the trash
    with pytest.raises(InvalidInput, match=f"no run {gone} in the run store .*it is in the trash"):
        team_store.read_run(gone)
    assert gone not in [r["id"] for r in team_store.list_runs()]
    assert {r["run_id"] for r in team_store.result_rows()} == {keep, imported}  # trashed results are not shown
    (trashed,) = team_store.trash(actor=ADMIN)
    assert (trashed["id"], trashed["label"], trashed["deleted_by"], trashed["n_results"]) == (
        gone,
        "gone",
        "ada@example.com",
        1,
    )

    assert team_store.restore_run(gone, actor=ADMIN) is True
    assert team_store.restore_run(gone, actor=ADMIN) is False  # not in the trash any more
    assert team_store.read_run(gone).results[0].kernel == "v1" and team_store.trash(actor=ADMIN) == []

    team_store.delete_run(gone, actor=ADMIN)
    assert team_store.purge_trash([gone, keep], actor=ADMIN) == [gone]  # a live run is never purged
    assert team_store.trash(actor=ADMIN) == [] and {r["id"] for r in team_store.list_runs()} == {keep, imported}
    with pytest.raises(InvalidInput, match=f"no run {gone} in the run store"):
        team_store.read_run(gone)
    with team_store.engine.connect() as conn:  # its results went with it
        assert conn.execute(sa.select(sa.func.count()).where(schema.ResultRow.run_id == gone)).scalar() == 0

    log = team_store.audit_log(actor=ADMIN)
    assert [(e["action"], e["run_id"], e["actor"]) for e in log] == [
        ("purge", gone, "ada@example.com"),
        ("delete", gone, "ada@example.com"),
        ("restore", gone, "ada@example.com"),
        ("delete", gone, "ada@example.com"),
        ("import", imported, "rui@example.com"),
        ("save", gone, "ada@example.com"),
        ("save", keep, "rui@example.com"),
    ]
    assert "exported with author 'bo'" in log[4]["detail"] and "'gone'" in log[0]["detail"]
    assert all(e["at_utc"].endswith("Z") for e in log)
    assert [e["action"] for e in team_store.audit_log(2, run_id=gone, actor=ADMIN)] == ["purge", "delete"]


def test_audit_rows_refuse_update_and_delete(team_store: RunStore) -> None:
    team_store.save_run(a_run(), actor=RUNNER)
    for statement in (
        sa.update(schema.AuditRow).values(actor="nobody"),
        sa.delete(schema.AuditRow),
    ):
        with pytest.raises(sa.exc.DBAPIError, match="the audit log is append-only"):
            with team_store.engine.begin() as conn:
                conn.execute(statement)
    if team_store.engine.dialect.name == "postgresql":
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), team_store.engine.begin() as conn:
            conn.exec_driver_sql("TRUNCATE audit")
    (entry,) = team_store.audit_log(actor=ADMIN)
    assert (entry["action"], entry["actor"]) == ("save", "rui@example.com")


def test_store_errors_name_the_audit_refusal_in_one_line(team_store: RunStore, monkeypatch) -> None:
    """A write whose audit entry fails leaves no run behind (the run and its entry share one transaction)."""

    def refuse(conn, *args, **kwargs):
        conn.exec_driver_sql("UPDATE audit SET actor = 'x'")  # the trigger refuses whenever a row exists
        raise AssertionError("unreachable with a row in the log")

    team_store.save_run(a_run("first"), actor=RUNNER)
    monkeypatch.setattr(store.audit, "record", refuse)
    with pytest.raises(StoreError) as info:
        team_store.save_run(a_run("second"), actor=RUNNER)
    assert "append-only" in str(info.value) and "\n" not in str(info.value)
    assert [r["label"] for r in team_store.list_runs()] == ["first"]


def test_without_sign_in_the_local_user_keeps_the_named_author(db_url: str) -> None:  # noqa: F811
    with RunStore(db_url) as s:
        run_id = s.save_run(a_run(author="ann"))
        assert s.read_run(run_id).author == "ann"
        assert s.delete_run(run_id) is True and s.restore_run(run_id) is True
        log = s.audit_log()
        assert [e["action"] for e in log] == ["restore", "delete", "save"]
        assert {e["actor"] for e in log} == {local_identity().id}


# --- migration ---------------------------------------------------------------------------------------


def test_a_v2_database_migrates_with_its_runs_intact(db_url: str) -> None:  # noqa: F811
    engine = store.make_engine(db_url)
    assert schema.migrate(engine, target=2) == 0
    with engine.begin() as conn:
        for label, author in (("typed author", "ann"), ("no author", "")):
            conn.execute(
                sa.text(
                    "INSERT INTO runs (label, author, notes, created_at, saved_at, kind, device_name, meta)"
                    " VALUES (:label, :author, '', :t, :t, 'bench', 'GPU', :meta)"
                ),
                {"label": label, "author": author, "t": values.to_utc("2025-06-01T00:00:00Z"), "meta": '{"a": 1}'},
            )
        ids = [i for (i,) in conn.exec_driver_sql("SELECT id FROM runs ORDER BY id")]
        for run_id in ids:
            conn.execute(
                sa.text(
                    "INSERT INTO results (run_id, position, kernel, m, n, k, status, time_median_ms, derived)"
                    " VALUES (:run, 0, 'v3', 64, 64, 64, 'ok', 1.5, :derived)"
                ),
                {"run": run_id, "derived": '{"ai": 2.0}'},
            )
    engine.dispose()

    with RunStore(db_url, require_actor=True) as s:
        with s.engine.connect() as conn:
            assert schema.schema_version(conn) == schema.SCHEMA_VERSION
        typed, untyped = s.read_runs(ids)
        assert (typed.label, typed.author, typed.meta) == ("typed author", "ann", {"a": 1})
        assert (untyped.label, untyped.author) == ("no author", "unknown")  # older runs: author unknown
        assert [(r.kernel, r.time_median_ms, r.derived) for r in typed.results] == [("v3", 1.5, {"ai": 2.0})]
        assert s.trash(actor=ADMIN) == [] and s.audit_log(actor=ADMIN) == []  # no trash, an empty log
        assert s.delete_run(ids[0], actor=ADMIN) and [t["id"] for t in s.trash(actor=ADMIN)] == [ids[0]]


# --- the GPU queue: whose job runs, round-robin between users, a cap per user -------------------------


def test_queue_is_round_robin_between_users_and_caps_each_user() -> None:
    queue = GpuJobQueue(max_queued=3, require_identity=True)
    gate, order = threading.Event(), []

    def work(job):
        gate.wait(10)
        order.append(job.label)

    hold = queue.submit("hold", ADMIN, work)
    deadline = time.monotonic() + 5
    while queue.running() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    a = [queue.submit(f"rui{i}", RUNNER, work) for i in range(3)]
    with pytest.raises(QueueFull, match="rui@example.com already has 3 jobs waiting for the GPU"):
        queue.submit("rui3", RUNNER, work)
    b = [queue.submit(f"ada{i}", ADMIN, work) for i in range(2)]
    assert queue.running().owner == "ada@example.com"  # whose job holds the GPU
    assert [j.label for j in queue.waiting()] == ["rui0", "ada0", "rui1", "ada1", "rui2"]
    assert [queue.position(j.id) for j in a + b] == [1, 3, 5, 2, 4]
    assert queue.cancel(a[1].id)
    assert [j.label for j in queue.waiting()] == ["rui0", "ada0", "rui2", "ada1"]
    gate.set()
    for job in a + b:
        queue.wait(job.id, 10)
    assert order == ["hold", "rui0", "ada0", "rui2", "ada1"] and hold.state == "done"


# --- `python -m profiling audit` -----------------------------------------------------------------------


def test_audit_command_prints_the_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with RunStore(url, require_actor=True) as s:
        run_id = s.save_run(a_run("monday"), actor=RUNNER)
        s.delete_run(run_id, actor=ADMIN)
        s.restore_run(run_id, actor=ADMIN)
    assert cli.main(["audit", "--db", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1:3] for line in lines] == [
        ["ada@example.com", "restore"],
        ["ada@example.com", "delete"],
        ["rui@example.com", "save"],
    ]
    assert f"run {run_id}" in lines[0] and "'monday'" in lines[2]
    assert cli.main(["audit", "--db", url, "--json", "--limit", "1"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert (entry["action"], entry["actor"], entry["run_id"]) == ("restore", "ada@example.com", run_id)
    assert cli.main(["audit", "--db", f"sqlite:///{tmp_path / 'none.sqlite'}"]) == 2
    assert "no run store at" in capsys.readouterr().err
