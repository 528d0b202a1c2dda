"""The Why page (AppTest, no GPU) and its logic (profiling.app.why, profiling.charts.stalls) on the REAL bundled
H100 full-set captures: every ladder step shows a stall chart, hot lines and a summary derived from the data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from profiling.analysis import explain as X
from profiling.app import bundles, cache, why, why_view
from profiling.charts.stalls import REASON_COLORS, stall_figure
from profiling.nsight import load as L
from profiling.nsight import source_load as SL

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "results" / "h100-2026-11-22"
WHY_PAGE = "pages/8_Why.py"


def captured_steps() -> list[tuple[str, str]]:
    """The catalog's ladder steps that the bundled H100 capture holds: the Hopper kernels and v8-splitk
    are newer."""
    newer = {
        "wgmma-tma",
        "wgmma-pingpong",
        "wgmma-tma-store",
        "wgmma-persistent",
        "wgmma-cluster",
        "wgmma-streamk",
        "wgmma-streamk-cluster",
        "v8-splitk",
        "v9-splitk",
        "v9-clusterk",
    }
    return [step for step in X.ladder_steps() if not newer & set(step)]


@pytest.fixture(scope="module")
def data() -> why.WhyData:
    captures = {raw.name: (raw, cs, s) for raw, cs, s in why.bundled_captures(H100)}
    if "ncu_why_1024_raw.csv" not in captures:
        pytest.skip("the bundled H100 full-set capture is not in results/")
    return why.load_capture("h100 1024", *captures["ncu_why_1024_raw.csv"])


def test_bundled_captures_pair_raw_and_source_pages() -> None:
    found = why.bundled_captures(H100)
    # the largest size first: the page's default, as the explain command's (its default is the largest size)
    assert [raw.name for raw, _, _ in found] == ["ncu_why_4096_raw.csv", "ncu_why_1024_raw.csv"]
    assert all(cs.name.endswith("_cuda_sass.csv.gz") and s.name.endswith("_sass.csv.gz") for _, cs, s in found)
    # the quick-set ladder captures of the same folder carry no stall metrics: not offered
    assert why.bundled_captures(ROOT / "results" / "h200-2026-11-22") == []


def test_every_launch_is_paired_with_its_source_section(data: why.WhyData) -> None:
    labels = data.labels()
    assert len(labels) == 17 and all(launch is not None for launch in labels.values())
    for label in labels:
        kernel = data.kernel_source(label)
        assert kernel is not None and kernel.total_samples > 0, label
        if data.catalog_id(label) not in ("cublas", "cublas-hgemm"):
            assert kernel.catalog_id == data.catalog_id(label) and kernel.lines
    assert why.ladder_labels(data)[:3] == ["v1", "v1-coalesced", "v2"] and "tiled-8" not in why.ladder_labels(data)
    assert why.ladder_pairs(data) == captured_steps()


def test_stall_frame_and_figure(data: why.WhyData) -> None:
    labels = why.ladder_labels(data)
    frame = why.stall_frame(data, labels)
    assert list(dict.fromkeys(frame["label"])) == labels
    fig = stall_figure(frame, "cycles", kernel_ids=why.kernel_ids(data, labels))
    bars = [t for t in fig.data if t.type == "bar"]
    assert {t.name for t in bars} <= set(REASON_COLORS) and len(bars) >= 8
    assert fig.layout.xaxis.title.text == "warp cycles per issued instruction"
    v1 = next(t for t in bars if t.name == "lg_throttle").x[0]
    assert v1 == pytest.approx(frame[(frame.label == "v1") & (frame.reason == "lg_throttle")]["value"].iloc[0])
    totals = next(t for t in fig.data if t.type == "scatter")
    assert totals.text[0].strip() == f"{frame[frame.label == 'v1']['value'].sum():,.1f}"
    share = stall_figure(frame, "share")
    assert share.layout.xaxis.title.text == "% of the launch's stall cycles"
    for label in labels:  # every bar adds up to 100 % in the share view
        total = sum(t.x[labels.index(label)] for t in share.data if t.type == "bar")
        assert total == pytest.approx(100.0, abs=1.0)
    assert "meaning" in bars[0].hovertemplate or "waiting" in bars[0].hovertemplate


def test_the_legend_of_two_launches_has_the_whole_bottom_margin(data: why.WhyData) -> None:
    # plotly caps a horizontal legend at half the figure's height unless told otherwise: with two bars the figure is
    # short, and the legend of a dozen reasons scrolled in the browser.
    frame = why.stall_frame(data, why.ladder_labels(data)[:2])
    fig = stall_figure(frame, "share")
    reasons = len([t for t in fig.data if t.type == "bar"])
    rows = -(-reasons // 2)  # two reasons a row (entrywidth 0.45 of the plot)
    assert fig.layout.legend.entrywidth == 0.45 and fig.layout.legend.entrywidthmode == "fraction"
    assert fig.layout.margin.b == 80 + 24 * rows and fig.layout.legend.maxheight == fig.layout.margin.b
    assert fig.layout.height == 30 + 26 * 2 + 50 + fig.layout.margin.b


def test_the_stall_view_is_one_shared_figure_per_capture_launches_and_scale(data: why.WhyData) -> None:
    labels = tuple(why.ladder_labels(data))
    figure, meanings = why_view._stall_view(data, labels, "share")
    assert why_view._stall_view(data, labels, "share")[0] is figure  # no stall frame rebuilt or hashed per visit
    assert (
        figure.to_dict()
        == stall_figure(
            why.stall_frame(data, list(labels)), "share", "Warp stalls per launch", why.kernel_ids(data, labels)
        ).to_dict()
    )
    reasons = meanings.to_pandas()["reason"].tolist()
    assert reasons and set(reasons) == set(why.stall_frame(data, list(labels))["reason"])


def test_source_tables(data: why.WhyData) -> None:
    kernel = data.kernel_source("v4")
    lines = why.line_table(kernel)
    assert [c for c in lines.columns if not c.startswith("stall: ") and c != why.OTHER_STALLS] == why.LINE_COLUMNS
    assert lines["line"].is_monotonic_increasing
    hot = why.hot_lines_table(kernel)
    assert len(hot) == 10 and hot["samples"].is_monotonic_decreasing
    assert hot.iloc[0]["line"] == 29 and hot.iloc[0]["dominant stall"] == "long_scoreboard"
    assert hot.iloc[1]["source"].startswith("sum[xx][yy] +=") and hot.iloc[1]["dominant stall"] == "short_scoreboard"
    sass = why.line_sass_table(kernel, 43)
    assert sass["sass"].str.startswith("FFMA").any() and sass["sass"].str.startswith("LDS").any()
    assert sass["samples"].sum() == pytest.approx(hot.iloc[1]["samples"])
    # cuBLAS has no line information: its hottest SASS instructions stand in
    cublas = why.hot_lines_table(data.kernel_source("cublas"), 5)
    assert list(cublas.columns)[:3] == ["offset", "% samples", "sass"] and len(cublas) == 5


def test_the_source_and_step_tables_are_shared_and_drawn_as_the_tables_themselves(data: why.WhyData) -> None:
    """What the Why page draws is the tables above, converted to Arrow once per capture object, not per visit."""
    import pandas as pd

    kernel = data.kernel_source("v4")
    tables = why_view._source_tables(kernel)
    assert why_view._source_tables(kernel) is tables and tables.hottest == 29
    pd.testing.assert_frame_equal(tables.hot.to_pandas(), why.hot_lines_table(kernel))
    pd.testing.assert_frame_equal(tables.lines_shown.to_pandas(), tables.lines)
    pd.testing.assert_frame_equal(tables.lines, why.line_table(kernel))
    pd.testing.assert_frame_equal(tables.sass_shown.to_pandas(), why.sass_table(kernel))
    pd.testing.assert_frame_equal(why_view._line_sass(kernel, 43).to_pandas(), why.line_sass_table(kernel, 43))
    assert why_view._source_tables(data.kernel_source("cublas")).lines is None  # no line information
    ranked, tensor, before, after = why_view._step_tables(data, "v3", "v4")
    assert why_view._step_tables(data, "v3", "v4")[0] is ranked
    view = why.explain_step(data, "v3", "v4")
    pd.testing.assert_frame_equal(ranked.to_pandas(), view.ranked.drop(columns="interpretation"))
    assert tensor is None and why.tensor_table(view.explanation).empty
    pd.testing.assert_frame_equal(before.to_pandas(), view.hot_before)
    pd.testing.assert_frame_equal(after.to_pandas(), view.hot_after)


def test_explain_step_view(data: why.WhyData) -> None:
    view = why.explain_step(data, "v3", "v4")
    assert view.explanation.summary.startswith("v3 -> v4: time -47%")
    assert view.ranked.iloc[0]["what moved"] == "shared-load wavefronts per request"
    assert view.ranked.iloc[0]["before"] == "17.0" and view.ranked.iloc[0]["after"] == "5.0"
    measured = view.measured.set_index("measure")
    assert measured.loc["time (us)", "after"] == pytest.approx(273.8, abs=0.1)
    assert 0 < measured.loc["% of cuBLAS", "before"] < measured.loc["% of cuBLAS", "after"] < 100
    assert "--- v3: v3_regblock.cu" in view.diff and "+++ v4: v4_transposed.cu" in view.diff
    # The section's three cells, built once with the view: time after, its change and the time before.
    assert [c.label for c in view.cells] == list(view.measured["measure"])
    time = view.cells[[c.label for c in view.cells].index("time (us)")]
    assert time.value == "273.82" and time.rise_is_worse
    assert time.delta == f"{measured.loc['time (us)', 'change']} (from {measured.loc['time (us)', 'before']:,.2f})"
    assert not any(c.rise_is_worse for c in view.cells if c.label != "time (us)")
    assert set(view.stalls["label"]) == {"v3", "v4"}
    assert view.hot_after.iloc[0]["line"] == 29 and list(view.hot_after.columns) == why.COMPACT_COLUMNS
    # any two kernels: the diff is between their sources even when one is not the other's `previous`
    assert "+++ v9-regdb" in why.explain_step(data, "v5", "v9-regdb").diff


def test_a_source_page_alone_is_a_data_source() -> None:
    page = SL.read_source_file(H100 / "source_why_1024_cuda_sass.csv.gz")
    alone = why.source_page_data("source_why_1024_cuda_sass.csv.gz", page)
    assert "v4" in alone.labels() and alone.labels()["v4"] is None
    assert alone.kernel_source("v4").lines[0].text  # the catalog's .cu text is attached
    frame = why.stall_frame(alone, ["v3", "v4"])
    assert set(frame["kind"]) == {"samples"} and set(frame["label"]) == {"v3", "v4"}
    view = why.explain_step(alone, "v3", "v4")
    assert view.hot_before is not None and "no counters" in view.explanation.summary


# ---------------------------------------------------------------------------------------------
# The page (AppTest)
# ---------------------------------------------------------------------------------------------


@pytest.fixture()
def no_gpu(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()


H100_LADDER = "bundled NVIDIA H100 80GB HBM3, why_4096"
"""The bundled H100 full-set capture of the whole ladder (the page's default under an H100 bundle)."""


STALLS, SOURCE, EXPLAIN = why_view.SECTIONS


def show(at: AppTest, section: str) -> AppTest:
    """Open one of the page's sections (a tab: only the open one is drawn) and run."""
    at.session_state[why_view.SECTION_KEY] = section
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def why_page(source: str | None = H100_LADDER, section: str | None = None) -> AppTest:
    """The Why page under the default sidebar bundle, its data switched to the capture whose label starts with
    `source` (None: the page's own default), showing `section` (None: the default, the stall breakdown)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(WHY_PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    if source is not None and not at.selectbox(key="why_source").value.startswith(source):
        label = next(o for o in at.selectbox(key="why_source").options if o.startswith(source))
        at.selectbox(key="why_source").set_value(label).run()
        assert not at.exception, [e.value for e in at.exception]
    return at if section is None else show(at, section)


def plain(text: str) -> str:
    return text.replace("\\", "")


def test_every_ladder_step_shows_stalls_hot_lines_and_a_summary(no_gpu) -> None:
    at = why_page(section=EXPLAIN)
    assert at.title[0].value == "Why"
    # the largest bundled size by default, as `explain` chooses
    assert at.selectbox(key="why_source").value.startswith("bundled NVIDIA H100 80GB HBM3, why_4096")
    step_key = next(s.key for s in at.selectbox if s.key and s.key.startswith("step:"))
    options = at.selectbox(key=step_key).options
    assert options[:2] == ["v1 → v1-coalesced", "v1 → v2"] and len(options) == len(captured_steps()) + 1
    for option in options[:-1]:
        at.selectbox(key=step_key).set_value(option).run()
        assert not at.exception, (option, [e.value for e in at.exception])
        base, cand = option.split(" → ")
        summary = plain(at.success[0].value)
        assert summary.startswith(f"{base} -> {cand}: time "), summary
        charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
        step_chart = next(c for c in charts if c["layout"]["title"]["text"].startswith("Warp stalls: "))
        assert {t["name"] for t in step_chart["data"] if t["type"] == "bar"}, option
        # (AppTest names only selectable tables by key: these are found by their columns)
        before, after = [df.value for df in at.dataframe if list(df.value.columns) == why.COMPACT_COLUMNS]
        assert len(before) == 5 and len(after) == 5, option
        assert after["% samples"].is_monotonic_decreasing and before["% samples"].iloc[0] > 5
        ranked = next(df.value for df in at.dataframe if "what moved" in df.value.columns)
        assert list(ranked["rank"][:3]) == [1, 2, 3], option


def test_source_view_and_stall_chart_on_the_page(no_gpu) -> None:
    at = why_page()
    stalls = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert len(stalls["layout"]["yaxis"]["tickvals"]) == 12  # the ladder, v1 .. v9-regdb and the WMMA pair
    show(at, SOURCE)
    kernel_key = next(s.key for s in at.selectbox if s.key and s.key.startswith("src_kernel:"))
    assert at.selectbox(key=kernel_key).value == "v4"
    hot = next(df.value for df in at.dataframe if list(df.value.columns) == why.LINE_COLUMNS)
    assert len(hot) == 10 and hot.iloc[0]["line"] == 29
    assert any("SASS of line 29" in m.value for m in at.markdown)
    smaller = next(
        o for o in at.selectbox(key="why_source").options if o.startswith(H100_LADDER.replace("4096", "1024"))
    )
    at.selectbox(key="why_source").set_value(smaller).run()
    show(at, EXPLAIN)
    assert not at.exception and plain(at.success[0].value).startswith("v1 -> v1-coalesced")


def test_each_table_carries_the_formats_of_its_own_columns_as_before(no_gpu) -> None:
    """The tables are given only the formats of the columns they have: each column's format as sent is the one the
    full mapping gave it (as Streamlit encodes it), and no table carries a format for a column it lacks."""
    from streamlit.elements.lib.column_config_utils import _convert_column_config_to_json, process_config_mapping

    def sent(config: dict) -> dict:
        return json.loads(_convert_column_config_to_json(process_config_mapping(config)))

    full, compact = sent(why_view.COLUMNS), sent(why_view.COMPACT)
    at = why_page()
    checked = 0
    for table in [t for section in (SOURCE, EXPLAIN) for t in show(at, section).dataframe]:
        columns = json.loads(table.proto.columns)
        names = list(table.value.columns)
        assert set(columns) <= {*names, "_index"}, names
        for name in names:
            if name in full:  # the explain step's hot lines have the compact source column
                assert columns[name] in (full[name], compact[name]), name
                checked += 1
    assert checked >= 10


def test_the_stall_meanings_and_the_code_change_are_sent_only_while_open(no_gpu) -> None:
    at = why_page()
    (meanings,) = [e for e in at.expander if e.label == "What each stall reason means"]
    assert not meanings.children
    (change,) = [e for e in show(at, EXPLAIN).expander if e.label.startswith("Code change: ")]
    assert not change.children and not at.code
    source = at.selectbox(key="why_source").value
    base, cand = at.selectbox(key=f"step:{source}").value.split(" → ")
    at.session_state[f"diff:{base}:{cand}"] = True
    code = show(at, EXPLAIN).code[0].value
    at.session_state["stall_meanings"] = True
    show(at, STALLS)
    data = why_view.data_sources(None)[0][source]()
    (meanings,) = [e for e in at.expander if e.label == "What each stall reason means"]
    assert [c.value for c in meanings.caption] == [
        "Each bar splits ncu's Warp Cycles Per Issued Instruction (printed at its end) by stall reason."
    ]
    chosen = tuple(at.multiselect(key=f"stall_pick:{source}").value)
    drawn = meanings.dataframe[0].value.reset_index(drop=True)
    assert drawn.equals(why_view._stall_view(data, chosen, "share")[1].to_pandas())
    assert list(drawn["reason"]) and code == why.explain_step(data, base, cand).diff.strip()


def test_a_handed_over_source_page_is_offered(no_gpu) -> None:
    at = why_page()
    page = SL.read_source_file(H100 / "source_why_4096_sass.csv.gz")
    at.session_state["why_source_pages"] = {"mine.csv.gz": page}
    at.run()
    label = "source page mine.csv.gz (uploaded)"
    assert label in at.selectbox(key="why_source").options
    at.selectbox(key="why_source").set_value(label).run()
    show(at, EXPLAIN)
    assert any("no counters" in plain(s.value) for s in at.success)


def test_a_source_page_uploaded_on_the_reports_page_is_offered(no_gpu) -> None:
    at = why_page()
    page = SL.read_source_file(H100 / "source_why_1024_sass.csv.gz")
    cache.shared_uploads().parse("src.csv:1", "src.csv", b"", lambda _name, _content: page)
    at.session_state["uploads"] = {"src.csv:1": "src.csv"}
    at.run()
    label = "source page src.csv (uploaded)"
    assert label in at.selectbox(key="why_source").options
    at.selectbox(key="why_source").set_value(label).run()
    assert not at.exception, [e.value for e in at.exception]


def test_uploaded_reports_with_stalls_and_any_two_launches(no_gpu) -> None:
    at = why_page()
    report = L.load_report(H100 / "ncu_why_4096_raw.csv")
    # Parsed uploads live in the server's shared cache; the session keeps key -> file name.
    cache.shared_uploads().parse("why.csv:0", "why.csv", b"", lambda _name, _content: report)
    at.session_state["uploads"] = {"why.csv:0": "why.csv"}
    at.run()
    at.selectbox(key="why_source").set_value("uploaded reports (this session)").run()
    show(at, EXPLAIN)
    step_key = next(s.key for s in at.selectbox if s.key and s.key.startswith("step:"))
    at.selectbox(key=step_key).set_value("any two launches").run()
    at.selectbox(key="x_base").set_value("v5").run()
    at.selectbox(key="x_cand").set_value("v9-regdb").run()
    assert not at.exception, [e.value for e in at.exception]
    summary = plain(at.success[0].value)
    assert summary.startswith("v5 -> v9-regdb: time -") and "us)" in summary
    assert not [df for df in at.dataframe if list(df.value.columns) == why.COMPACT_COLUMNS]  # no source page
    assert sum("No source page for this launch." in c.value for c in at.caption) == 2


def test_static_sass_toggle(no_gpu) -> None:
    from profiling.analysis.sass import find_binary
    from profiling.paths import tool_path

    if tool_path("nvcc") is None or find_binary("nvdisasm") is None:
        pytest.skip("needs nvcc and nvdisasm")
    at = why_page(section=SOURCE)
    at.toggle(key="static_sass").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    mix = next(df.value for df in at.dataframe if "main loop" in df.value.columns)
    assert mix.loc["FFMA", "main loop"] == "512" and mix.loc["LDS.128 (16-byte shared loads)", "main loop"] == "32"
    assert list(mix.loc["FFMA per shared load (main loop)"]) == ["", "16"]  # no ratio for the whole kernel
    # 960 instructions, a main loop of 602: 16 bytes each.
    assert list(mix.loc["all instructions"]) == ["960", "602"]
    assert list(mix.loc[why.CODE_KB_LABEL]) == ["15", "9.4"]


def test_the_hopper_capture_explains_wgmma_against_mma_sync() -> None:
    """The H100 capture of 2026-11-24 (results/h100-2026-11-24/why/): wmma-async against wgmma-tma, the pair
    the why views explain: stalls, tensor-pipe busy and shared-memory traffic per FLOP."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/8_Why.py").run()
    label = next(o for o in at.selectbox(key="why_source").options if "why_hopper_4096" in o)
    at.selectbox(key="why_source").set_value(label).run()
    show(at, EXPLAIN)
    key = f"step:{label}"
    step = next(o for o in at.selectbox(key=key).options if o.startswith("wmma-async") and o.endswith("wgmma-tma"))
    at.selectbox(key=key).set_value(step).run()
    assert not at.exception
    tensor = next(d.value for d in at.dataframe if "measure" in d.value.columns and "meaning" in d.value.columns)
    by = dict(zip(tensor["measure"], tensor["after"], strict=True))
    assert set(by) == {"tensor pipe busy (ncu, % of peak)", "shared-memory bank cycles per GFLOP"}
    assert tensor.set_index("measure").loc["shared-memory bank cycles per GFLOP", "change"].startswith("-")


