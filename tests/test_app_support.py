"""The app's logic, tested directly on the bundled real measurements and the real ncu fixtures (no GPU)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from kernels.catalog import CATALOG
from kernels.registry import get_kernel
from profiling import charts, usecases
from profiling.analysis import ceilings, launches
from profiling.app import bundles, kernel_facts, table_format, tables, text, ui
from profiling.app.gpu_queue import GpuJobQueue
from profiling.device_model import DeviceInfo
from profiling.errors import InvalidInput, ReportError
from profiling.gpu import env as gpu_env
from profiling.gpu.jobs import BenchSettings, sweep_sizes
from profiling.nsight import load as ncu_load
from profiling.paths import BUNDLED_RESULTS_DIR
from profiling.runs import review
from profiling.runs.comparison import VERDICT_COLORS, compare_runs, side_by_side
from profiling.runs.records import SavedRun
from profiling.shape import Shape

ROOT = Path(__file__).resolve().parent.parent
NCU = ROOT / "tests" / "fixtures" / "ncu"
H200 = BUNDLED_RESULTS_DIR / "h200-2026-11-22"


@pytest.fixture(scope="module")
def bundle() -> bundles.Bundle:
    found = {b.name: b for b in bundles.discover_bundles()}
    return found["h200-2026-11-22"]


@pytest.fixture(scope="module")
def doc(bundle):
    return bundles.load_bench(bundle)


@pytest.fixture(scope="module")
def reports(bundle):
    return bundles.load_bundle_reports(bundle)


# --- bundled data --------------------------------------------------------------------------------


def _results_docs() -> dict[str, dict]:
    docs = {}
    for path in sorted(H200.glob("*.json")):
        doc = json.loads(path.read_text())
        if isinstance(doc, dict) and doc.get("schema") == "gemmlens.bench.v1":
            docs[path.name] = doc
    return docs


def test_bundle_is_discovered_with_device_and_date(bundle) -> None:
    assert bundle.device_name == "NVIDIA H200"
    assert bundle.date == "2026-11-22"
    docs = _results_docs()
    bench = [n for n in docs if n.startswith("bench")]
    assert [p.name for p in bundle.bench_files] == bench and "bench_8192.json" in bench
    assert [p.name for p in bundle.other_results] == [n for n in docs if n not in bench]
    assert ["ncu_ladder_1024_raw.csv", "ncu_ladder_1024_details.csv"] in [
        [p.name for p in g] for g in bundle.ncu_groups
    ]
    assert "NVIDIA H200" in bundle.label and "2026-11-22" in bundle.label


def test_new_result_folders_are_discovered_newest_first(tmp_path: Path) -> None:
    older, newer, empty = tmp_path / "h200-2026-11-22", tmp_path / "a100-2027-01-05", tmp_path / "notes"
    for folder in (older, newer, empty):
        folder.mkdir()
    shutil.copy(H200 / "bench_8192.json", older)
    shutil.copy(H200 / "bench_8192.json", newer)
    (empty / "readme.txt").write_text("no data here")
    (newer / "broken.json").write_text("{not json")
    found = bundles.discover_bundles(tmp_path)
    assert [b.name for b in found] == ["a100-2027-01-05", "h200-2026-11-22"]
    assert [p.name for p in found[0].bench_files] == ["bench_8192.json"]  # the broken file is skipped


def test_every_results_folder_with_a_bench_document_is_a_bundle_newest_first() -> None:
    """The README's 2026-11-24 headline runs (auto_round3, wgmma_store) are bundles of their own, newest first: of
    one day, the benchmark written last (H100 auto_round3 at 16:07:46 UTC before the H200's at 16:03:02)."""
    found = {b.name: b for b in bundles.discover_bundles()}
    for name in ("h100-2026-11-24/auto_round3", "h200-2026-11-24/auto_round3", "h100-2026-11-24/wgmma_store"):
        assert name in found, name
    auto = found["h100-2026-11-24/auto_round3"]
    assert (auto.device_name, auto.date, [p.name for p in auto.bench_files]) == (
        "NVIDIA H100 80GB HBM3",
        "2026-11-24",
        ["auto_bench.json"],
    )
    assert auto.label == "NVIDIA H100 80GB HBM3, measured 2026-11-24 (results/h100-2026-11-24/auto_round3)"
    store = found["h100-2026-11-24/wgmma_store"]
    assert [[p.name for p in g] for g in store.ncu_groups] == [["raw_4096.csv", "details_4096.csv"]]
    assert "wgmma-tma-store" in set(tables.bench_frame(bundles.load_bench(store))["kernel"])
    order = [b.name for b in bundles.discover_bundles()]
    assert order.index("h100-2026-11-24/auto_round3") < order.index("h200-2026-11-24/auto_round3")
    dates = [b.date for b in bundles.discover_bundles()]
    assert dates == sorted(dates, reverse=True)  # the default (first) is of the latest date
    # folders without a benchmark document (tuning records, a cluster run, the earlier runs) are not bundles
    assert not {"h100-2026-11-24/tune", "h100-2026-11-24/cluster1", "h200-2026-11-22/earlier"} & set(found)
    runs = bundles.bundled_runs(auto)
    assert [r.label for r in runs] == ["bundled NVIDIA H100 80GB HBM3 2026-11-24 auto_round3/auto_bench"]


def test_a_run_subfolder_is_a_bundle_only_with_a_bench_document(tmp_path: Path) -> None:
    day = tmp_path / "h200-2026-11-22"
    for sub in ("round1", "tune", "earlier"):
        (day / sub).mkdir(parents=True)
    shutil.copy(H200 / "bench_8192.json", day / "round1" / "auto_bench.json")
    shutil.copy(H200 / "tuning.json", day / "tune" / "tuning.json")
    shutil.copy(H200 / "bench_8192.json", day / "earlier" / "bench_8192.json")
    found = bundles.discover_bundles(tmp_path)
    assert [b.name for b in found] == ["h200-2026-11-22/round1"]
    assert found[0].date == "2026-11-22" and found[0].device_name == "NVIDIA H200"


def test_the_bundle_index_on_disk_is_what_discovery_finds_until_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMMLENS_CACHE_DIR", str(tmp_path / "cache"))
    day = tmp_path / "results" / "h200-2026-11-22"
    (day / "round1").mkdir(parents=True)
    shutil.copy(H200 / "bench_8192.json", day / "round1" / "auto_bench.json")
    root = tmp_path / "results"
    first = bundles.indexed_bundles(root)
    assert first == bundles.discover_bundles(root) and [b.name for b in first] == ["h200-2026-11-22/round1"]
    assert len(list((tmp_path / "cache" / "bundle-index").glob("*.pickle"))) == 1
    # Read back, not discovered again: discovery would now fail.
    monkeypatch.setattr(bundles, "discover_bundles", lambda _root: pytest.fail("discovered again"))
    assert bundles.indexed_bundles(root) == first
    monkeypatch.undo()
    monkeypatch.setenv("GEMMLENS_CACHE_DIR", str(tmp_path / "cache"))
    # A new document is a new key: the index is built again and holds the new bundle.
    (day / "round2").mkdir()
    shutil.copy(H200 / "bench_8192.json", day / "round2" / "auto_bench.json")
    assert [b.name for b in bundles.indexed_bundles(root)] == ["h200-2026-11-22/round2", "h200-2026-11-22/round1"]
    assert len(list((tmp_path / "cache" / "bundle-index").glob("*.pickle"))) == 2


def test_merged_bench_has_every_result(doc) -> None:
    frame = tables.bench_frame(doc)
    bench = [d for n, d in _results_docs().items() if n.startswith("bench")]
    assert len(frame) == sum(len(d["results"]) for d in bench)
    sizes = sorted({r["m"] for d in bench for r in d["results"]})
    assert list(frame["size"].unique()) == [f"{n}x{n}x{n}" for n in sizes]
    table = tables.bench_table(frame)
    for column in ("time (ms)", "TFLOP/s", "% of FP32 peak", "% of cuBLAS", "rel. error", "clocks capped"):
        assert column in table.columns
    v8 = frame[(frame.kernel == "v8-async") & (frame["size"] == "8192x8192x8192")].iloc[0]
    assert v8.tflops > 20 and 0 < v8.pct_cublas < 150


def test_bench_charts_have_one_trace_per_kernel(doc) -> None:
    frame = tables.bench_frame(doc)
    fig = charts.tflops_figure(frame)
    assert {t.name for t in fig.data} == set(frame["kernel"])
    v3 = next(t for t in fig.data if t.name == "v3")
    assert list(v3.x) == list(frame[frame.kernel == "v3"]["size"])
    assert "8192x8192x8192" in list(v3.x)
    bars = charts.pct_cublas_figure(frame)
    assert "cublas" not in {t.name for t in bars.data} and "v5" in {t.name for t in bars.data}


def test_sweep_sizes() -> None:
    assert sweep_sizes(512, 4096) == [Shape(n, n, n) for n in (512, 1024, 2048, 4096)]
    assert sweep_sizes(1000, 3000, 3) == [Shape(1000, 1000, 1000), Shape(3000, 3000, 3000)]
    with pytest.raises(InvalidInput):
        sweep_sizes(4096, 512)
    with pytest.raises(InvalidInput, match="at most 2147483647"):
        sweep_sizes(2**30, 2**32)


# --- roofline ------------------------------------------------------------------------------------


def test_bench_roofline_has_a_point_per_kernel(doc) -> None:
    frame = tables.bench_frame(doc)
    points = charts.bench_roofline_points(frame, "8192x8192x8192")
    fig = charts.roofline(points, ceilings.ceilings_for(doc.device), "t")
    assert charts.kernel_points(fig) == {k: 1 for k in frame[frame["size"] == "8192x8192x8192"]["kernel"]}
    assert points.set_index("kernel").loc["cublas-hgemm", "compute"] == "tensor"
    assert any("FP16 tensor" in (t.name or "") for t in fig.data)


def test_rows_without_an_operation_ask_the_catalog(doc) -> None:
    rows = [dataclasses.replace(r, operation=None) for r in doc.results]
    rows.append(dataclasses.replace(rows[0], kernel="my_hgemm_kernel"))
    frame = tables.bench_frame(dataclasses.replace(doc, results=rows))
    by_kernel = frame.drop_duplicates("kernel").set_index("kernel")["operation"]
    assert by_kernel["wmma-async"] == by_kernel["cublas-hgemm"] == "hgemm_addmm"
    assert by_kernel["v5"] == by_kernel["my_hgemm_kernel"] == "sgemm"
    points = charts.bench_roofline_points(frame, "8192x8192x8192").set_index("kernel")
    assert points.loc["wmma-async", "compute"] == "tensor" and points.loc["v9-regdb", "compute"] == "fp32"


def _ladder_1024(reports: list) -> list:
    """The bundled capture of cuBLAS and the ladder at 1024 (the assertions below are its real values)."""
    chosen = [r for r in reports if r[0] == "ncu_ladder_1024_raw.csv"]
    assert len(chosen) == 1
    return chosen


def test_report_roofline_has_three_levels_per_launch(reports) -> None:
    reports = _ladder_1024(reports)  # tests/fixtures/ncu/raw.csv is the same capture
    points = charts.report_roofline_points(reports)
    fig = charts.roofline(points, ceilings.ceilings_for(None, reports[0][1]), "t")
    counts = charts.kernel_points(fig)
    assert set(counts) == {"cublas", "v1", "v1-coalesced", "v2", "tiled-8", "tiled-16", "tiled-32", "v3", "v4", "v5"}
    assert set(counts.values()) == {3}
    table = tables.roofline_table(points, ceilings.ceilings_for(None, reports[0][1]))
    assert len(table) == 30 and table["% of ceiling"].between(0, 100).all()


# --- ncu tables ----------------------------------------------------------------------------------


def test_key_metrics_table_on_bundled_capture(reports) -> None:
    table = tables.key_metrics_table(_ladder_1024(reports))
    assert len(table) == 10
    v1 = table.set_index("kernel").loc["v1"]
    assert v1["duration (µs)"] == pytest.approx(4420.992)
    assert v1["registers"] == 32
    assert v1["achieved occ. (%)"] == pytest.approx(92.83, abs=0.01)
    for column in (
        "shared-load conflict rate (%)",
        "shared-store wavefronts per request",
        "DRAM (MB)",
        "L2 (MB)",
        "L1 (MB)",
        "FP32 TFLOP/s",
    ):
        assert column in table.columns
    side = tables.compare_launches(table, [table.launch[1], table.launch[9]])
    assert list(side.columns) == [table.launch[1], table.launch[9]]
    assert side.loc["registers"].tolist() == [32, 127]


def test_findings_from_the_details_page_biggest_first(reports) -> None:
    findings = tables.findings_table(_ladder_1024(reports))
    details = ncu_load.load_report(H200 / "ncu_ladder_1024_details.csv")
    assert len(findings) == sum(len(launch.findings) for launch in details.launches) > 0
    speedups = findings["est. speedup (%)"].dropna().tolist()
    assert speedups == sorted(speedups, reverse=True)


def test_two_reports_keep_launch_keys_unique() -> None:
    raw = usecases.load_upload("raw.csv", (NCU / "raw.csv").read_bytes())
    summary = usecases.load_upload("summary.csv", (NCU / "summary.csv").read_bytes())
    table = tables.key_metrics_table([("raw.csv", raw), ("summary.csv", summary)])
    assert len(table) == 20 and table["launch"].is_unique
    assert table["launch"].str.endswith("[raw.csv]").sum() == 10


# --- uploads -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["raw.csv", "details.csv", "summary.csv", "full_details_base_units.csv", "stdout_mixed.txt"]
)
def test_real_fixtures_upload(name: str) -> None:
    report = usecases.load_upload(name, (NCU / name).read_bytes())
    assert report.source == name and len(report.launches) >= 1


