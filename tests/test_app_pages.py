"""Every page of the app inside its frame (app.py), headless (streamlit.testing AppTest), in no-GPU mode on the
bundled real data."""

from __future__ import annotations

import ast
import base64
import json
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kernels.catalog import CATALOG
from profiling.analysis.occupancy import theoretical_occupancy
from profiling.analysis.sweep import bundled_sweeps, sweep_frame
from profiling.app import bundles, indexing, kernel_facts, kernels_view, sweep, table_format, tables, why_view
from profiling.gpu.runner import _spec_and_result
from profiling.runs.duplicates import identical_runs
from profiling.runs.export import export_runs_json
from profiling.runs.results import load_document
from profiling.runs.store import RunStore

ROOT = Path(__file__).resolve().parent.parent
NCU = ROOT / "tests" / "fixtures" / "ncu"
LADDER = {"cublas", "v1", "v1-coalesced", "v2", "tiled-8", "tiled-16", "tiled-32", "v3", "v4", "v5"}
BUNDLE = next(b for b in bundles.discover_bundles() if b.name == "h200-2026-11-22")
BENCH = tables.bench_frame(bundles.load_bench(BUNDLE))
CAPTURES = bundles.load_bundle_reports(BUNDLE)
N_LAUNCHES = len(tables.key_metrics_table(CAPTURES))


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch, tmp_path: Path):
    """No GPU work, a fresh run store in tmp_path, and no cached state from earlier tests."""
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()


OVERVIEW = "pages/0_Overview.py"


