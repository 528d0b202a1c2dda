"""The Details view, the metric browser and the baseline comparison of launches, on real `.ncu-rep` captures
(tests/fixtures/ncu_rep: our kernels and a PyTorch+Triton program on an H100; results/: v4 on an H200)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from profiling.analysis import details as D
from profiling.analysis import launch_compare as C
from profiling.analysis import metric_browser as B
from profiling.app import details_view, ui
from profiling.charts.details import memory_flow, peak_bars
from profiling.cli import main
from profiling.nsight import load as L

ROOT = Path(__file__).resolve().parent.parent
V4_FULL = ROOT / "results" / "h200-2026-11-22" / "v4_full_1024.ncu-rep"
OURS = ROOT / "tests" / "fixtures" / "ncu_rep" / "ours_full_1024.ncu-rep.gz"
FOREIGN = ROOT / "tests" / "fixtures" / "ncu_rep" / "foreign_full.ncu-rep.gz"


@pytest.fixture(scope="module")
def v4() -> L.Report:
    return L.load_report(V4_FULL)


@pytest.fixture(scope="module")
def ours() -> dict[str, object]:
    report = L.load_report(OURS)
    return {launch.label.split()[0]: launch for launch in report.launches}


@pytest.fixture(scope="module")
def foreign() -> L.Report:
    return L.load_report(FOREIGN)


def test_details_of_v4_show_ncus_figures(v4) -> None:
    """The numbers ncu's Details page shows for this launch (GPU Speed Of Light, Memory Workload Analysis,
    Occupancy, Launch Statistics), read from the report, and v4's story: registers limit the blocks per SM."""
    view = D.details(v4.launches[0])
    sol = {f.label: f.value for f in view.speed_of_light}
    assert sol["duration"] == 268_608
    assert sol["SM throughput"] == pytest.approx(14.07, abs=0.01)
    assert sol["memory throughput"] == pytest.approx(36.62, abs=0.01)
    assert sol["L1/TEX throughput"] == pytest.approx(77.11, abs=0.01)
    assert sol["DRAM throughput"] == pytest.approx(0.65, abs=0.01)
    assert view.pipes[0].label == "FMA pipe" and view.pipes[0].value == pytest.approx(25.30, abs=0.01)
    memory = {m.level: m for m in view.memory}
    assert memory["L1/TEX"].hit_rate_pct == pytest.approx(75.00, abs=0.01)
    assert memory["L2"].hit_rate_pct == pytest.approx(92.12, abs=0.01)
    assert memory["L2"].bytes == 122_769_920 and memory["DRAM"].bytes == 8_406_528
    # L1/TEX bytes: global load and store sectors x 32 B (8,388,608 + 1,044,682 sectors).
    assert memory["L1/TEX"].bytes == 32 * (8_388_608 + 1_044_682)
    assert memory["Shared"].bytes == 128 * 16_852_239
    assert ("L2", "DRAM", 8_406_528) in view.flows
    assert view.occupancy.theoretical_pct == 25 and view.occupancy.achieved_pct == pytest.approx(12.48, abs=0.01)
    assert view.occupancy.limits["registers"] == 2 and view.occupancy.limiters == ["registers"]
    stats = {f.label: f.value for f in view.launch}
    assert stats["registers"] == 119 and stats["grid size"] == 64 and stats["block size"] == 256
    speedups = [r.estimated_speedup_pct for r in view.rules]
    assert view.rules[0].rule == "HighPipeUtilization" and speedups[0] == pytest.approx(87.99, abs=0.01)
    known = [s for s in speedups if s is not None]
    assert known == sorted(known, reverse=True) and speedups[len(known) :] == [None] * (len(speedups) - len(known))


def test_details_of_a_tensor_core_kernel_and_two_limiters(ours) -> None:
    view = D.details(ours["wgmma-tma-store"])
    assert view.pipes[0].label == "tensor (all) pipe" and view.pipes[0].value == pytest.approx(55.19, abs=0.01)
    assert view.occupancy.limiters == ["registers", "shared memory"]