def _bad_files() -> dict[str, bytes]:
    raw = (NCU / "raw.csv").read_bytes()
    return {
        "empty.csv": b"",
        "binary.csv": bytes(range(256)) * 4,
        "truncated.csv": b"\n".join(raw.splitlines()[:2]),
        "wrong.csv": b"name,value\nalpha,1\nbeta,2\n",
        "runs.json": b'{"schema": "gemmlens.runs.v1"}',
        "v4.ncu-rep": b"NVPERF" + b"\x00" * 64,
    }


@pytest.mark.parametrize("name", list(_bad_files()))
def test_bad_uploads_give_one_line_errors(name: str, monkeypatch) -> None:
    monkeypatch.setattr("profiling.nsight.tools.find_ncu", lambda *a, **k: None)
    with pytest.raises(ReportError) as info:
        usecases.load_upload(name, _bad_files()[name])
    message = str(info.value)
    assert "\n" not in message and name in message


def test_oversized_upload_is_refused() -> None:
    with pytest.raises(ReportError, match="200 MB"):
        usecases.load_upload("big.csv", b"x" * (usecases.MAX_UPLOAD_MB * 1000 * 1000 + 1))


def test_md_escape_neutralises_markdown_and_html() -> None:
    hostile = "**bold** <img src=x onerror=alert(1)> [link](http://x) :red[x] $x$"
    escaped = text.md_escape(hostile)
    for ch in "*<>[]():$":
        assert ch not in escaped.replace("\\" + ch, "")
    assert charts.plot_text("void f<8>(float*)") == "void f&lt;8&gt;(float*)"


