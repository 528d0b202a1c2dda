"""A link to what you see: each page's selection round-trips through the URL (profiling.app.permalink).

Each page test opens a fresh session with a link's query string, as a colleague's browser would, and checks the
selection the reader sees (the widgets' values, the open tab), then changes the selection and checks the URL."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from profiling.app import bundles, permalink
from profiling.runs.comparison import DEFAULT_THRESHOLD_PCT
from profiling.runs.store import RunStore

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = next(b for b in bundles.discover_bundles() if b.name == "h200-2026-11-22")


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()


def open_link(page: str, query: dict[str, str | list[str]]) -> AppTest:
    """A fresh session that opens `page` with the link's query string (the frame, then the page)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params = dict(query)
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def notes(at: AppTest) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning if "link" in w.value]


# --- the format, tested directly ----------------------------------------------------------------------------------


def test_decode_keeps_good_values_and_names_the_bad_ones() -> None:
    assert permalink.decode("baseline", ["3"], [1, 2, 3], int) == (3, [])
    assert permalink.decode("baseline", ["x"], [1, 2, 3], int) == (None, ["x"])
    assert permalink.decode("baseline", ["9"], [1, 2, 3], int) == (None, ["9"])
    assert permalink.decode("baseline", ["1", "2"], [1, 2, 3], int) == (2, [])  # the last one counts
    assert permalink.decode("c", ["2", "9", "2", "1"], [1, 2, 3], int, multi=True) == ([2, 1], ["9"])
    assert permalink.decode("since", ["anything"], None) == ("anything", [])
    assert permalink.decode("m", ["16385"], range(1, 16385), int) == (None, ["16385"])
    assert permalink.decode("t", ["7.5"], None, permalink.parse_percent) == (7.5, [])
    assert permalink.decode("t", ["101"], None, permalink.parse_percent) == (None, ["101"])
    assert permalink.decode("x", ["yes", "off"], None, permalink.parse_bool, multi=True) == ([True, False], [])


def test_values_and_tabs_as_url_text() -> None:
    assert [permalink.encode_value(v) for v in (True, False, 5.0, 7.5, 12, "v4")] == ["1", "0", "5", "7.5", "12", "v4"]
    assert permalink.slug("Open / delete") == "open-delete"
    assert permalink.slug("Compare side by side") == "compare-side-by-side"
    assert permalink.unknown("review", ["baseline", "bundle", "utm_source"]) == ["utm_source"]


def test_a_bad_value_is_quoted_escaped_in_one_line() -> None:
    note = permalink.bad_note("baseline", ["[x](http://evil.example)\nnext"])
    assert "\n" not in note and "](" not in note and "\\[x\\]" in note
    assert note.endswith("showing the default instead.")
    long = permalink.bad_note("kernel", ["a" * 500])
    assert len(long) < 250


# --- each page, opened from a link --------------------------------------------------------------------------------


@pytest.fixture
def stored(tmp_path: Path) -> list[int]:
    """The bundled measurements saved as runs (three, ids 1..3)."""
    with RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}") as store:
        return store.import_runs(bundles.bundled_runs(BUNDLE))


def test_review_link_round_trips(stored: list[int]) -> None:
    first, second, third = stored
    link = {
        "tab": "history",
        "baseline": str(third),
        "candidates": [str(first), "99"],
        "threshold": "7.5",
        "cross_gpu": "1",
        "open": str(second),
        "history_kernel": "v4",
        "metric": "tflops",
    }
    at = open_link("pages/7_Review.py", link)
    assert at.session_state["review_tab"] == "History"
    assert at.selectbox(key="hist_kernel").value == "v4" and at.selectbox(key="hist_metric").value == "tflops"
    # Compare is not drawn on History: its choices wait in the session and stay in the address
    assert not [w for w in at.selectbox if w.key == "baseline"]
    assert at.session_state["baseline"] == third and at.session_state["candidates"] == [first]
    assert at.session_state["open_run"] == second and not [w for w in at.selectbox if w.key == "open_run"]
    # run 99 is not in the store: one note, the rest of the link stands
    assert notes(at) == [
        "This link's candidates “99” is not among the choices here (deleted, renamed, or only in the "
        "sender's session): showing the default instead."
    ]
    assert at.query_params["candidates"] == str(first)  # the stale id is gone from the address
    assert at.query_params["baseline"] == str(third) and at.query_params["threshold"] == "7.5"
    assert at.query_params["cross_gpu"] == "1" and at.query_params["tab"] == "history"
    at.session_state["review_tab"] = "Compare"
    at.run()
    assert at.selectbox(key="baseline").value == third
    assert at.multiselect(key="candidates").value == [first]
    assert at.number_input(key="threshold").value == 7.5
    assert at.checkbox(key="cross_gpu").value is True
    assert "tab" not in at.query_params  # Compare is the default
    # The reader's changes go to the address bar, and a default value leaves it.
    at.selectbox(key="baseline").set_value(second).run()
    at.number_input(key="threshold").set_value(DEFAULT_THRESHOLD_PCT).run()
    at.session_state["review_tab"] = "By device"
    at.run()
    assert at.query_params["baseline"] == str(second) and at.query_params["tab"] == "by-device"
    assert "threshold" not in at.query_params
    assert at.session_state["baseline"] == second  # the old value in the URL did not win back
    # that address, opened afresh, shows the same
    again = open_link("pages/7_Review.py", at.query_params)
    assert again.session_state["review_tab"] == "By device"
    assert again.session_state["baseline"] == second
    assert again.session_state.get("candidates") == at.session_state["candidates"]
    again.session_state["review_tab"] = "Compare"
    again.run()
    assert again.selectbox(key="baseline").value == second
    assert again.multiselect(key="candidates").value == at.session_state["candidates"]
    # Open, drawn only while open, shows the run the link named on every section before
    assert again.query_params["open"] == str(second)
    again.session_state["review_tab"] = "Open / delete"
    again.run()
    assert again.selectbox(key="open_run").value == second and again.query_params["open"] == str(second)