def test_a_split_k_step_shows_its_main_kernel_not_the_launch_that_zeroes_c() -> None:
    """The H100 capture of v9-regdb and v9-splitk at 1024x1024x8191 (results/h100-2026-11-27/why/): the label
    v9-splitk is sgemm_regdb_splitk, the zeroing launch before it is "v9-splitk splitk_zero_c", and the step ranks what `explain` ranks (waves per SM 0.24 -> 0.97, -50 % of the time)."""
    folder = ROOT / "results" / "h100-2026-11-27" / "why"
    data = why.load_capture(
        "splitk",
        folder / "ncu_why_splitk_1024x1024x8191_raw.csv",
        folder / "source_why_splitk_1024x1024x8191_cuda_sass.csv.gz",
    )
    assert {label: x.function for label, x in data.labels().items()} == {
        "v9-regdb": "sgemm_regdb",
        "v9-splitk": "sgemm_regdb_splitk",
        "v9-splitk splitk_zero_c": "splitk_zero_c",
    }
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/8_Why.py").run()
    label = next(o for o in at.selectbox(key="why_source").options if "why_splitk_1024x1024x8191" in o)
    at.selectbox(key="why_source").set_value(label).run()
    show(at, EXPLAIN)
    key = f"step:{label}"
    step = next(o for o in at.selectbox(key=key).options if o.startswith("v9-regdb") and o.endswith("v9-splitk"))
    at.selectbox(key=key).set_value(step).run()
    assert not at.exception, [e.value for e in at.exception]
    ranked = next(d.value for d in at.dataframe if "what moved" in d.value.columns)
    first = ranked.iloc[0]
    assert (first["what moved"], first["before"], first["after"], first["time carried"]) == (
        "waves per SM",
        "0.24",
        "0.97",
        "-50%",
    )