# --- kernels page --------------------------------------------------------------------------------


def test_kernel_diff_against_previous() -> None:
    diff = kernel_facts.kernel_diff(get_kernel("v4"))
    assert diff.startswith("--- v3: v3_regblock.cu\n+++ v4: v4_transposed.cu")
    assert any(line.startswith("+") and not line.startswith("+++") for line in diff.splitlines())
    assert kernel_facts.kernel_diff(get_kernel("v1")) == ""
    assert kernel_facts.kernel_diff(get_kernel("cublas")) == ""


def test_every_kernel_has_a_summary_and_catalog_row() -> None:
    table = kernel_facts.catalog_table()
    assert list(table["id"]) == [s.id for s in CATALOG]
    summary = kernel_facts.kernel_summary(get_kernel("v8-async")).set_index("property")["value"]
    assert summary["block"] == "256x1" and summary["param STAGES"] == "3"
    assert "entry where N % 4 != 0" not in summary
    v9 = kernel_facts.kernel_summary(get_kernel("v9-regdb")).set_index("property")["value"]
    assert v9["entry where N % 4 != 0"] == "sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,0>"


def test_bundled_compile_facts(doc) -> None:
    facts = kernel_facts.bundled_compile_facts(doc).set_index("kernel")
    assert facts.loc["v4", "registers"] == 119
    assert facts.loc["v4", "shared static (B)"] == 8192
    assert "cublas" not in facts.index


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_nvcc_compile_facts_match_the_entry() -> None:
    facts = kernel_facts.nvcc_compile_facts(get_kernel("v4"))
    assert len(facts) == 1 and facts["registers"].iloc[0] > 32