def test_review_history_tab_is_drawn_only_when_open_and_keeps_its_choice(stored: list[int]) -> None:
    at = open_link("pages/7_Review.py", {})
    assert at.session_state["review_tab"] == "Compare" and not [w for w in at.selectbox if w.key == "hist_metric"]
    at.session_state["review_tab"] = "History"
    at.run()
    at.selectbox(key="hist_metric").set_value("tflops").run()
    assert at.query_params["metric"] == "tflops" and at.get("plotly_chart")
    at.session_state["review_tab"] = "Compare"
    at.run()
    assert not [w for w in at.selectbox if w.key == "hist_metric"] and "metric" not in at.query_params
    at.session_state["review_tab"] = "History"
    at.run()
    assert not at.exception and at.selectbox(key="hist_metric").value == "tflops"


def test_review_filters_and_a_bad_link(stored: list[int]) -> None:
    at = open_link("pages/7_Review.py", {"kernel": "cublas", "baseline": "abc", "tab": "nope", "utm": "x"})
    assert at.text_input(key="f_kernel").value == "cublas"
    shown = notes(at)
    assert shown[0].startswith("This link has parameters this page does not know (“utm”)")
    assert "tab “nope”" in shown[1] and "baseline “abc”" in shown[2] and len(shown) == 3
    assert at.session_state["review_tab"] == "Compare"
    assert "utm" not in at.query_params and at.query_params["kernel"] == "cublas"


def test_the_bundle_in_a_link_is_the_sidebar_choice() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params = {"bundle": "h100-2026-11-22"}
    at.run()
    assert at.sidebar.selectbox(key="bundle").value == "h100-2026-11-22"
    assert at.warning[0].value.replace("\\", "") == (
        "No GPU found; showing bundled measurements from NVIDIA H100 80GB HBM3 on 2026-11-22."
    )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params = {"bundle": "h800-2031-01-01"}
    at.run()
    newest = bundles.discover_bundles()[0].name
    assert at.sidebar.selectbox(key="bundle").value == newest  # as without a link
    assert any("bundle “h800-2031-01-01” is not among the choices" in n for n in notes(at))


def test_reports_link_round_trips() -> None:
    bundle = BUNDLE.name  # one with ncu captures
    at = open_link("pages/6_Reports.py", {"bundle": bundle, "tab": "compare-side-by-side"})
    assert at.session_state["reports_tab"] == "Compare side by side"
    chosen = list(at.multiselect[0].options[2:5])
    at = open_link("pages/6_Reports.py", {"bundle": bundle, "tab": "compare-side-by-side", "launches": chosen})
    assert at.session_state["reports_tab"] == "Compare side by side"
    assert at.multiselect[0].value == chosen
    compared = at.dataframe[-1].value
    assert list(compared.columns) == chosen  # one column per chosen launch, in the link's order
    at.multiselect[0].set_value(chosen[:1]).run()
    assert at.query_params["launches"] == chosen[0]
    at.session_state["reports_tab"] = "Findings"
    at.run()
    assert at.query_params["tab"] == "findings"
    assert at.query_params["launches"] == chosen[0]  # the link keeps the comparison from another tab
    at.session_state["reports_tab"] = "Roofline"
    at.run()
    assert "tab" not in at.query_params  # the first tab is the default