def test_an_uploaded_ncu_rep_brings_its_source_view(no_gpu) -> None:
    """A .ncu-rep upload, read by the ncu-report wheel without ncu: its launches' stalls and its own source view
    (v4's hottest line, 29, is the shared store of the transposed A tile)."""
    data = (ROOT / "results" / "h200-2026-11-22" / "v4_full_1024.ncu-rep").read_bytes()
    report = L.load_upload("v4.ncu-rep", data)
    at = why_page()
    cache.shared_uploads().parse("v4.ncu-rep:0", "v4.ncu-rep", b"", lambda _name, _content: report)
    at.session_state["uploads"] = {"v4.ncu-rep:0": "v4.ncu-rep"}
    at.run()
    at.selectbox(key="why_source").set_value("uploaded reports (this session)").run()
    hot = next(df.value for df in show(at, SOURCE).dataframe if list(df.value.columns) == why.LINE_COLUMNS)
    assert hot.iloc[0]["line"] == 29
    show(at, EXPLAIN)
    assert not any("No source page for this launch." in c.value for c in at.caption)


def test_source_view_has_a_column_per_top_stall_reason() -> None:
    """v4's source view from its .ncu-rep: the kernel's five top reasons each get a column and the rest are summed,
    so a line's stall columns add up to its samples (line 29, the transposed store: 7,018 samples, 6,649 of them
    long_scoreboard); every SASS row names its source line, and the SASS of a line carries the same columns."""
    page = SL.load_source_page(ROOT / "results" / "h200-2026-11-22" / "v4_full_1024.ncu-rep")
    (kernel,) = page.kernels
    lines = why.line_table(kernel)
    stall = [c for c in lines.columns if c.startswith("stall: ")]
    assert stall == [
        "stall: long_scoreboard",
        "stall: selected",
        "stall: short_scoreboard",
        "stall: barrier",
        "stall: not_selected",
    ]
    row = lines[lines["line"] == 29].iloc[0]
    assert row["samples"] == 7018 and row["stall: long_scoreboard"] == 6649
    assert sum(row[c] for c in [*stall, why.OTHER_STALLS]) == row["samples"]
    assert (lines[[*stall, why.OTHER_STALLS]].sum(axis=1) == lines["samples"]).all()
    sass = why.sass_table(kernel)
    hottest = sass.loc[sass["samples"].idxmax()]
    assert hottest["sass"].startswith("STS") and hottest["lines"] == "29"
    under = why.line_sass_table(kernel, 29)
    assert stall[0] in under.columns and under["samples"].sum() == 7018