# --- overview and occupancy ----------------------------------------------------------------------


def test_device_rows(doc) -> None:
    rows = tables.device_rows(doc.device).set_index("property")["value"]
    assert rows["GPU"] == "NVIDIA H200"
    assert rows["SMs"] == "132"
    assert rows["CUDA runtime"] == "13.2" and rows["CUDA driver API"] == "13.0"
    assert rows["memory"] == "139.8 GiB"
    assert rows["NVRTC"] == "-"  # the bundle of 2026-11-22 does not say which NVRTC built its kernels
    assert tables.cuda_version(None) == "-"
    newer = bundles.load_bench(next(b for b in bundles.discover_bundles() if b.name == "h200-2026-12-01/catalog_nvrtc"))
    assert tables.device_rows(newer.device).set_index("property")["value"]["NVRTC"] == "13.0"


def test_markdown_table_escapes_cells() -> None:
    text = tables.markdown_table(pd.DataFrame({"property": ["GPU"], "value": ["<b>x</b> | y"]}))
    assert text.splitlines()[:2] == ["| property | value |", "|---|---|"]
    assert text.splitlines()[2] == "| GPU | \\<b\\>x\\</b\\> \\| y |"


def test_tool_rows_list_the_three_tools() -> None:
    assert list(tables.tool_rows()["tool"]) == ["ncu", "compute-sanitizer", "nvcc"]


def test_launch_configs_and_occupancy_table(doc, reports) -> None:
    bench = {c.name: c for c in launches.launch_configs_from_bench(doc)}
    assert (bench["v4"].threads, bench["v4"].registers, bench["v4"].shared_mem) == (256, 119, 8192)
    table = tables.occupancy_table(reports).set_index("launch")
    # our calculator agrees with ncu's theoretical occupancy on every real launch
    assert (table["theoretical (%)"] - table["ncu theoretical (%)"]).abs().max() < 0.01
    assert "registers" in table.loc["v4 1024x1024x1024", "limited by"]


# --- review --------------------------------------------------------------------------------------


def _candidate(run: SavedRun, factor: float) -> SavedRun:
    faster = tuple(replace(r, time_median_ms=r.time_median_ms * factor, tflops=r.tflops / factor) for r in run.results)
    return replace(run, id=99, label="candidate", results=faster)


