"""The app on hostile input: every file of the bad-input corpus (tests/fixtures/refused/) on the Reports and Review
pages gives no exception and one visible error; the session's upload total; the Profile page's report folders."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from profiling import usecases
from profiling.app import state

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "fixtures" / "refused"
CORPUS = sorted(p for p in HOSTILE.iterdir() if p.is_file() and p.name != "README.md")
NCU = ROOT / "tests" / "fixtures" / "ncu"


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No GPU work, no ncu, a fresh run store in tmp_path, and no cached state from earlier tests."""
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    monkeypatch.setattr("profiling.nsight.tools.find_ncu", lambda *a, **k: None)
    st.cache_data.clear()
    st.cache_resource.clear()


def page(name: str) -> AppTest:
    """The frame app.py showing pages/<name> (Review with its Add runs expander open: drawn into only while open)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["add_runs"] = True
    at.run()
    at.switch_page(f"pages/{name}").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def one_line_error(at: AppTest) -> str:
    """The page's one error box, checked: no exception, one line, user text escaped."""
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1, [e.value for e in at.error]
    message = at.error[0].value
    assert "\n" not in message and "Traceback" not in message
    assert re.search(r"(?<!\\)[<>`]", message) is None  # no raw HTML or code from the file
    return message


def test_the_corpus_is_there() -> None:
    names = {p.name for p in CORPUS}
    assert len(CORPUS) >= 15 and {"json_deep_nesting.json", "csv_registers_1e30.csv"} <= names


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_reports_page_refuses_each_bad_file_in_one_line(path: Path) -> None:
    at = page("6_Reports.py")
    at.file_uploader(key="report_files").set_value([(path.name, path.read_bytes(), "application/octet-stream")]).run()
    assert not at.exception, [e.value for e in at.exception]
    if not at.error:  # it reads as a report (a real capture with one cell edited): saving it must refuse
        for tab in ("Findings", "Occupancy", "Roofline"):  # each tab is drawn only while open
            at.session_state["reports_tab"] = tab
            at.run()
            assert not at.exception, (tab, [e.value for e in at.exception])
        next(b for b in at.button if b.label == "Save as runs").click().run()
        message = one_line_error(at)
        for other in ("4_Roofline.py", "5_Occupancy.py"):  # the pages that show uploads too
            at.switch_page(f"pages/{other}").run()
            assert not at.exception, (other, [e.value for e in at.exception])
    else:
        message = one_line_error(at)
    assert path.name in message.replace("\\", "") or "result 1" in message


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_review_import_refuses_each_bad_file_in_one_line(path: Path) -> None:
    at = page("7_Review.py")
    at.file_uploader(key="import_json").set_value((path.name, path.read_bytes(), "application/json")).run()
    next(b for b in at.button if b.label == "Import").click().run()
    one_line_error(at)
    assert any("No saved runs yet" in i.value for i in at.info)  # nothing was imported


def test_reports_page_names_the_field_of_a_number_no_store_holds() -> None:
    path = HOSTILE / "csv_registers_1e30.csv"
    at = page("6_Reports.py")
    at.file_uploader(key="report_files").set_value([(path.name, path.read_bytes(), "text/csv")]).run()
    next(b for b in at.button if b.label == "Save as runs").click().run()
    assert "registers 1e\\+30 is out of range" in one_line_error(at)


def test_uploads_past_the_session_total_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = (NCU / "raw.csv").read_bytes()
    monkeypatch.setattr(usecases, "MAX_SESSION_UPLOAD_BYTES", len(raw) * 2 + 1)
    at = page("6_Reports.py")
    files = [(f"r{i}.csv", raw + b"\n" * i, "text/csv") for i in range(3)]  # distinct contents
    at.file_uploader(key="report_files").set_value(files).run()
    message = one_line_error(at)
    assert message.replace("\\", "").startswith("r2.csv was not read") and "in all" in message
    assert set(at.dataframe[0].value["source"]) == {"r0.csv", "r1.csv"}
    at.file_uploader(key="report_files").set_value(files[2:]).run()  # room again once others are removed
    assert not at.exception and not at.error
    assert set(at.dataframe[0].value["source"]) == {"r2.csv"}


# --- the Profile page's report folders ------------------------------------------------------------------------


def test_profile_folders_are_removed_once_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state.st, "session_state", {})
    first = state.new_profile_folder()
    (first / "profile.ncu-rep").write_bytes(b"report")
    state.set_live_profile(SimpleNamespace(report_path=first / "profile.ncu-rep"))  # type: ignore[arg-type]
    second = state.new_profile_folder()
    assert first.is_dir() and second.is_dir()  # the shown report stays while the next one runs
    state.set_live_profile(SimpleNamespace(report_path=second / "profile.ncu-rep"))  # type: ignore[arg-type]
    assert not first.exists() and second.is_dir()
    third = state.new_profile_folder()  # a profile that never finished: replaced by the next one
    fourth = state.new_profile_folder()
    assert not third.exists() and second.is_dir() and fourth.is_dir()
    state.st.session_state.clear()  # the session ends: its state is collected
    import gc

    gc.collect()
    assert not second.exists() and not fourth.exists()
