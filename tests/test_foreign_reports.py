"""Reports of a program that is not ours (tests/fixtures/foreign: PyTorch, cuBLASLt, Triton on an H100, ncu 2025.3.1,
`--set full`): every layout gives the same launches, names and values; names are the functions' own; no catalog
ids; source pages are recognised; metrics the full set lacks are derived with their sources."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from profiling.analysis.roofline import launch_points
from profiling.errors import ReportError
from profiling.nsight import layout_check
from profiling.nsight import load as L
from profiling.nsight import report as P
from profiling.nsight.names import function_name
from profiling.nsight.report_input import SourcePageGiven
from profiling.nsight.source import SourcePage

ROOT = Path(__file__).resolve().parents[1]
FOREIGN = ROOT / "tests" / "fixtures" / "foreign"
WHY = ROOT / "results" / "h100-2026-11-22"
SAME_REPORT = (
    "details.csv",
    "details_names.csv",
    "details_all.csv.gz",
    "summary.csv",
    "details_text.txt",
    "details_all_text.txt.gz",
)
FUNCTIONS = [
    "Kernel2",
    "vectorized_elementwise_kernel",
    "vectorized_elementwise_kernel",
    "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT",
    "vectorized_elementwise_kernel",
    "vectorized_elementwise_kernel",
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
    "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_gelubias_NNT",
    "softmax_warp_forward",
    "vectorized_layer_norm_kernel",
    "vectorized_elementwise_kernel",
    "vectorized_elementwise_kernel",
    "vectorized_elementwise_kernel",
    "reduce_kernel",
    "distribution_elementwise_grid_stride_kernel",
    "unrolled_elementwise_kernel",
    "scaled_add_kernel",
]


def data(name: str) -> bytes:
    raw = (FOREIGN / name).read_bytes()
    return gzip.decompress(raw) if name.endswith(".gz") else raw


def parsed(name: str) -> P.Report:
    return P.parse_report_bytes(data(name), source=name)


@pytest.fixture(scope="module")
def raw() -> P.Report:
    return parsed("raw.csv")


def test_function_names_of_every_kernel(raw: P.Report) -> None:
    assert [launch.function for launch in raw.launches] == FUNCTIONS
    assert [launch.label for launch in raw.launches][14] == "distribution_elementwise_grid_stride_kernel #14"
    # The source page prints other namespaces and "(int)4" template arguments: the same functions.
    with gzip.open(FOREIGN / "source_sass.csv.gz", "rt") as fh:
        names = {row[1] for row in csv.reader(fh) if row and row[0] == "Kernel Name"}
    assert {function_name(n) for n in names} == set(FUNCTIONS)
    launch = json.loads(json.dumps(raw.launches[14].to_dict()))
    assert launch["function"] == "distribution_elementwise_grid_stride_kernel"
    assert launch["name"].startswith("void at::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4,")


@pytest.mark.parametrize(
    ("name", "function"),
    [
        ("void sgemm_tiled<(int)8>(const float *, const float *, float *, int, int, int)", "sgemm_tiled"),
        ("Functor<int>::operator ()(int) const", "Functor::operator ()"),
        ("void (anonymous namespace)::k<int>(int)", "k"),
        ("std::pair<int, int> ns::f<(a<b)>(int)", "f"),
        ("void at::<unnamed>::g<float, void t::u<float>(at::X &, double)::[lambda() (instance 1)]>(at::X &", "g"),
        ("scaled_add_kernel", "scaled_add_kernel"),
    ],
)
def test_function_name_cases(name: str, function: str) -> None:
    assert function_name(name) == function


def test_no_catalog_ids_for_another_programs_kernels(raw: P.Report) -> None:
    for name in ("raw.csv", *SAME_REPORT):
        assert all(launch.identity.kernel_id is None for launch in parsed(name).launches), name
    # Our sgemm_tiled's name, block and grid in a report of unknown origin stay a foreign name.
    launch = P.KernelLaunch(id="3", name="void sgemm_tiled<32>(const float *, const float *, float *, int, int, int)")
    launch.block, launch.grid, launch.ours = (32, 32, 1), (32, 32, 1), False
    assert launch.identity.kernel_id is None and launch.label == "sgemm_tiled #3"
    launch.ours = True  # a run we made
    assert launch.label == "tiled-32 1024x1024"
    launch.ours, launch.nvtx = False, "gemmlens:tiled-32:1024x1024x1024"  # our NVTX range proves it anywhere
    assert launch.label == "tiled-32 1024x1024x1024"


@pytest.mark.parametrize("name", SAME_REPORT)
def test_every_layout_gives_the_raw_pages_launches_names_and_values(raw: P.Report, name: str) -> None:
    report = parsed(name)
    found = layout_check.compare(raw, report)
    assert found.launches == len(raw.launches) == 17
    assert found.names_agree
    assert found.disagreements == []
    assert found.compared >= 700


def test_print_details_all_attaches_body_tables_to_their_launch(raw: P.Report) -> None:
    report = parsed("details_all.csv.gz")
    assert [launch.id for launch in report.launches] == [launch.id for launch in raw.launches]
    numa = report.launches[5].tables["NUMA Affinity"]
    assert numa[0][:2] == ["GPU ID", "GPU Name"] and numa[1][1] == "NVIDIA H100 80GB HBM3"
    assert report.launches[5].tables["notes"] == [["The system does not have any NVLink connections."]]
    # Instance-valued metrics: the total is the value, the instances are kept.
    launch = report.launches[0]
    key = next(k for k in launch.attributes if k.endswith("Executed Instructions by SASS Opcode Category (instances)"))
    assert launch.attributes[key].startswith("268,698,624; 17,240,064")


def test_text_output_matches_the_details_csv_launches_and_values() -> None:
    for csv_name, text_name in (("details.csv", "details_text.txt"), ("details_all.csv.gz", "details_all_text.txt.gz")):
        table, text = parsed(csv_name), parsed(text_name)
        assert text.layout == "text" and len(text.launches) == len(table.launches)
        for a, b in zip(table.launches, text.launches, strict=True):
            assert (a.name, a.block, a.grid, a.cc) == (b.name, b.block, b.grid, b.cc)
            assert {k: m.value for k, m in a.metrics.items()} == {k: m.value for k, m in b.metrics.items()}
            assert "foreign" in (b.nvtx or "")
            assert b.findings and all(f.type in ("OPT", "INF", "WRN") for f in b.findings)


@pytest.mark.parametrize(
    ("csv_name", "text_name"),
    [("details.csv", "details_text.txt"), ("details_all.csv.gz", "details_all_text.txt.gz")],
)
def test_text_output_matches_the_details_csv_findings(csv_name: str, text_name: str) -> None:
    """Every rule message, in order, with its speedup: the `----- ---` line between two messages is no table."""
    table, text = parsed(csv_name), parsed(text_name)
    assert sum(len(launch.findings) for launch in text.launches) > 17
    for a, b in zip(table.launches, text.launches, strict=True):
        assert [(f.type, f.speedup_type, f.estimated_speedup_pct) for f in a.findings] == [
            (f.type, f.speedup_type, f.estimated_speedup_pct) for f in b.findings
        ]
        for fa, fb in zip(a.findings, b.findings, strict=True):
            assert " ".join(fa.description.split()).startswith(fb.description)


def test_run_stdout_is_read_with_ncus_launch_ids(raw: P.Report) -> None:
    report = parsed("run_stdout.txt")
    assert report.layout == "text"
    assert [launch.id for launch in report.launches] == [str(i) for i in range(17)]
    assert [launch.function for launch in report.launches] == FUNCTIONS
    assert report.launches[0].value("gpu__time_duration.sum") == 343_900  # "343.90 us"


def test_source_page_is_refused_by_report_and_returned_by_upload(tmp_path: Path) -> None:
    with pytest.raises(SourcePageGiven, match="python -m profiling source"):
        parsed("source_sass.csv.gz")
    path = tmp_path / "source.csv"
    path.write_bytes(data("source_sass.csv.gz"))
    with pytest.raises(ReportError, match="source page"):
        L.load_report(path)
    page = L.load_upload("source_sass.csv.gz", (FOREIGN / "source_sass.csv.gz").read_bytes())
    assert isinstance(page, SourcePage) and page.source == "source_sass.csv.gz"
    # ncu printed some sections twice; one kernel (the unrolled copy) is really there twice.
    names = [function_name(k.name) for k in page.kernels]
    assert len(names) == 17 and names.count("unrolled_elementwise_kernel") == 1


def test_text_and_gzip_uploads_are_reports() -> None:
    for name in ("details_text.txt", "details_all.csv.gz", "details_all_text.txt.gz"):
        report = L.load_upload(name, (FOREIGN / name).read_bytes())
        assert isinstance(report, P.Report) and len(report.launches) == 17, name


def test_dram_l2_and_fp32_derived_with_their_sources() -> None:
    report = P.parse_report_bytes((WHY / "ncu_why_1024_raw.csv").read_bytes(), source="why.csv")
    launch = report.launches[1]
    dram = launch.metrics["dram__bytes.sum"]
    assert dram.derived_from == "dram__bytes_read.sum + dram__bytes_write.sum"
    assert dram.value == launch.value("dram__bytes_read.sum") + launch.value("dram__bytes_write.sum")
    assert launch.metrics["lts__t_bytes.sum"].value == 32 * launch.value("lts__t_sectors.sum")
    assert launch.to_dict()["metrics"]["dram__bytes.sum"]["derived_from"] == dram.derived_from
    frame = P.key_metrics_frame(report)
    assert frame["dram_bytes"].notna().all() and frame["derived_from"].str.contains("dram__bytes_read.sum").all()
    points = launch_points(report)
    assert set(points["level"]) == {"DRAM", "L2"} and len(points) >= 32
    # FP32 FLOPs from the rates per elapsed cycle: an SGEMM at 1024^3 does 2 * 1024^3 of them.
    sgemm = next(x for x in report.launches if x.identity.kernel_id == "v1" and x.identity.shape is not None)
    assert sgemm.derived["fp32_flops"] == pytest.approx(2 * 1024**3, rel=0.01)
    # The full set's details page gets DRAM bytes from the Memory Chart's read and write.
    details = parsed("details_all.csv.gz").launches[0]
    assert details.metrics["dram__bytes.sum"].derived_from == "dram__bytes_read.sum + dram__bytes_write.sum"


def test_layouts_document_is_current() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "foreign_layouts.py"), "--out", "/dev/stdout"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    written = (ROOT / "docs" / "foreign-layouts.md").read_text()
    assert written in done.stdout


@pytest.mark.parametrize(
    "name",
    [
        "base_units/raw_base_units.csv",
        "base_units/details_base_units.csv",
        "base_units/details_all_base_units.csv.gz",
        "base_units/details_text_base_units.txt",
    ],
)
def test_base_unit_exports_agree_with_the_default_export(name: str) -> None:
    """`--print-units base` of a second capture against that capture's default (auto-unit) raw page: every launch,
    name and value, apart from the two metrics ncu itself exports wrongly in base units (listed, never hidden)."""
    reference = parsed("base_units/raw.csv")
    found = layout_check.compare(reference, parsed(name))
    assert found.launches == found.reference_launches == 17 and found.names_agree
    assert found.compared >= 700 and found.disagreements == []
    assert {q.split(" ", 2)[2].split(":")[0] for q in found.ncu_quirks} <= set(layout_check.NCU_BASE_UNIT_QUIRKS)
    if name.startswith("base_units/raw_"):
        # 1.164 %/Kbyte on the default page; ncu's base page says 1,164 %/byte, which we keep as a listed quirk.
        assert any(q.startswith("launch 0 derived__pct_occupancy_per_shared_mem_size") for q in found.ncu_quirks)