def test_why_link_round_trips() -> None:
    plain = open_link("pages/8_Why.py", {})
    # Not the default data, and one with at least three launches: the bundled H100 ladder capture.
    source = next(o for o in plain.selectbox(key="why_source").options[1:] if o.startswith("bundled"))
    labels = open_link("pages/8_Why.py", {"data": source}).multiselect(key=f"stall_pick:{source}").options
    link = {
        "data": source,
        "launches": labels[1:3],
        "scale": "cycles",
        "kernel": labels[2],
        "step": "any two launches",
        "base": labels[0],
        "cand": labels[-1],
    }
    # A link without a tab opens the first section; the closed sections' choices stay in it.
    at = open_link("pages/8_Why.py", link)
    assert at.selectbox(key="why_source").value == source
    assert at.multiselect(key=f"stall_pick:{source}").value == labels[1:3]
    assert at.radio(key="stall_scale").value == "cycles"
    assert not [w for w in at.selectbox if w.key and w.key.startswith(("src_kernel:", "step:"))]
    assert dict(at.query_params) == link
    at.session_state["why_tab"] = "Source and SASS hot spots"
    at.run()
    assert at.selectbox(key=f"src_kernel:{source}").value == labels[2]
    at.session_state["why_tab"] = "Explain a step"
    at.run()
    assert at.selectbox(key=f"step:{source}").value == "any two launches"
    assert at.selectbox(key="x_base").value == labels[0] and at.selectbox(key="x_cand").value == labels[-1]
    assert at.success[0].value.replace("\\", "").startswith(f"{labels[0]} -> {labels[-1]}: time ")
    assert dict(at.query_params) == {**link, "tab": "explain-a-step"}
    steps = at.selectbox(key=f"step:{source}")
    steps.set_value(steps.options[0]).run()
    assert "base" not in at.query_params and at.query_params["step"] == steps.options[0]
    at.session_state["why_tab"] = "Warp\\-stall breakdown"  # the default tab: it leaves the link
    at.run()
    at.radio(key="stall_scale").set_value("share").run()
    assert "scale" not in at.query_params and "tab" not in at.query_params  # back at the defaults
    assert at.query_params["step"] == steps.options[0] and at.query_params["kernel"] == labels[2]
    again = open_link("pages/8_Why.py", {**at.query_params, "tab": "explain-a-step"})
    assert again.selectbox(key=f"step:{source}").value == steps.options[0]


def test_indexing_link_round_trips() -> None:
    link = {
        "kernel": "v3",
        "beside": "v1",
        "m": "2048",
        "n": "512",
        "k": "256",
        "bx": "3",
        "by": "1",
        "warp": "2",
        "kstep": "5",
        "instruction": "1",
    }
    at = open_link("pages/9_Indexing.py", link)
    assert at.selectbox(key="idx_kernel").value == "v3"
    assert at.selectbox(key="idx_other_v3").value == "v1"
    assert [at.number_input(key=f"idx_{d}").value for d in "mnk"] == [2048, 512, 256]
    scope = "v3_2048x512x256"
    assert at.number_input(key=f"idx_bx_{scope}").value == 3
    assert at.number_input(key=f"idx_by_{scope}").value == 1
    assert at.number_input(key=f"idx_warp_{scope}").value == 2
    assert at.number_input(key=f"idx_step_{scope}").value == 5
    # the matrix view opens (the link names no tab); the instruction waits in Lane by lane, and stays in the link
    assert at.session_state["idx_tab"] == "Matrix view" and not [s for s in at.selectbox if s.key == "idx_ins_v3_v1_5"]
    assert dict(at.query_params) == link
    at.session_state["idx_tab"] = "Lane by lane"
    at.run()
    assert at.selectbox(key="idx_ins_v3_v1_5").value == 1
    assert dict(at.query_params) == {**link, "tab": "lane-by-lane"}
    # the instruction chosen there is kept while another tab is open, and a link with the tab opens it
    at.selectbox(key="idx_ins_v3_v1_5").set_value(2).run()
    at.session_state["idx_tab"] = "Whole launch"
    at.run()
    assert at.query_params["instruction"] == "2" and at.query_params["tab"] == "whole-launch"
    again = open_link("pages/9_Indexing.py", {**link, "tab": "lane-by-lane"})
    assert again.selectbox(key="idx_ins_v3_v1_5").value == 1 and again.session_state["idx_tab"] == "Lane by lane"
    # a block beyond the grid of this shape: a note, and block 0
    at = open_link("pages/9_Indexing.py", {**link, "bx": "4096"})
    assert at.number_input(key=f"idx_bx_{scope}").value == 0
    assert any("bx “4096”" in n for n in notes(at))
    at.number_input(key="idx_m").set_value(1024).run()
    assert "m" not in at.query_params and at.query_params["n"] == "512"


def test_a_page_publishes_its_link_in_one_message(monkeypatch) -> None:
    """The parameters a run sets go to the browser together (each set alone sent the whole query string again), and
    the link is the same: the one each parameter set in turn made."""
    from streamlit.runtime.state.query_params import QueryParams

    sent: list[dict] = []
    real = QueryParams._send_query_param_msg
    monkeypatch.setattr(QueryParams, "_send_query_param_msg", lambda self: sent.append(dict(self)) or real(self))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/8_Why.py")
    sent.clear()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    source = at.selectbox(key="why_source").value
    launches = at.multiselect(key=f"stall_pick:{source}").options[:1]
    at.session_state["why_tab"] = "Explain a step"
    at.session_state[f"stall_pick:{source}"] = launches
    sent.clear()
    at.run()
    step = at.selectbox(key=f"step:{source}").value
    want = {"data": source, "tab": "explain-a-step", "launches": launches[0], "step": step}  # one launch: one value
    assert sent == [want] == [dict(at.query_params)]