def test_captures_follow_the_sidebar_bundle_then_its_gpu() -> None:
    captures = [
        ("h100 why_1024", "NVIDIA H100 80GB HBM3", "h100-2026-11-22", 1),
        ("h100 hopper", "NVIDIA H100 80GB HBM3", "h100-2026-11-24", 2),
        ("h200 ladder", "NVIDIA H200", "h200-2026-11-22", 3),
        ("h200 later", "NVIDIA H200", "h200-2026-11-24", 4),
    ]
    order = why_view.context_order(captures, "h200-2026-11-24", "NVIDIA H200")
    assert [c[3] for c in order] == [4, 3, 1, 2]  # the bundle's own, then its GPU's, then the rest in order
    assert [c[3] for c in why_view.context_order(captures, "h100-2026-11-24/auto_round3", "NVIDIA H100 80GB HBM3")] == [
        1,
        2,
        3,
        4,
    ]


def test_the_why_page_shows_the_sidebar_gpu_first(no_gpu) -> None:
    # The H100's bundled ladder capture under an H100 bundle; under an H200 bundle the H200's own capture
    # (results/h200-2026-11-29/why/: wgmma-staged against wgmma-streamk), so no note about another GPU's data.
    for bundle, default in [
        ("h100-2026-11-22", H100_LADDER),
        ("h200-2026-11-22", "measured h200-2026-11-29: why_streamk_5120"),
    ]:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.session_state["bundle"] = bundle
        at.run()
        at.switch_page(WHY_PAGE).run()
        assert not at.exception
        assert at.selectbox(key="why_source").value.startswith(default)
        assert not [i.value for i in at.info if "No warp-stall capture" in i.value]