def test_review_styles_and_roofline(bundle) -> None:
    base = replace(bundles.bundled_runs(bundle)[1], id=1)
    cand = _candidate(base, 0.8)
    comparison = compare_runs(base, [cand])
    side = side_by_side(comparison)
    html = tables.style_side_by_side(side).to_html()
    assert VERDICT_COLORS["improvement"] in html  # TFLOP/s rose by 25 %
    assert set(side["Time (ms) verdict"]) == {"no verdict"}  # the bundled runs saved no per-launch times
    assert "Time (ms) verdict" not in html
    fig = charts.review_roofline(base, [cand], ceilings.recorded_device_ceilings(base.device, base.device_name))
    kernels = {r.kernel for r in base.results}
    baseline_traces = [t for t in fig.data if t.meta == "baseline"]
    arrows = [t for t in fig.data if t.meta == "arrow"]
    assert len(baseline_traces) == len(kernels)
    # one arrow trace per kernel, in its colour, an arrow head per kernel and size, from the baseline point
    assert sorted(t.legendgroup for t in arrows) == sorted(f"kernel:{k}" for k in kernels)
    assert sum(list(t.marker.symbol).count("arrow") for t in arrows) == len(base.results)
    for t in arrows:
        assert t.line.color == charts.kernel_color(t.legendgroup.removeprefix("kernel:")) and t.showlegend is False
    v3 = next(t for t in arrows if t.legendgroup == "kernel:v3")
    b = next(t for t in baseline_traces if t.legendgroup == "kernel:v3")
    assert v3.x[0] == b.x[0] and v3.y[0] == b.y[0] and v3.y[2] == pytest.approx(v3.y[0] / 0.8)  # 20 % faster
    assert charts.kernel_points(fig) == {r.kernel: 1 for r in base.results}
    # the legend: a row per kernel and the run key, not a baseline entry per kernel
    entries = [t.name for t in fig.data if t.showlegend is not False and t.name]
    assert len(entries) == len(kernels) + 3 + len([t for t in fig.data if t.legendgroup in ("ceilings", "levels")])
    assert not any("baseline)" in name for name in entries)
    # a run against itself moves nothing: no arrow heads sitting on the points
    same = charts.review_roofline(
        base, [replace(base, id=98)], fig_ceilings := ceilings.recorded_device_ceilings(base.device, base.device_name)
    )
    assert fig_ceilings is not None and not [t for t in same.data if t.meta == "arrow"]


def test_run_tables(bundle) -> None:
    run = replace(bundles.bundled_runs(bundle)[0], id=3)
    info = tables.run_info_table(run).set_index("property")["value"]
    assert info["device"] == "NVIDIA H200" and info["CUDA runtime"] == "13.2"
    assert len(tables.run_results_table(run)) == len(_results_docs()[bundle.bench_files[0].name]["results"])


# --- the GPU job queue ---------------------------------------------------------------------------


def test_queue_runs_one_job_at_a_time_across_threads() -> None:
    queue = GpuJobQueue()
    active, peak, order = [0], [0], []
    lock = threading.Lock()
    started = threading.Event()

    def work(job):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        started.set()
        time.sleep(0.2)
        order.append(job.label)
        with lock:
            active[0] -= 1
        return job.label

    jobs: dict[str, object] = {}

    def user(name: str) -> None:
        jobs[name] = queue.submit(name, owner=name, fn=work)

    first = threading.Thread(target=user, args=("alice",))
    first.start()
    first.join()
    assert started.wait(5)
    second = threading.Thread(target=user, args=("bob",))
    second.start()
    second.join()
    bob = jobs["bob"]
    assert bob.state == "queued" and queue.position(bob.id) == 1  # bob sees alice's job ahead of his
    assert queue.running().label == "alice"
    assert queue.wait(bob.id, 5).state == "done"
    assert peak[0] == 1 and order == ["alice", "bob"]
    assert jobs["alice"].result == "alice" and bob.result == "bob"


def test_cancel_queued_and_running_jobs() -> None:
    queue = GpuJobQueue()
    release = threading.Event()

    def long(job):
        job.report(0.5, "half way")
        while not job.cancel.is_set():
            time.sleep(0.01)
        return "stopped"

    running = queue.submit("long", "a", long)
    waiting = queue.submit("never", "b", lambda job: release.set())
    deadline = time.time() + 5
    while running.state != "running" and time.time() < deadline:
        time.sleep(0.01)
    assert queue.cancel(waiting.id) and waiting.state == "cancelled"
    assert queue.cancel(running.id)
    assert queue.wait(running.id, 5).state == "cancelled"
    assert running.progress == 0.5 and running.events == ["half way"]
    time.sleep(0.1)
    assert not release.is_set()  # the cancelled queued job never ran
    assert not queue.cancel(running.id)  # already finished


def test_a_failing_job_reports_one_line_and_the_queue_goes_on() -> None:
    queue = GpuJobQueue()
    bad = queue.submit("bad", "a", lambda job: 1 / 0)
    good = queue.submit("good", "a", lambda job: 42)
    assert queue.wait(good.id, 5).result == 42
    assert bad.state == "failed" and bad.error.startswith("unexpected error: ZeroDivisionError")
    invalid = queue.submit("invalid", "a", lambda job: (_ for _ in ()).throw(InvalidInput("no such size\nmore")))
    assert queue.wait(invalid.id, 5).error == "no such size"