def page(name: str, bundle: str | None = BUNDLE.name) -> AppTest:
    """The frame app.py showing pages/<name> (it opens on the Overview) with `bundle` chosen in the sidebar (the
    H200 bundle whose values these tests pin; None: the default, the newest)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if bundle is not None:
        at.session_state["bundle"] = bundle  # the sidebar's picker (AppTest cannot pick a formatted option)
    at.session_state["add_runs"] = True  # Review's Add runs expander open: it is drawn into only while open
    at.run()
    if name != OVERVIEW:
        assert not at.exception, [e.value for e in at.exception]
        at.switch_page(name).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plain(text: str) -> str:
    """Markdown-escaped text as the reader sees it."""
    return text.replace("\\", "")


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def n_values(values: list | dict) -> int:
    """Length of a plotly JSON array, plain or typed ({"dtype", "bdata"} base64)."""
    if isinstance(values, dict):
        return len(np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]))
    return len(values)


def kernel_points(fig: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for trace in fig["data"]:
        group = trace.get("legendgroup", "")
        if group.startswith("kernel:") and "meta" not in trace:  # the Review roofline's baselines and arrows aside
            counts[group[7:]] = counts.get(group[7:], 0) + n_values(trace["x"])
    return counts


def test_overview_banner_names_the_bundled_device_and_date() -> None:
    at = page(OVERVIEW)
    banner = plain(at.warning[0].value)
    assert banner == "No GPU found; showing bundled measurements from NVIDIA H200 on 2026-11-22."
    device = dict(at.dataframe[0].value.astype(str).values.tolist())
    assert device["GPU"] == "NVIDIA H200" and device["SMs"] == "132" and device["CUDA runtime"] == "13.2"
    tools = at.dataframe[1].value
    assert list(tools["tool"]) == ["ncu", "compute-sanitizer", "nvcc"]
    listed = at.dataframe[2].value.set_index("folder")
    assert listed.loc["results/h200-2026-11-22", "device"] == "NVIDIA H200"
    # drawn from shared Arrow tables: the same tables as the frames themselves, shown as before
    for drawn, frame in zip(
        at.dataframe[:3],
        (
            tables.device_rows(BUNDLE.device),
            tables.tool_rows(),
            tables.bundles_table(bundles.discover_bundles()),
        ),
        strict=True,
    ):
        pd.testing.assert_frame_equal(drawn.value, table_format.display(frame))
    (glance,) = figures(at)
    assert {t["name"] for t in glance["data"]} == set(BENCH["kernel"])
    # the guide names every page of the sidebar
    guide = next(m.value for m in at.markdown if m.value.startswith("- **Kernels**"))
    listed = next(
        n.value for n in ast.parse((ROOT / "app.py").read_text()).body if ast.unparse(n).startswith("PAGE_LIST =")
    )
    titles = [title for _, title, _ in ast.literal_eval(listed)]
    assert len(titles) == len(list((ROOT / "pages").glob("*.py")))
    for title in titles[1:]:
        assert f"**{title}**" in guide, title


def test_kernels_page_shows_every_kernel_source_and_diff() -> None:
    at = page("pages/1_Kernels.py")
    assert list(at.dataframe[0].value["id"]) == [s.id for s in CATALOG]
    pd.testing.assert_frame_equal(at.dataframe[0].value, table_format.display(kernel_facts.catalog_table()))
    facts_of = kernel_facts.bundled_compile_facts(bundles.load_bench(BUNDLE))
    for spec in CATALOG:
        at.selectbox(key="kernel").set_value(spec.id).run()
        assert not at.exception
        assert at.header[0].value == spec.title
        # the summary and the bundled run's row, drawn from shared Arrow tables: the frames as the page drew them
        pd.testing.assert_frame_equal(at.dataframe[1].value, table_format.display(kernel_facts.kernel_summary(spec)))
        row = facts_of[facts_of["kernel"] == spec.id]
        if spec.source is not None and not row.empty:
            pd.testing.assert_frame_equal(at.dataframe[2].value, table_format.display(row))
        codes = [c.value for c in at.code]
        if spec.source is None:
            assert codes == [] and any("library kernel" in i.value for i in at.info)
            continue
        assert codes == [spec.read_source().strip()]  # only the open tab is drawn: Source, by default
        assert any(spec.adds[:40] in m.value for m in at.markdown)
        at.session_state[kernels_view.code_tab_key(spec.id)] = f"Diff vs {spec.previous}" if spec.previous else "Diff"
        at.run()
        codes = [c.value for c in at.code]
        diff = kernel_facts.kernel_diff(spec)
        if diff:
            assert codes == [diff.strip()] and codes[0].startswith(f"--- {spec.previous}:")
        else:
            assert codes == [] and any("nothing to diff" in c.value for c in at.caption)
    at.selectbox(key="kernel").set_value("v4").run()
    facts = [d.value for d in at.dataframe if "registers" in d.value.columns]
    assert facts and facts[0]["registers"].iloc[0] == 119


CJK = re.compile(r"[\u3000-\u9fff]")


def test_kernels_page_quotes_the_design_notes_in_english_and_names_no_file() -> None:
    """The seed notes are Chinese and not in this repository: the page quotes them in English, keeps the original in
    an expander (where a reader without a CJK font sees no empty boxes unless they open it) and names no file."""
    at = page("pages/1_Kernels.py")
    for spec in CATALOG:
        at.selectbox(key="kernel").set_value(spec.id).run()
        shown = [m.value for m in at.markdown] + [c.value for c in at.caption]
        assert not any(re.search(r"\d{3}_[0-9a-f]{16}\.txt|not in this repository", t) for t in shown), spec.id
        assert not any(CJK.search(t) for t in shown), spec.id
    at.selectbox(key="kernel").set_value("v3").run()
    quote = next(plain(m.value) for m in at.markdown if m.value.startswith(">"))
    assert quote.startswith("> Each thread is responsible for an 8*8 matrix, and each thread block shrinks to 16*16")
    (original,) = [e for e in at.expander if e.label == "The passage in the original Chinese"]
    assert not original.text  # drawn into only while open (ui.lazy_expander)
    at.session_state[kernels_view.ORIGINAL_KEY] = True
    at.run()
    (original,) = [e for e in at.expander if e.label == "The passage in the original Chinese"]
    assert original.text[0].value == "每个线程负责 8*8 的矩阵，每个 thread block 缩小到 16*16 个 thread"


def test_benchmark_page_bundled_results_and_gpu_notice() -> None:
    at = page("pages/2_Benchmark.py")
    assert "needs a CUDA GPU" in at.info[0].value
    run_button = next(b for b in at.button if b.label == "Run on the GPU")
    assert run_button.disabled
    table = at.dataframe[0].value
    assert len(table) == len(BENCH) and {"time (ms)", "TFLOP/s", "% of cuBLAS", "clocks capped"} <= set(table.columns)
    # The shape sweep is drawn only while its expander is open (closed on arrival).
    (closed,) = [e for e in at.expander if e.label == sweep.SWEEP_LABEL]
    assert not closed.children and not [s for s in at.selectbox if s.key == "sweep_source"] and len(figures(at)) == 2
    at.session_state["sweep_open"] = True
    at.run()
    assert not at.exception
    tflops, pct, sweep_heat, sweep_winners = figures(at)
    assert {t["name"] for t in tflops["data"]} == set(table["kernel"])
    assert "cublas" not in {t["name"] for t in pct["data"]}
    assert any("NVIDIA H200, measured 2026" in plain(c.value) for c in at.caption)
    # The bundled H100 grid sweep below: a heatmap of the chosen kernel and the winner map of the catalog kernels.
    assert sweep_heat["data"][0]["type"] == "heatmap" and "v9-regdb" in sweep_heat["layout"]["title"]["text"]
    assert {t["name"] for t in sweep_winners["data"] if t["type"] == "scatter"} == {"v8-async", "v9-regdb"}
    # the pickers offer the shown sweep's own K values and catalog kernels
    path = next(p for p in bundled_sweeps() if at.selectbox(key="sweep_source").value.endswith(p.name))
    frame = sweep_frame(load_document(path))
    assert at.selectbox(key="sweep_k").options == [str(k) for k in sorted(frame["k"].unique())]
    catalog = [kid for kid in dict.fromkeys(frame["kernel"]) if not kid.startswith("cublas")]
    assert at.selectbox(key="sweep_kernel").options == catalog
    # a kernel and K chosen in the sweep are still chosen after the expander is closed and opened again
    at.selectbox(key="sweep_kernel").set_value(catalog[0]).run()
    at.selectbox(key="sweep_k").set_value(min(frame["k"])).run()
    for open_ in (False, True):
        at.session_state["sweep_open"] = open_
        at.run()
    assert not at.exception and len(catalog) > 1
    assert at.selectbox(key="sweep_kernel").value == catalog[0] and at.selectbox(key="sweep_k").value == min(frame["k"])


def test_profile_page_bundled_capture() -> None:
    at = page("pages/3_Profile.py")
    assert "needs a CUDA GPU" in at.info[0].value
    # One capture at a time (each at one size), and the files offered are that capture's.
    for name, report in CAPTURES:
        at.selectbox(key="prof_capture").set_value(name).run()
        assert not at.exception
        metrics = at.dataframe[0].value
        assert list(metrics["launch"]) == list(tables.key_metrics_table([(name, report)])["launch"])
        labels = [b.label for b in at.get("download_button")]
        group = next(g for g in BUNDLE.ncu_groups if g[0].name == name)
        assert labels[: 1 + len(group)] == ["Key metrics (CSV)", *(p.name for p in group)]  # this capture's files
        assert labels[1 + len(group) :] == ["v4_full_1024.ncu-rep"]  # offered apart, as another capture
    at.selectbox(key="prof_capture").set_value("ncu_ladder_1024_raw.csv").run()
    metrics, findings = at.dataframe[0].value, at.dataframe[1].value
    assert set(metrics["kernel"]) == LADDER and len(metrics) == 10
    ladder = [c for c in CAPTURES if c[0] == "ncu_ladder_1024_raw.csv"]
    assert len(findings) == len(tables.findings_table(ladder)) > 0 and "rule" in findings.columns


def test_profile_form_starts_from_the_capture_shown() -> None:
    """The kernel picker and size default to what the capture on the page ran (cuBLAS has no source to profile)."""
    at = page("pages/3_Profile.py")
    assert at.selectbox(key="prof_capture").value == "ncu_fast_4096_raw.csv"
    assert set(at.dataframe[0].value["kernel"]) - {"cublas", "cublas-hgemm"} == {
        "v6-vectorized",
        "v7-warptile",
        "v8-async",
        "wmma-addmm",
        "wmma-async",
        "v9-regdb",
    }
    picker = next(m for m in at.multiselect if m.label == "Kernels")
    assert picker.value == ["v6-vectorized", "v7-warptile", "v8-async", "wmma-addmm", "wmma-async", "v9-regdb"]
    assert next(t for t in at.text_input if t.label == "Size (MxNxK)").value == "4096x4096x4096"
    at.selectbox(key="prof_capture").set_value("ncu_ladder_1024_raw.csv").run()
    picker = next(m for m in at.multiselect if m.label == "Kernels")
    assert picker.value == ["v1", "v1-coalesced", "v2", "tiled-8", "tiled-16", "tiled-32", "v3", "v4", "v5"]
    assert next(t for t in at.text_input if t.label == "Size (MxNxK)").value == "1024x1024x1024"


def test_roofline_page_has_a_point_per_kernel_for_each_source() -> None:
    at = page("pages/4_Roofline.py")
    ladder = next(o for o in at.selectbox(key="roof_source").options if "ncu_ladder_1024_raw.csv" in o)
    at.selectbox(key="roof_source").set_value(ladder).run()
    (fig,) = figures(at)
    assert kernel_points(fig) == {k: 3 for k in LADDER}  # L1, L2 and DRAM per launch
    fast = next(o for o in at.selectbox(key="roof_source").options if "ncu_fast_4096_raw.csv" in o)
    at.selectbox(key="roof_source").set_value(fast).run()
    (fig,) = figures(at)
    beyond = {
        "cublas",
        "cublas-hgemm",
        "v6-vectorized",
        "v7-warptile",
        "v8-async",
        "v9-regdb",
        "wmma-addmm",
        "wmma-async",
    }
    assert kernel_points(fig) == {k: 3 for k in beyond}
    assert any("FP16 tensor" in (t.get("name") or "") for t in fig["data"]), "tensor launches add the tensor ceiling"
    bench = next(o for o in at.selectbox(key="roof_source").options if o.startswith("bundled benchmark"))
    at.selectbox(key="roof_source").set_value(bench).run()
    for size in ("8192x8192x8192", "1024x1024x1024"):
        at.selectbox(key="roof_size").set_value(size).run()
        (fig,) = figures(at)
        kernels = set(BENCH[BENCH["size"] == size]["kernel"])
        assert kernel_points(fig) == {k: 1 for k in kernels}
        assert len(at.dataframe[0].value) == len(kernels)


def test_occupancy_page_what_if() -> None:
    at = page("pages/5_Occupancy.py")
    assert len(figures(at)) == 3
    first = at.metric[0].value
    assert first.endswith("%")
    pick = at.selectbox(key="occ_pick")
    custom = len(pick.options) - 1
    pick.set_value(custom).run()
    at.number_input(key=f"threads{custom}").set_value(256).run()
    at.number_input(key=f"regs{custom}").set_value(128).run()
    expected = theoretical_occupancy("9.0", 256, 128, 0)
    assert at.metric[0].value == f"{expected.occupancy_pct:.1f}%"
    assert "registers" in at.text[0].value
    # the limits table, drawn from a shared Arrow table: the frame itself
    limits = next(d.value for d in at.dataframe if "limit" in " ".join(map(str, d.value.columns)).lower())
    pd.testing.assert_frame_equal(limits, table_format.display(tables.occupancy_limits_table(expected)))


def test_reports_upload_real_fixtures_and_compare() -> None:
    at = page("pages/6_Reports.py")
    assert len(at.dataframe[0].value) == N_LAUNCHES  # the bundled captures before any upload
    raw, details = (NCU / "raw.csv").read_bytes(), (NCU / "details.csv").read_bytes()
    at.file_uploader(key="report_files").set_value([("raw.csv", raw, "text/csv")]).run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert len(table) == 10 and set(table["source"]) == {"raw.csv"}
    (fig,) = figures(at)
    assert kernel_points(fig) == {k: 3 for k in LADDER}
    at.file_uploader(key="report_files").set_value(
        [("raw.csv", raw, "text/csv"), ("details.csv", details, "text/csv")]
    ).run()
    # the raw and details pages of one capture: each of the 10 launches once, with the metrics of both files
    table = at.dataframe[0].value
    assert len(table) == 10 and table["launch"].is_unique and set(table["source"]) == {"raw.csv"}
    assert [plain(i.value) for i in at.info] == [
        "details.csv holds the same 10 launches as raw.csv (same process, ID and kernel): each is shown once, "
        "with the metrics and findings of both files"
    ]
    frames = [d.value for d in at.dataframe]
    # Findings and Occupancy are drawn only while open (Roofline is the first tab)
    assert not any("ncu achieved (%)" in f.columns or "rule" in f.columns for f in frames)
    at.session_state["reports_tab"] = "Occupancy"
    at.run()
    frames = [d.value for d in at.dataframe]
    assert len(next(f for f in frames if "ncu achieved (%)" in f.columns)) == 10  # Occupancy: a row per launch
    assert not figures(at) and not any("rule" in f.columns for f in frames)  # nor the closed Roofline
    at.session_state["reports_tab"] = "Findings"
    at.run()
    findings = next(d.value for d in at.dataframe if "rule" in d.value.columns)
    assert len(findings) == 17 and findings["launch"].nunique() == 10  # the details page's rule findings, kept
    compare = next(m for m in at.multiselect if m.label == "Launches to compare")
    assert compare.value == list(table["launch"][:2])  # two launches of the upload by default, not none
    chosen = [table["launch"][1], table["launch"][7]]
    compare.set_value(chosen).run()
    side = next(d.value for d in at.dataframe if list(d.value.columns) == chosen)
    assert side.loc["registers"].tolist() == ["32", "128"]  # v1 and v3; each metric rounded to its unit, as text
    assert not side.isna().any().any() and "None" not in side.to_numpy().ravel().tolist()


def test_reports_tabs_are_drawn_when_open_with_the_same_tables_and_compare_always() -> None:
    at = page("pages/6_Reports.py")  # the bundled capture, on the first tab (Roofline)
    (fig,) = figures(at)
    assert LADDER <= set(kernel_points(fig))
    drawn = [d.value for d in at.dataframe]
    assert not any("ncu achieved (%)" in f.columns for f in drawn)  # Occupancy's table: not built nor sent
    compare = next(m for m in at.multiselect if m.label == "Launches to compare")  # Compare: always drawn
    assert len(compare.value) == 2 and list(drawn[-1].columns) == compare.value
    side = tables.compare_launches(tables.key_metrics_table(CAPTURES), compare.value)
    # as the page drew it before (text cells: Arrow strings either way)
    pd.testing.assert_frame_equal(drawn[-1], table_format.compare_display(side), check_dtype=False)
    for tab, table in (("Occupancy", tables.occupancy_table), ("Findings", tables.findings_table)):
        at.session_state["reports_tab"] = tab
        at.run()
        assert not at.exception and not figures(at)  # the Roofline tab closed: its figure is not sent
        shown = table_format.display(table(CAPTURES))
        matches = [d.value for d in at.dataframe if list(d.value.columns) == list(shown.columns)]
        if len(shown):
            pd.testing.assert_frame_equal(matches[0], shown)  # the table the page drew before, drawn when open
        else:
            assert not matches and any("No rule findings" in c.value for c in at.caption)


@pytest.mark.parametrize(
    ("name", "content", "expect"),
    [
        ("empty.csv", b"", "is empty"),
        ("binary.csv", bytes(range(256)) * 8, "binary file"),
        ("truncated.csv", b"\n".join((NCU / "raw.csv").read_bytes().splitlines()[:2]), "no kernel launches"),
        ("wrong.csv", b"name,value\nalpha,1\n", "not an Nsight Compute CSV"),
        ("report.ncu-rep", b"NVPERF\x00\x00\x00truncated", "could not be read by ncu-report"),
        ("**bold** <img src=x onerror=alert(1)>.csv", b"a,b\n", "not an Nsight Compute CSV"),
    ],
)
def test_reports_bad_uploads_show_one_line_error(name: str, content: bytes, expect: str, monkeypatch) -> None:
    monkeypatch.setattr("profiling.nsight.tools.find_ncu", lambda *a, **k: None)
    at = page("pages/6_Reports.py")
    at.file_uploader(key="report_files").set_value([(name, content, "application/octet-stream")]).run()
    assert not at.exception
    assert len(at.error) == 1
    message = at.error[0].value
    assert "\n" not in message and expect in plain(message)
    assert name in plain(message)
    # user text is escaped: no raw Markdown emphasis or HTML tag survives
    assert re.search(r"(?<!\\)[*<>\[\]`]", message) is None
    assert len(at.dataframe[0].value) == N_LAUNCHES  # the page still shows the bundled captures


def test_saving_the_bundled_measurements_twice_asks_first() -> None:
    """The second click finds the three runs in the store by their content and asks; "Save nothing" keeps 3 runs,
    "Save all again" makes 6."""
    at = page("pages/7_Review.py")
    save = next(b for b in at.button if plain(b.label) == "Save the bundled measurements (h200-2026-11-22)")
    save.click().run()
    assert not at.exception and len(at.dataframe[0].value) == 3 and not at.warning
    next(b for b in at.button if b.label.startswith("Save the bundled measurements")).click().run()
    assert not at.exception and len(at.dataframe[0].value) == 3  # nothing saved yet
    ids = sorted(int(i) for i in at.dataframe[0].value["id"])
    assert [plain(w.value) for w in at.warning] == [
        "The run store already holds 3 of these 3 run(s) with the same measurements "
        f"(run {', '.join(f'#{i}' for i in ids)}). Saving them again would list each twice."
    ]
    assert not any(b.label.endswith("new run(s) only") for b in at.button)  # none of the three is new
    next(b for b in at.button if b.label == "Save nothing").click().run()
    assert not at.warning and len(at.dataframe[0].value) == 3
    next(b for b in at.button if b.label.startswith("Save the bundled measurements")).click().run()
    next(b for b in at.button if b.label == "Save all again").click().run()
    assert not at.exception and not at.warning and len(at.dataframe[0].value) == 6


def test_identical_runs_are_found_by_content_not_label(tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    runs = bundles.bundled_runs(BUNDLE)
    assert identical_runs(store, runs) == [None, None, None]
    ids = store.import_runs(runs[:2])
    relabelled = replace(runs[0], label="the same file, another label", notes="typed later")
    slower = replace(runs[1], results=(replace(runs[1].results[0], time_median_ms=9.0), *runs[1].results[1:]))
    assert identical_runs(store, [*runs, relabelled, slower]) == [ids[0], ids[1], None, ids[0], None]


def test_review_page_save_compare_export_delete(tmp_path: Path) -> None:
    at = page("pages/7_Review.py")
    assert any("No saved runs yet" in i.value for i in at.info)
    save = next(b for b in at.button if b.label.startswith("Save the bundled measurements"))
    save.click().run()
    assert not at.exception
    runs = at.dataframe[0].value
    assert len(runs) == 3 and set(runs["device"]) == {"NVIDIA H200"}
    # the default comparison is the bundled pair with kernels and sizes in common: the earlier run vs the later one
    labels = dict(zip(runs["id"], runs["label"], strict=True))
    assert "earlier run" in labels[at.selectbox(key="baseline").value]
    assert labels[at.multiselect(key="candidates").value[0]].endswith("bench_1024-4096")
    side = next(d.value for d in at.dataframe if "Time (ms) Δ%" in d.value.columns)
    assert len(side) == 48  # every kernel and size of the earlier run
    # Neither bundled run saved per-launch times: no verdict, the medians' change, and the reason said once.
    assert set(side["Time (ms) verdict"]) == {"no verdict"}
    v1c = side[(side["kernel"] == "v1-coalesced") & (side["size"] == "4096x4096x4096")].iloc[0]
    assert v1c["Time (ms) interval"] == "medians only: -2.2 %, no verdict"
    assert "Time (ms) note" not in side.columns
    assert sum("neither run saved per-launch times" in plain(c.value) for c in at.caption) == 1
    unmatched = "Not compared: 3 kernel/size pair(s) in one run only"
    assert [e.children for e in at.expander if e.label == unmatched] == [{}]  # its table: sent only while open
    at.session_state["unmatched_open"] = True
    at.run()
    assert len(next(e for e in at.expander if e.label == unmatched).dataframe[0].value) == 3

    # a candidate: the 8192 run with every time 20 % lower, imported as JSON
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    base = next(r for r in (store.get_run(i) for i in runs["id"]) if "8192" in r["label"])
    cand = {**base, "label": "candidate", "created_utc": "2026-11-23T00:00:00Z"}
    cand["results"] = [{**r, "time_median_ms": r["time_median_ms"] * 0.8} for r in base["results"]]
    at.file_uploader(key="import_json").set_value(
        ("runs.json", export_runs_json([cand]).encode(), "application/json")
    ).run()
    next(b for b in at.button if b.label == "Import").click().run()
    assert not at.exception
    assert len(at.dataframe[0].value) == 4

    cand_id = int(at.dataframe[0].value.set_index("label").loc["candidate", "id"])
    at.selectbox(key="baseline").set_value(int(base["id"])).run()
    at.multiselect(key="candidates").set_value([cand_id]).run()
    assert not at.exception
    side = next(d.value for d in at.dataframe if "Time (ms) Δ%" in d.value.columns)
    assert len(side) == len({(r["kernel"], r["m"]) for r in base["results"]})
    assert side["Time (ms) Δ%"].round(3).eq(-20.0).all()
    assert (side["Time (ms) verdict"] == "no verdict").all()  # the bundled runs saved no per-launch times
    assert (side["Time (ms) interval"] == "medians only: -20.0 %, no verdict").all()
    roof = figures(at)[0]
    assert kernel_points(roof) == {r["kernel"]: 1 for r in base["results"]}
    baseline_traces = [t for t in roof["data"] if t.get("meta") == "baseline"]
    assert len(baseline_traces) == len({r["kernel"] for r in base["results"]})
    assert not any(t.get("showlegend", True) and "baseline)" in t.get("name", "") for t in roof["data"])
    assert {b.label for b in at.get("download_button")} >= {"Export HTML report", "Export comparison CSV"}

    at.session_state["filters_open"] = True  # the filters are drawn only while their expander is open
    at.run().text_input(key="f_label").set_value("candidate").run()
    assert list(at.dataframe[0].value["label"]) == ["candidate"]
    at.session_state["filters_open"] = False  # closed, the filter stays and the page says so
    at.run()
    assert list(at.dataframe[0].value["label"]) == ["candidate"] and not at.text_input
    assert "Filtered by label “candidate”." in [c.value for c in at.caption]
    at.session_state["filters_open"] = True
    at.run().text_input(key="f_label").set_value("").run()

    at.session_state["review_tab"] = "Open / delete"  # drawn only while open
    at.run().selectbox(key="open_run").set_value(cand_id).run()
    next(b for b in at.button if b.label == f"Delete run #{cand_id}").click().run()
    assert any("to the trash" in w.value for w in at.warning)
    assert len(at.dataframe[0].value) == 4  # nothing deleted before confirming
    next(b for b in at.button if b.label == "Yes, delete").click().run()
    assert not at.exception
    assert cand_id not in list(at.dataframe[0].value["id"])
    # without sign-in the local user is the admin: the run waits in the trash, and the audit log says who moved it;
    # both are built and sent only while the admin expander is open
    (admin,) = [e for e in at.expander if e.label == "Admin: trash (1) and audit log"]
    assert not at.table and not [d for d in at.dataframe if "deleted_by" in d.value.columns] and not admin.children
    at.session_state["admin_open"] = True
    at.run()
    assert [list(d.value["id"]) for d in at.dataframe if "deleted_by" in d.value.columns] == [[cand_id]]
    log = at.table[0].value
    assert list(log["action"])[:2] == ["delete", "import"] and log["run_id"].iloc[0] == str(cand_id)
    next(b for b in at.button if b.label == f"Restore run #{cand_id}").click().run()
    assert not at.exception and cand_id in list(at.dataframe[0].value["id"])


PAGE_FILES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("[0-9]_*.py"))


@pytest.mark.parametrize("bundle", [BUNDLE.name, None], ids=["h200-2026-11-22", "newest"])
@pytest.mark.parametrize("name", PAGE_FILES)
def test_no_table_shows_none(name: str, bundle: str | None) -> None:
    """Streamlit's grid draws a missing value as "None": every table of every page (bundled data, the H200 bundle
    and the default) has none, and no code name for a header. The values are read with AppTest: the grid draws on
    a canvas, where a browser test finds no cells."""
    at = page(name, bundle)
    if name.endswith("7_Review.py"):
        next(b for b in at.button if b.label.startswith("Save the bundled measurements")).click().run()
        assert not at.exception
    newest = bundles.discover_bundles()[0]
    frames = [d.value for d in at.dataframe]
    if bundle is None and name.endswith(("3_Profile.py", "6_Reports.py")) and not newest.ncu_groups:
        with_one = next(b for b in bundles.discover_bundles() if b.ncu_groups)
        assert [plain(i.value) for i in at.info][-1] == (
            f"The bundled measurements chosen in the sidebar ({newest.label}) hold no ncu capture. Upload an ncu "
            f"report on the Reports page or choose bundled measurements with one, such as {with_one.label}."
        )
    else:
        if name.endswith("8_Why.py"):  # one section drawn at a time: the others' tables too
            for section in why_view.SECTIONS[1:]:
                at.session_state[why_view.SECTION_KEY] = section
                frames += [d.value for d in at.run().dataframe]
        if name.endswith("9_Indexing.py"):  # likewise: the matrix view, first, has no table
            for section in indexing.SECTIONS[1:]:
                at.session_state[indexing.SECTION_KEY] = section
                frames += [d.value for d in at.run().dataframe]
        assert len(frames) > 0
    for frame in frames:
        assert not frame.isna().any().any(), (name, frame.columns[frame.isna().any()].tolist())
        assert not frame.astype(str).isin(["None", "nan", "NaN"]).any().any(), name
        assert not {"device_name", "n_results", "shared_mem", "device_cc", "catalog_commit"} & set(
            map(str, frame.columns)
        )
        assert "shared_mem" not in frame.astype(str).to_numpy().ravel().tolist()


def test_benchmark_page_ab_mode_and_an_ab_result() -> None:
    at = page("pages/2_Benchmark.py")
    at.radio(key="bench_mode").set_value("A/B").run()
    assert not at.exception
    assert at.selectbox(key="ab_a").value == "v7-warptile" and at.selectbox(key="ab_b").value == "v8-async"
    # A finished A/B of this session (the real H100 one at 4096, 300 pairs) shows its paired verdict.
    at.session_state["live_bench"] = load_document(
        ROOT / "results" / "h100-2026-11-24" / "verdicts" / "ab_4096_r300.json"
    )
    at.run()
    at.radio(key="bench_source").set_value("benchmark run (this session)").run()
    assert not at.exception
    assert any(s.value.startswith("A/B: v8-async against v7-warptile") for s in at.subheader)
    ab = at.dataframe[0].value
    assert list(ab["verdict"]) == ["faster"] and ab["pairs"].iloc[0] == 300


def test_benchmark_page_warns_where_a_run_was_built_by_another_nvrtc_than_its_tuning_record() -> None:
    """Session 39's H200 run (nvrtcstamp/check_old_record.json) as a run built by NVRTC 13.2 would read: its sgemm-auto
    and v9-regdb results carry the runner's own labels for that NVRTC on the committed record, whose 2048-8192
    cubes NVRTC 13.0 measured. The page lists each under the table; the real run, built by 13.0, has no warning."""
    real = load_document(ROOT / "results" / "h200-2026-12-01" / "nvrtcstamp" / "check_old_record.json")
    session = SimpleNamespace(device={"name": "NVIDIA H200", "cc": "9.0", "sm_count": 132, "nvrtc": "13.2"})

    def relabelled(r):
        if r.kernel == "cublas":
            return r
        return replace(r, config=_spec_and_result(session, r.kernel, r.shape)[1].config)

    for document, warned in ((real, 0), (replace(real, results=[relabelled(r) for r in real.results]), 6)):
        at = page("pages/2_Benchmark.py")
        at.session_state["live_bench"] = document
        at.run()
        at.radio(key="bench_source").set_value("benchmark run (this session)").run()
        assert not at.exception, [e.value for e in at.exception]
        # The lines are Markdown with every special character escaped (ui.safe_md): read as the page shows them.
        shown = [w.value.replace("\\", "") for w in at.warning]
        lines = [line for text in shown for line in text.splitlines() if line.startswith("- ")]
        assert len(lines) == warned
        assert len(shown) == (1 if warned else 0)
        if warned:
            assert shown[0].startswith(
                "The tuning record's choices below were measured with NVRTC 13.0, this run builds with 13.2: a "
                "compiler change can reorder the configurations, so sweep them again with tune under this NVRTC."
            )
            assert lines[:2] == [
                "- sgemm-auto 2048x2048x2048 ran v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk",
                "- v9-regdb 2048x2048x2048 ran v9-regdb-128x256x16-w64x64-t8x16-s3-o3",
            ]