NOTE_SCRIPT = """
from types import SimpleNamespace
from profiling.app import why_view
why_view.context_note(SimpleNamespace(device_name="NVIDIA A100-SXM4-80GB"), "h100 capture", {"h100 capture": "NVIDIA H100 80GB HBM3"})
why_view.context_note(SimpleNamespace(device_name="NVIDIA H100 80GB HBM3"), "h100 capture", {"h100 capture": "NVIDIA H100 80GB HBM3"})
"""


def test_data_of_another_gpu_than_the_sidebars_says_whose_it_is() -> None:
    at = AppTest.from_string(NOTE_SCRIPT).run()
    assert [plain(i.value) for i in at.info] == [
        "No warp-stall capture of the NVIDIA A100-SXM4-80GB (the sidebar's bundle) is bundled: this is the NVIDIA H100 "
        "80GB HBM3's. Upload a report with stall metrics (ncu --set full) to see your GPU."
    ]


FOLLOWER = """
from types import SimpleNamespace
import streamlit as st
from profiling.app import why_view
why_view.follow_sidebar("pick", SimpleNamespace(name=st.session_state.get("sidebar")))
st.selectbox("Data", ["first", "second"], key="pick")
"""


def test_a_choice_made_for_one_bundle_is_forgotten_when_the_sidebar_changes() -> None:
    at = AppTest.from_string(FOLLOWER)
    at.session_state["sidebar"] = "h100-2026-11-22"
    at.run()
    at.selectbox(key="pick").set_value("second").run()
    at.run()
    assert at.selectbox(key="pick").value == "second"  # kept while the bundle stays
    at.session_state["sidebar"] = "h200-2026-11-22"
    at.run()
    assert at.selectbox(key="pick").value == "first"