FAKE_WORKER = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {root!r})
    from profiling.gpu.worker import DEVICE_PREFIX, RESULT_PREFIX
    job = json.load(open(sys.argv[1]))
    print(DEVICE_PREFIX + json.dumps({{"name": "scripted GPU", "cc": "9.0"}}), flush=True)
    for i, t in enumerate(job["tasks"]):
        ms = 1.0 if t["kernel"] == "cublas" else 2.0
        rec = dict(t, status="ok", error=None, operation="sgemm", time_ms={{"median": ms}}, tflops=1.0)
        print(RESULT_PREFIX + json.dumps(rec), flush=True)
    """
)


def test_bench_job_through_the_queue_with_a_scripted_worker(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(FAKE_WORKER.format(root=str(ROOT)))
    fn = usecases.bench_job(
        ["v3", "v5"], [Shape(256, 256, 256)], BenchSettings(repeats=2), command=lambda f: [sys.executable, script, f]
    )
    queue = GpuJobQueue()
    job = queue.wait(queue.submit("bench", "me", fn).id, 60)
    assert job.state == "done", job.error
    doc = job.result
    assert doc.device_name == "scripted GPU"
    assert [r.kernel for r in doc.results] == ["cublas", "v3", "v5"]
    assert doc.results[1].pct_cublas == pytest.approx(50.0)
    assert job.progress == 1.0 and len(job.partial) == 3 and job.events[-1] == "v5 256x256x256: ok"
    assert len(tables.bench_frame(doc)) == 3


def test_device_info_job_without_a_gpu_fails_with_a_message(tmp_path: Path) -> None:
    script = tmp_path / "nogpu.py"
    script.write_text(
        "import sys\nprint('no usable CUDA GPU: CUDARuntimeError: no device', file=sys.stderr)\nsys.exit(1)\n"
    )
    queue = GpuJobQueue()
    job = queue.submit("probe", "me", usecases.device_info_job(10, command=lambda f: [sys.executable, script, f]))
    job = queue.wait(job.id, 30)
    assert job.state == "failed" and "no usable CUDA GPU" in job.error


def test_no_device_nodes_means_no_gpu(tmp_path: Path) -> None:
    assert "no NVIDIA device nodes" in gpu_env.no_gpu_device_nodes(tmp_path)
    (tmp_path / "nvidia0").touch()
    assert gpu_env.no_gpu_device_nodes(tmp_path) is None


def test_device_probe_never_blocks_the_page(monkeypatch) -> None:
    monkeypatch.delenv("GEMMLENS_GPU", raising=False)
    monkeypatch.setattr(gpu_env, "no_gpu_device_nodes", lambda: None)
    release = threading.Event()

    def fake_job(timeout_s: float = 30.0):
        def run(job):
            release.wait(5)
            return DeviceInfo(name="probe GPU", cc="9.0")

        return run

    monkeypatch.setattr(usecases, "device_info_job", fake_job)
    ui._probe_state.clear()
    ui.gpu_queue.clear()
    assert ui.device_status() == (None, None, True)  # answered at once while the probe runs
    release.set()
    deadline = time.time() + 5
    while ui.device_status()[2] and time.time() < deadline:
        time.sleep(0.01)
    assert ui.device_status() == (DeviceInfo(name="probe GPU", cc="9.0"), None, False)
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    device, reason, probing = ui.device_status()
    assert device is None and "GEMMLENS_GPU=off" in reason and not probing
    ui._probe_state.clear()


def test_measured_ceilings_sit_beside_the_theoretical_ones() -> None:
    # results/h200-2026-11-22/ceilings.json: `python -m profiling ceilings` on the H200.
    bundle = next(b for b in bundles.discover_bundles() if b.name == "h200-2026-11-22")
    measured = ceilings.measured_ceilings("NVIDIA H200", bundle.path)
    assert measured is not None and measured.fp32_flops.source.startswith("measured 2026-11-22")
    assert ceilings.measured_ceilings("NVIDIA H100 80GB HBM3", bundle.path) is None
    theoretical = ceilings.ceilings_for(bundle.device)
    table = tables.ceilings_table(theoretical, measured).set_index("ceiling")
    assert table.loc["FP32", "measured"] == pytest.approx(65.07, abs=0.01)
    assert 90 < table.loc["FP32", "measured / theoretical (%)"] <= 100
    assert table.loc["DRAM", "measured"] == pytest.approx(4.36, abs=0.01)
    assert table.loc["L2", "measured"] > table.loc["DRAM", "measured"]


def test_occupancy_gap_is_explained_on_real_launches() -> None:
    # ncu on the H200: v3 at 1024 runs 64 blocks of 256 threads, 2 per SM over 132 SMs (0.24 waves).
    report = ncu_load.load_report(H200 / "ncu_ladder_1024_raw.csv")
    configs = {c.name.split(" ")[0]: c for c in launches.launch_configs_from_reports([("raw", report)])}
    v3 = configs["v3"]
    assert v3.ncu_theoretical_pct == pytest.approx(25.0)
    note = launches.occupancy_gap_note(v3.ncu_theoretical_pct, v3.achieved_pct, v3.waves_per_sm)
    assert note is not None and "of one wave" in note and f"{v3.waves_per_sm:.2f}" in note
    v1 = configs["v1-coalesced"]  # 94 % achieved of 100 %: no note
    assert launches.occupancy_gap_note(v1.ncu_theoretical_pct, v1.achieved_pct, v1.waves_per_sm) is None
    assert launches.occupancy_gap_note(50.0, None, None) is None


# --- readable charts and tables ---------------------------------------------------------


def test_tflops_chart_has_an_fp32_and_a_tensor_core_panel(doc) -> None:
    fig = charts.tflops_figure(tables.bench_frame(doc))
    axis_of = {t.name: t.yaxis for t in fig.data}
    assert axis_of["cublas"] == axis_of["v9-regdb"] == axis_of["v1"] == "y"
    assert axis_of["cublas-hgemm"] == axis_of["wmma-async"] == axis_of["wmma-addmm"] == "y2"
    # each panel's reference is the dashed cuBLAS line, and the FP32 panel is not squashed by HGEMM's ~770 TFLOP/s
    dashed = {t.name for t in fig.data if t.line.dash == "dash"}
    assert dashed == {"cublas", "cublas-hgemm"}
    fp32_top = max(max(t.y) for t in fig.data if t.yaxis == "y")
    assert fp32_top < 60 < max(max(t.y) for t in fig.data if t.yaxis == "y2")


def test_size_ticks_slant_only_when_they_would_run_into_each_other(doc) -> None:
    """Four cubes ("1024³") sit level; the 18 square shapes of the H100 grid run ("127x127x8191") are slanted."""
    fig = charts.tflops_figure(tables.bench_frame(doc))
    assert list(fig.layout.xaxis.ticktext) == ["1024³", "2048³", "4096³", "8192³"] and fig.layout.xaxis.tickangle == 0
    grid = next(b for b in bundles.discover_bundles() if b.name == "h100-2026-11-25/grid_square")
    frame = tables.bench_frame(bundles.load_bench(grid))
    for fig in (charts.tflops_figure(frame), charts.pct_cublas_figure(frame)):
        assert len(fig.layout.xaxis.ticktext) == 18 and fig.layout.xaxis.tickangle == -45
        assert fig.layout.xaxis.ticktext[0] == "64x64x333" and fig.layout.showlegend is not False
    assert [t.name for t in charts.pct_cublas_figure(frame).data] == ["sgemm-auto"]  # one kernel, still named


def test_review_time_bars_use_a_log_axis_and_history_uses_run_order(bundle) -> None:
    earlier, later = bundles.bundled_runs(bundle)[2], bundles.bundled_runs(bundle)[0]
    earlier, later = replace(earlier, id=3), replace(later, id=1)
    bars, delta = charts.comparison_figures(earlier, [later], compare_runs(earlier, [later]))
    assert bars.layout.yaxis.type == "log" and all(t.endswith(" ms") for t in bars.layout.yaxis.ticktext)
    # the verdict on each bar ("same") at the legend's size, outside the bar, never shrunk to fit it
    assert delta.data[0].textposition == "outside" and delta.data[0].textfont.size == 12
    assert delta.layout.uniformtext.minsize == 12 and delta.layout.uniformtext.mode == "show"
    changes = [y for t in delta.data for y in t.y]
    low, high = delta.layout.yaxis.range
    assert low < min(changes) - 0.3 * (max(changes) - min(changes)) and high > max(changes)  # room for the words
    history = pd.DataFrame(
        {
            "created": pd.to_datetime(["2026-11-22T00:29:14Z", "2026-11-22T00:43:14Z"], utc=True),
            "run_id": [3, 1],
            "run_label": ["earlier", "later"],
            "device_name": ["NVIDIA H200"] * 2,
            "size": ["4096x4096x4096"] * 2,
            "value": [3.47, 3.47],
        }
    )
    fig = charts.history_figure(history, "v8-async")
    assert fig.layout.xaxis.type == "category" and list(fig.layout.xaxis.categoryarray) == ["#3", "#1"]
    assert list(fig.data[0].text) == ["earlier", "later"] and fig.layout.xaxis.tickangle == 0  # labels in the hover


def test_history_is_a_panel_per_size_each_with_its_own_axis() -> None:
    """1024³ times are a hundredth of 8192³ ones: on one linear axis the small sizes lie flat. Each size gets its
    own panel and y axis, one legend entry per device, and the x ticks are short run ids (no rotated labels)."""
    sizes = ["8192x8192x8192", "1024x1024x1024", "2048x2048x2048"]
    history = pd.DataFrame(
        {
            "created": pd.to_datetime(["2026-11-22T00:29:14Z"] * 3 + ["2026-11-22T00:43:14Z"] * 3, utc=True),
            "run_id": [3, 3, 3, 1, 1, 1],
            "run_label": ["earlier"] * 3 + ["later"] * 3,
            "device_name": ["NVIDIA H200"] * 6,
            "size": sizes * 2,
            "value": [310.0, 0.62, 4.9, 300.0, 0.61, 4.8],
        }
    )
    fig = charts.history_figure(history, "v3")
    assert [a.text for a in fig.layout.annotations] == ["1024³", "2048³", "8192³"]
    assert [t.yaxis for t in fig.data] == ["y", "y2", "y3"] and [list(t.y) for t in fig.data][0] == [0.62, 0.61]
    assert [t.showlegend for t in fig.data] == [True, False, False] and fig.data[0].name == "NVIDIA H200"
    assert all(len(tick) <= 4 for tick in fig.layout.xaxis.categoryarray)


def test_a_comparable_pair_is_picked_from_the_bundled_runs(bundle) -> None:
    runs = [replace(r, id=i) for i, r in enumerate(bundles.bundled_runs(bundle), start=1)]
    rows = [
        {
            "run_id": r.id,
            "run_label": r.label,
            "created_utc": r.to_dict()["created_utc"],
            "kind": r.kind,
            "device_name": r.device_name,
            **x.to_dict(),
        }
        for r in runs
        for x in r.results
    ]
    assert "earlier run" in runs[2].label
    assert tables.comparable_pair(review.rows_frame(rows)) == (3, 1)  # earlier 1024-4096 run -> the later one
    assert tables.comparable_pair(review.rows_frame([r for r in rows if r["run_id"] != 3])) is None


def test_the_default_pair_from_result_keys_is_the_one_from_the_results(tmp_path: Path) -> None:
    """The Review page picks its default pair and History kernels from RunStore.result_keys (no result values):
    the same columns, values and pair as from the full result rows, on every bundled run with one deleted."""
    from profiling.runs.store import RunStore

    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    for each in bundles.discover_bundles():
        store.import_runs(bundles.bundled_runs(each))
    ids = [s["id"] for s in store.list_runs()]
    store.delete_run(ids[0])
    ids = [s["id"] for s in store.list_runs()]
    full, keys = review.rows_frame(store.result_rows(run_ids=ids)), review.keys_frame(store.result_keys(ids))
    assert len(keys) == len(full) > 100 and keys["size"].str.match(r"\d+x\d+x\d+$").all()
    pd.testing.assert_frame_equal(keys, full[list(keys.columns)])
    assert tables.comparable_pair(keys) == tables.comparable_pair(full) is not None
    subset = ids[::3]
    assert tables.comparable_pair(review.keys_frame(store.result_keys(subset))) == tables.comparable_pair(
        review.rows_frame(store.result_rows(run_ids=subset))
    )
    assert review.keys_frame(store.result_keys([])).empty


def test_one_launch_naming_rule_across_layouts() -> None:
    """One rule: catalog id and size where the report proves the launch ours (our NVTX range), else the kernel
    function's own name. An uploaded summary page has no NVTX ranges, so our kernels keep their
    function names there, the same names the raw page's launches have underneath."""
    raw = usecases.load_upload("raw.csv", (NCU / "raw.csv").read_bytes())
    summary = usecases.load_upload("summary.csv", (NCU / "summary.csv").read_bytes())
    raw_names = {k: (n, s) for n, k, s in tables.launch_names(raw)}
    for kernel in ("v1", "v5", "tiled-16"):
        assert raw_names[kernel] == (f"{kernel} 1024x1024x1024", "1024x1024x1024")  # the NVTX range gives K
    summary_names = [n for n, _, _ in tables.launch_names(summary)]
    assert {n.split(" #")[0] for n in summary_names} == {launch.function for launch in raw.launches}
    # A launch id only where one function has several rows (sgemm_tiled's three template instances).
    assert sorted(n for n in summary_names if "#" in n) == ["sgemm_tiled #7", "sgemm_tiled #8", "sgemm_tiled #9"]


