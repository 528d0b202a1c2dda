"""Comments on runs and launches: kept in the run store with author and time (SQLite), added only by roles that write,
migrated into existing stores, shown on the Review page and in the HTML review, user text escaped everywhere."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
import sqlalchemy as sa
import streamlit as st
from streamlit.testing.v1 import AppTest
from test_store import bench_doc

from profiling.app import bundles
from profiling.app.comments_view import comment_line
from profiling.charts import review_html
from profiling.errors import InvalidInput
from profiling.runs import convert, schema
from profiling.runs.store import RunStore, StoreError, make_engine
from profiling.team.roles import Identity, PermissionDenied

ROOT = Path(__file__).resolve().parent.parent
RUNNER = Identity("rui@example.com", "runner", "Rui", signed_in=True)
VIEWER = Identity("vera@example.com", "viewer", "Vera", signed_in=True)
HOSTILE = "<script>alert(1)</script> **bold** [x](http://evil.example)"


def a_run(label: str = "run"):
    return convert.run_from_bench(bench_doc({"v3": 3.0, "v5": 2.0}), label=label)


@pytest.fixture
def store(tmp_path: Path):
    with RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}", require_actor=True) as s:
        yield s


def test_a_comment_keeps_its_author_time_and_launch(store: RunStore) -> None:
    run_id = store.save_run(a_run(), actor=RUNNER)
    launch = store.read_run(run_id).results[1]
    name = f"{launch.kernel} {launch.size}"
    assert name == "v5 4096x4096x4096"
    before = store.revision()
    first = store.add_comment(run_id, "  v5 is the one to keep  ", actor=RUNNER)
    second = store.add_comment(run_id, "bank conflicts again", launch=name, actor=RUNNER)
    said = store.comments([run_id])
    assert [(c["id"], c["author"], c["text"], c["launch"]) for c in said] == [
        (first, RUNNER.id, "v5 is the one to keep", ""),
        (second, RUNNER.id, "bank conflicts again", name),
    ]
    at = dt.datetime.fromisoformat(said[0]["at"].replace("Z", "+00:00"))
    assert abs(at - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=1)
    assert store.revision() > before  # cached reads of the store see the new comments
    log = store.audit_log(actor=Identity("ada@example.com", "admin"))
    assert [(e["action"], e["actor"], e["detail"]) for e in log[:2]] == [
        ("comment", RUNNER.id, f"comment {second} on {name}"),
        ("comment", RUNNER.id, f"comment {first}"),
    ]


def test_bad_comments_are_refused_in_one_line(store: RunStore) -> None:
    run_id = store.save_run(a_run(), actor=RUNNER)
    cases = {
        "a comment needs 1 to 5,000 characters of text": dict(text="   "),
        "a comment needs 1 to 5,000 characters": dict(text="x" * 5001),
        f"run {run_id} has no launch 'v9 1x1x1' to comment on": dict(text="hi", launch="v9 1x1x1"),
        "no run 999 in the run store": dict(text="hi", run_id=999),
    }
    for message, kwargs in cases.items():
        with pytest.raises(InvalidInput) as info:
            store.add_comment(kwargs.pop("run_id", run_id), actor=RUNNER, **kwargs)
        assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert store.comments([run_id]) == []


def test_viewers_and_signed_out_readers_may_not_comment(store: RunStore) -> None:
    run_id = store.save_run(a_run(), actor=RUNNER)
    with pytest.raises(PermissionDenied, match="vera@example.com is a viewer: commenting on runs needs the runner or"):
        store.add_comment(run_id, "me too", actor=VIEWER)
    with pytest.raises(PermissionDenied, match="sign in first: commenting on runs"):
        store.add_comment(run_id, "me too")
    assert store.comments([run_id]) == []


def test_a_read_only_store_says_why_no_comment_is_saved(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with RunStore(url) as s:
        run_id = s.save_run(a_run())
    with RunStore(url, create=False) as s, pytest.raises(StoreError, match="cannot save the comment: the run store is"):
        s.add_comment(run_id, "hi")


def test_a_store_from_before_comments_is_migrated_and_purging_removes_them(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    engine = make_engine(url)
    schema.migrate(engine, target=schema.SCHEMA_VERSION - 1)
    assert "comments" not in sa.inspect(engine).get_table_names()
    with engine.begin() as conn:  # a run saved before comments existed
        conn.execute(
            sa.text(
                "INSERT INTO runs (label, author, notes, created_at, saved_at, kind, device_name)"
                " VALUES ('old run', 'ann', '', :t, :t, 'bench', 'GPU')"
            ),
            {"t": dt.datetime(2026, 1, 2)},
        )
    engine.dispose()
    with RunStore(url) as s:  # opening migrates it
        (old,) = [r["id"] for r in s.list_runs()]
        assert s.comments([old]) == []
        s.add_comment(old, "kept")
        assert [c["text"] for c in s.comments([old])] == ["kept"]
        assert s.delete_run(old) and [c["text"] for c in s.comments([old])] == ["kept"]  # the trash keeps them
        assert s.purge_trash([old]) == [old]
        assert s.comments([old]) == []
        with s.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM comments").scalar() == 0


def test_comments_are_escaped_on_the_page_and_in_the_html_review() -> None:
    said = [
        {
            "id": 1,
            "run_id": 3,
            "launch": "v4 4096x4096x4096",
            "author": "rui@example.com",
            "at": "2026-11-25T17:30:00Z",
            "text": HOSTILE,
        },
        {"id": 2, "run_id": 4, "launch": "", "author": "o<b>li", "at": "2026-11-25T17:31:00Z", "text": "ok"},
    ]
    line = comment_line(said[0])
    assert "<script>" not in line and "**bold**" not in line and "](http" not in line and "http:" not in line
    assert line.replace("\\", "").replace("\u2060", "") == (
        f"**rui@example.com**, 2026-11-25 17:30 UTC on v4 4096x4096x4096: {HOSTILE}"
    )
    base, cand = a_run("base"), a_run("cand")
    page = review_html.report_html(base, [cand], comments=said)
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<h2>Comments</h2>" in page and "o&lt;b&gt;li" in page
    assert "<h2>Comments</h2>" not in review_html.report_html(base, [cand])


@pytest.fixture
def no_gpu(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    with RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}") as s:
        return s.import_runs(bundles.bundled_runs(next(b for b in bundles.discover_bundles())))


def opened_run(run_id: int) -> AppTest:
    """The Review page's Open tab showing run `run_id`, as its link opens it."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/7_Review.py")
    at.query_params = {"tab": "open-delete", "open": str(run_id)}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_review_page_shows_and_adds_comments(no_gpu: list[int]) -> None:
    run_id = no_gpu[0]
    at = opened_run(run_id)
    assert f"Comments on run #{run_id}" in [s.value for s in at.subheader]
    assert any(c.value.startswith("No comments on this run yet") for c in at.caption)
    launches = at.selectbox(key="c_launch").options
    at.selectbox(key="c_launch").set_value(launches[1])
    at.text_area(key="c_text").set_value(HOSTILE)
    next(b for b in at.button if b.label == "Add comment").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [m.value for m in at.markdown if "UTC on" in m.value]
    assert len(shown) == 1
    plain = shown[0].replace("\\", "").replace("\u2060", "")
    assert plain.endswith(f"UTC on {launches[1]}: {HOSTILE}")
    assert "<script>" not in shown[0]


def test_a_comment_being_written_survives_a_look_at_another_tab(no_gpu: list[int]) -> None:
    """The Open tab is drawn only while open; the draft (its launch and its text, sent when the box loses focus)
    is kept while the reader looks at Compare, and the comment is added from there afterwards."""
    run_id = no_gpu[0]
    at = opened_run(run_id)
    launch = at.selectbox(key="c_launch").options[1]
    at.selectbox(key="c_launch").set_value(launch)
    at.text_area(key="c_text").input("half written").run()
    at.session_state["review_tab"] = "Compare"
    at.run()
    assert not at.exception and not at.text_area and at.query_params["open"] == str(run_id)
    at.session_state["review_tab"] = "Open / delete"
    at.run()
    assert at.text_area(key="c_text").value == "half written" and at.selectbox(key="c_launch").value == launch
    next(b for b in at.button if b.label == "Add comment").click().run()
    assert not at.exception, [e.value for e in at.exception]
    with RunStore(f"sqlite:///{os.environ['GEMMLENS_DB_PATH']}") as store:
        assert [(c["text"], c["launch"]) for c in store.comments([run_id])] == [("half written", launch)]
    assert at.text_area(key="c_text").value == ""  # a new draft after adding