def test_the_committed_captures_are_found_once_and_offered_in_the_sidebars_order(monkeypatch) -> None:
    st.cache_resource.clear()
    calls: list[Path] = []
    real = why.bundled_captures
    monkeypatch.setattr(why, "bundled_captures", lambda folder: calls.append(folder) or real(folder))
    h100 = next(b for b in bundles.discover_bundles() if b.name == "h100-2026-11-22")
    loaders, devices = why_view.data_sources(h100)
    found = len(calls)
    assert found > 0 and why_view.data_sources(h100)[0].keys() == loaders.keys() and len(calls) == found
    # every committed full-set capture, labelled as before: the bundles' own, then results/<gpu>-<date>/why*/'s
    expected = [
        f"bundled {b.device_name}, {raw.stem.removeprefix('ncu_').removesuffix('_raw')} ({b.date})"
        for b in bundles.discover_bundles()
        for raw, _, _ in real(b.path)
    ] + [why.later_capture_label(raw) for raw, _, _ in why.later_captures(ROOT / "results")]
    assert "measured h200-2026-11-29: why_streamk_5120" in loaders
    assert "measured h200-2026-11-29/why_session20: why_streamk_5120" in loaders
    assert "measured h200-2026-11-29/why_cluster: why_streamk_cluster_8192" in loaders
    assert "measured h200-2026-11-29/why_sgemm: why_sgemm_2048" in loaders
    assert sorted(loaders) == sorted(expected)
    assert list(loaders)[:2] == [
        "bundled NVIDIA H100 80GB HBM3, why_4096 (2026-11-22)",
        "bundled NVIDIA H100 80GB HBM3, why_1024 (2026-11-22)",
    ]
    assert devices[list(loaders)[0]] == "NVIDIA H100 80GB HBM3"