def test_display_rounds_and_leaves_gaps_empty() -> None:
    frame = pd.DataFrame({"time (ms)": [1.234567, None], "registers": [32.0, 40.0], "% of cuBLAS": [91.234, 50.0]})
    shown = table_format.display(frame)
    assert shown["time (ms)"].tolist() == ["1.235", ""]
    # Full columns stay numbers (they sort), rounded to what they mean.
    assert shown["registers"].tolist() == [32, 40] and shown["registers"].dtype == "int64"
    assert shown["% of cuBLAS"].tolist() == [91.2, 50.0]
    assert "None" not in shown.astype(str).to_string() and "nan" not in shown.astype(str).to_string()


def test_md_escape_keeps_bare_urls_and_addresses_from_becoming_links() -> None:
    """GitHub-flavoured Markdown links http://, https://, www. and name@host in the text even when every character
    is escaped; a word joiner inside each stops that, and the text reads the same."""
    escaped = text.md_escape("see http://evil.example, HTTPS://x.y, www.evil.example and ann@evil.example")
    assert escaped.replace(text.WORD_JOINER, "").replace("\\", "") == (
        "see http://evil.example, HTTPS://x.y, www.evil.example and ann@evil.example"
    )
    for linked in ("http\\:", "HTTPS\\:", "www\\.", "n@"):
        assert linked not in escaped