def test_details_of_another_programs_launches(foreign) -> None:
    """Every launch of the PyTorch+Triton capture gets a Details view with its speed of light and rules."""
    for launch in foreign.launches:
        view = D.details(launch)
        assert all(f.value is not None for f in view.speed_of_light), launch.label
        assert view.rules, launch.label


def test_details_of_a_csv_without_the_full_set_say_n_a() -> None:
    (launch, *_) = L.load_report(ROOT / "tests" / "fixtures" / "ncu" / "raw.csv").launches
    view = D.details(launch)
    assert view.speed_of_light[0].value is not None  # duration
    assert any(f.value is None for f in view.pipes)
    fig = peak_bars(view.pipes, "pipes")
    assert "n/a" in fig.data[0].text


def test_memory_flow_chart_names_bytes_throughput_and_hit_rate(v4) -> None:
    fig = memory_flow(D.details(v4.launches[0]))
    texts = [a.text for a in fig.layout.annotations]
    assert "<b>L2</b><br>123 MB<br>457 GB/s<br>hit 92.1 %<br>7.3 % of peak" in texts
    assert "<b>DRAM</b><br>8.41 MB<br>31.3 GB/s<br>0.7 % of peak" in texts
    assert "8.41 MB" in texts and "101 MB" in texts  # L2 -> DRAM and L1/TEX <-> L2 on the arrows


def test_comparison_v3_to_v4_sorted_by_size_and_coloured_by_direction(ours) -> None:
    rows = C.compare(ours["v3"], ours["v4"])
    by_label = {r.label: r for r in rows}
    duration = by_label["duration"]
    assert (duration.baseline, duration.candidate) == (513_184, 271_296)
    assert duration.delta_pct == pytest.approx(-47.13, abs=0.01) and duration.change == "better"
    assert by_label["shared bytes"].change == "better"  # v4's transposed tile: fewer shared wavefronts
    assert by_label["L1/TEX hit rate"].change == "worse"
    assert by_label["theoretical occ."].change == "same"
    sizes = [abs(r.delta_pct) for r in rows if r.delta_pct is not None and r.change != "same"]
    assert sizes == sorted(sizes, reverse=True)
    # Every figure but the tensor pipes: two FP32 kernels are no tensor-core work.
    assert {r.label for r in rows} == {m.label for m in D.DETAIL_METRICS if m.metric.applies == "any"}


def test_compare_tab_table_marks_better_green_and_worse_red(ours) -> None:
    from profiling.app.details_view import compare_table

    table = compare_table(ours["v3"], ours["v4"], ()).to_pandas().set_index("metric")
    assert table.loc["duration", "change"] == "🟢 better" and table.loc["duration", "Δ %"] == "-47.1 %"
    assert table.loc["L1/TEX hit rate", "change"] == "🔴 worse"
    assert table.loc["theoretical occ.", "change"] == "same"
    assert compare_table(ours["v3"], ours["v4"], ()) is compare_table(ours["v3"], ours["v4"], ())  # built once


def test_comparison_of_launches_from_two_reports_with_an_added_metric(v4, ours) -> None:
    """The same kernel on an H200 (results/) and an H100 (fixture): two reports, one added raw metric."""
    extra = "smsp__pcsamp_warps_issue_stalled_barrier"
    rows = C.compare(v4.launches[0], ours["v4"], [extra])
    added = next(r for r in rows if r.metric == extra)
    assert added.section == "Added" and added.unit == "warp"
    assert added.baseline == v4.launches[0].value(extra) and added.candidate == ours["v4"].value(extra)