def test_a_days_why_folder_comes_first_then_its_other_capture_folders_by_name() -> None:
    found = [f"{raw.parent.parent.name}/{raw.parent.name}" for raw, _, _ in why.later_captures(ROOT / "results")]
    assert found[:9] == [
        "h200-2026-11-29/why",
        "h200-2026-11-29/why8192",
        "h200-2026-11-29/why_cluster",
        "h200-2026-11-29/why_cluster_cublas",
        "h200-2026-11-29/why_misses",
        "h200-2026-11-29/why_session20",
        "h200-2026-11-29/why_sgemm",
        "h200-2026-11-29/why_sgemm",
        "h200-2026-11-28/why",
    ]


def test_a_folder_of_captures_alone_takes_its_gpu_from_a_bundle_of_the_same_gpu() -> None:
    gpus = {"h200-2026-11-28": "NVIDIA H200", "h100-2026-11-27": "NVIDIA H100 80GB HBM3"}
    assert why.folder_gpu("h200-2026-11-29", gpus) == "NVIDIA H200"
    assert why.folder_gpu("h100-2026-11-27", gpus) == "NVIDIA H100 80GB HBM3"
    assert why.folder_gpu("b200-2026-11-29", gpus) == ""


def test_a_capture_of_several_shapes_with_one_m_is_labelled_by_shape_and_compares_like_with_like() -> None:
    """results/h200-2026-11-29/why_misses (session 27): cuBLAS and sgemm-auto at 333x127x4096, 4096x333x333 and
    4096x64x4096. Two shapes share M = 4096, so the labels carry the whole shape; sgemm-auto's zeroing launches are
    named after their function; and "any two launches" starts at cuBLAS against sgemm-auto at the first shape, not
    against cuBLAS's own split-K reduction (the second label)."""
    data = why.load_capture("misses", ROOT / "results" / "h200-2026-11-29" / "why_misses" / "ncu_why_misses_raw.csv")
    labels = list(data.labels())
    assert labels == [
        "cublas @ 333x127x4096",
        "cublas @ 333x127x4096 #1",
        "sgemm-auto @ 333x127x4096",
        "cublas @ 4096x333x333",
        "sgemm-auto @ 4096x333x333",
        "cublas @ 4096x64x4096",
        "cublas @ 4096x64x4096 #7",
        "sgemm-auto @ 4096x64x4096",
        "sgemm-auto @ 333x127x4096 splitk_zero_c",
        "sgemm-auto @ 4096x64x4096 splitk_zero_c",
    ]
    assert labels[data.default_candidate()] == "sgemm-auto @ 333x127x4096"
    view = why.explain_step(data, labels[0], labels[data.default_candidate()])
    assert view.explanation.summary.startswith("cublas -> sgemm-auto: time +40% (15.0 -> 21.0 us)")