def test_every_kernel_of_the_bundled_captures_sits_under_its_own_family_in_the_roofline_legend(reports) -> None:
    """The H200 captures hold the ladder, the tile-width study, cuBLAS, the kernels beyond the ladder and the
    tensor-core ones: each family is a legend of its own (title at its left, rows of its own), so no kernel reads
    as another family's (v3, v4, v5 and cublas-hgemm used to wrap under "tile-width study")."""
    from profiling.charts.style import GROUP_TITLES, kernel_group

    points = charts.report_roofline_points(reports)
    fig = charts.roofline(points, ceilings.ceilings_for(None, reports[0][1]), "Roofline")
    entries = [t for t in fig.data if (t.legendgroup or "").startswith("kernel:") and t.showlegend]
    titles = {t.name: fig.layout[t.legend].title.text for t in entries}
    assert {titles[k] for k in ("v3", "v4", "v5")} == {"SGEMM ladder"}
    assert titles["cublas-hgemm"] == titles["cublas"] == "reference (cuBLAS)"
    assert titles["tiled-8"] == "tile-width study" and titles["v9-regdb"] == "beyond the ladder"
    assert titles["wmma-async"] == "tensor core"
    assert all(titles[t.name] == GROUP_TITLES[kernel_group(t.name)] for t in entries)
    assert len({fig.layout[t.legend].y for t in entries}) == 5  # five families, five rows of legends