def test_compare_launches_command_strict_json(capsys) -> None:
    code = main(["compare-launches", f"{OURS}@v3", f"{OURS}@v4", "--json", "--metric", "dram__bytes_read.sum"])
    assert code == 0
    out = capsys.readouterr().out
    document = json.loads(out, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert document["schema"] == "gemmlens.compare_launches.v1"
    assert document["baseline"]["label"] == "v3 1024x1024x1024" and document["candidate"]["id"] == "2"
    duration = next(m for m in document["metrics"] if m["metric"] == "gpu__time_duration.sum")
    assert duration["delta_pct"] == pytest.approx(-47.13, abs=0.01) and duration["change"] == "better"
    assert any(m["metric"] == "dram__bytes_read.sum" for m in document["metrics"])
    assert any(m["delta_pct"] is None for m in document["metrics"])  # from zero: null, not Infinity


def test_compare_launches_bad_launch_is_one_line(capsys) -> None:
    assert main(["compare-launches", f"{OURS}@v3", f"{OURS}@nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'nope' matches no launch" in err and "1: v3 1024x1024x1024" in err


def test_metric_browser_search_and_filters(foreign) -> None:
    frame = B.metric_frame([("foreign", foreign)])
    assert len(frame) >= 2000 and frame.shape[1] == len(B.INFO_COLUMNS) + 17 + 1
    found = B.search(frame, "l2 hit rate")
    assert "lts__t_sector_hit_rate.pct" in set(found["metric"])  # by its label, "L2 Hit Rate"
    assert set(B.search(frame, "DRAM__BYTES.sum")["metric"]) >= {"dram__bytes.sum", "dram__bytes.sum.per_second"}
    sol = B.search(frame, "", sections=["GPU Speed Of Light Throughput"], units=["%"])
    assert "sm__throughput.avg.pct_of_peak_sustained_elapsed" in set(sol["metric"]) and set(sol["unit"]) == {"%"}
    assert B.search(frame, "no such metric anywhere").empty


@pytest.fixture
def no_gpu(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()


def details_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/10_Details.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_details_page_on_the_bundled_ncu_rep(no_gpu) -> None:
    at = details_page()
    assert at.selectbox(key="details_source").value.endswith("v4_full_1024.ncu-rep (2026-11-22)")
    assert at.selectbox(key="details_launch").value.startswith("v4 1024x1024x1024")
    assert any("limited by **registers**" in m.value for m in at.markdown)
    memory = next(df.value for df in at.dataframe if "hit rate" in df.value.columns)
    assert list(memory["level"]) == ["L1/TEX", "Shared", "L2", "DRAM"] and memory["hit rate"][2] == "92.1 %"
    # every rule's title in one list, largest speedup first; their descriptions behind one expander, sent only
    # while it is open (round 13: an expander a rule was 19 messages a visit)
    (header,) = [h.value for h in at.subheader if h.value.startswith("Rules (")]
    count = int(header.removeprefix("Rules (").split(")")[0])
    rep = next(r for b in ui.bundles() for r in b.ncu_reps if r.name == "v4_full_1024.ncu-rep")
    shown = [details_view.details_shown(launch) for launch in details_view._read(str(rep)).launches]
    listed = next(m.value for m in at.markdown if m.value.startswith("- OPT"))
    rules = next(s.rules for s in shown if details_view.rules_list_md(s.rules) == listed)
    assert len(rules) == count > 1 and listed.count("\n- ") == count - 1
    assert listed.startswith("- OPT · HighPipeUtilization (ComputeWorkloadAnalysis) · est. speedup 88.0 %")
    (box,) = [e for e in at.expander if e.label == "What each rule says"]
    assert not box.markdown and not [e for e in at.expander if "est. speedup" in e.label]
    at.session_state["rule_descriptions"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (box,) = [e for e in at.expander if e.label == "What each rule says"]
    (text,) = [m.value for m in box.markdown]
    assert all(rule.description_md in text and f"**{rule.label_md}**" in text for rule in rules)
    assert rules[0].description_md


def test_details_page_draws_only_the_open_tab_and_keeps_the_others_choices(no_gpu) -> None:
    at = details_page()
    assert at.selectbox(key="details_launch") and not [w for w in at.text_input if w.key == "metric_query"]
    assert not [w for w in at.selectbox if w.key == "cmp_baseline"]  # the Compare tab is not drawn
    at.session_state["details_tab"] = "Metrics"
    at.run()
    at.text_input(key="metric_query").set_value("l2 hit rate").run()
    assert not any(df.value.columns.tolist()[:2] == ["level", "bytes"] for df in at.dataframe)  # Details' hidden
    at.session_state["details_tab"] = "Details"
    at.run()
    assert not [w for w in at.text_input if w.key == "metric_query"]
    at.session_state["details_tab"] = "Metrics"
    at.run()
    assert not at.exception and at.text_input(key="metric_query").value == "l2 hit rate"


def test_metric_browser_on_the_page_adds_to_the_comparison(no_gpu) -> None:
    at = details_page()
    at.session_state["details_tab"] = "Metrics"
    at.run()
    at.text_input(key="metric_query").set_value("l2 hit rate").run()
    assert not at.exception
    found = next(df.value for df in at.dataframe if "compare" in df.value.columns)
    assert list(found["metric"]) == ["lts__t_sector_hit_rate.pct"] and list(found["label"]) == ["L2 Hit Rate"]
    assert any(c.value.startswith("1 of 2,212 metrics") for c in at.caption)
    at.session_state["details_added_metrics"] = ["lts__t_sector_hit_rate.pct.peak_sustained"]
    at.session_state["details_tab"] = "Compare launches"
    at.run()
    compared = next(df.value for df in at.dataframe if "Δ %" in df.value.columns)
    assert "lts__t_sector_hit_rate.pct.peak_sustained" in set(compared["metric"])


def test_nvtx_range_reads_the_same_from_csv_text_and_ncu_rep() -> None:
    """One range, three inputs of the PyTorch+Triton program: ncu's raw CSV column, its text output and the
    .ncu-rep all name it "foreign"; our worker's range keeps its own colons."""
    from profiling.identity import nvtx_label

    inputs = [
        ROOT / "tests" / "fixtures" / "ncu_rep" / "foreign_full_raw.csv",
        ROOT / "tests" / "fixtures" / "foreign" / "details_text.txt",
        FOREIGN,
    ]
    for path in inputs:
        report = L.load_report(path)
        assert {nvtx_label(launch.nvtx) for launch in report.launches} == {"foreign"}, path.name
    (csv_launch,) = L.load_report(ROOT / "tests" / "fixtures" / "ncu" / "full_raw.csv").launches
    assert nvtx_label(csv_launch.nvtx) == nvtx_label(L.load_report(V4_FULL).launches[0].nvtx)
    assert nvtx_label(csv_launch.nvtx) == "gemmlens:v4:1024x1024x1024"
    assert nvtx_label(None) == ""


def test_longest_launches_filtered_by_kernel_and_nvtx(foreign, ours) -> None:
    from profiling.analysis import launch_select as S

    reports = [("foreign", foreign), ("ours", L.load_report(OURS))]
    assert S.nvtx_ranges(reports)[:2] == ["foreign", "gemmlens:cublas:1024x1024x1024"]
    top = S.select_launches(reports, top=3)
    times = [launch.value("gpu__time_duration.sum") for _, launch in top]
    assert len(top) == 3 and times == sorted(times, reverse=True)
    elementwise = S.select_launches(reports, kernel="ELEMENTWISE", nvtx="foreign")
    assert len(elementwise) == 9 and all("elementwise" in launch.name for _, launch in elementwise)
    ours_only = S.select_launches(reports, nvtx="gemmlens:v4:1024x1024x1024")
    assert [launch.label for _, launch in ours_only] == ["v4 1024x1024x1024"]


def test_report_command_reads_a_gzip_csv(capsys) -> None:
    assert main(["report", str(ROOT / "tests" / "fixtures" / "foreign" / "details_all.csv.gz")]) == 0
    out = capsys.readouterr().out
    assert "details_all.csv.gz: 17 launch(es), details layout" in out.splitlines()[0]
