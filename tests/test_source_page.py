"""The source-page parser on REAL Nsight Compute exports (results/h100-2026-11-22, tests/fixtures/foreign).

The H100 captures hold every catalog kernel at 1024 and 4096, profiled in one ncu process with the full set and
source counters, exported as the sass and cuda,sass views. Hand-made text appears only in the bad-input tests.
"""

from __future__ import annotations

import csv
import gzip
import re
from pathlib import Path

import pytest

from profiling.errors import InvalidInput, ReportError
from profiling.nsight import load as L
from profiling.nsight import source as S
from profiling.nsight import source_load as SL

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "results" / "h100-2026-11-22"
FOREIGN = ROOT / "tests" / "fixtures" / "foreign"
SIZES = (1024, 4096)


def capture(name: str) -> Path:
    path = H100 / name
    if not path.is_file():
        pytest.skip(f"real capture {name} not in results/h100-2026-11-22")
    return path


@pytest.fixture(scope="module", params=SIZES)
def pages(request: pytest.FixtureRequest) -> dict[str, S.SourcePage]:
    n = request.param
    return {
        "n": n,  # type: ignore[dict-item]
        "sass": SL.load_source_page(capture(f"source_why_{n}_sass.csv.gz")),
        "cuda": SL.load_source_page(capture(f"source_why_{n}_cuda_sass.csv.gz")),
    }


def _raw_sections(path: Path) -> list[tuple[str, list[list[str]]]]:
    """(function name, rows) per cuda,sass section, read with the csv module alone (the test's own reading)."""
    sections: list[tuple[str, list[list[str]]]] = []
    lines = [ln for ln in gzip.open(path, "rt") if not ln.startswith("==")]
    for row in csv.reader(lines):
        if row and row[0] == "Function Name":
            sections.append((row[1], []))
        elif sections and row:
            sections[-1][1].append(row)
    return sections


def test_sass_view_has_every_launch_and_its_sample_count(pages: dict) -> None:
    page = pages["sass"]
    assert page.view == "sass"
    raw = L.load_report(capture(f"ncu_why_{pages['n']}_raw.csv"))
    assert len(page.kernels) == len(raw.launches) == 17
    for kernel, launch in zip(page.kernels, raw.launches, strict=True):
        assert S.short_name(kernel.name) == S.short_name(launch.name)
        # ncu's own count of samples for the launch equals the instructions' samples, each counted once.
        assert kernel.total_samples == launch.value("smsp__pcsamp_sample_count")
        assert kernel.total_samples > 0 and len(kernel.instructions) > 50
        assert kernel.lines == []
    ids = [k.catalog_id for k in page.kernels]
    assert ids[0] is None and ids[1:4] == ["v1", "v1-coalesced", "v2"]
    assert ids[4:7] == ["tiled-8", "tiled-16", "tiled-32"]  # template arguments tell the three apart
    assert "v9-regdb" in ids and "wmma-async" in ids


def test_cuda_sass_view_counts_each_instruction_once(pages: dict) -> None:
    cuda, sass = pages["cuda"], pages["sass"]
    assert cuda.view == "cuda,sass"
    # cuBLAS's kernels carry no line information: ncu leaves them out of this view with a warning.
    assert len(cuda.kernels) == 15
    assert sum("No lineinfo available" in w for w in cuda.warnings) == 2
    by_name = {k.name: k for k in sass.kernels}
    inlined = 0
    for kernel in cuda.kernels:
        twin = by_name[kernel.name]
        assert set(kernel.instructions) == set(twin.instructions)
        assert kernel.total_samples == twin.total_samples
        listed = sum(len(ln.addresses) for ln in kernel.lines)
        assert listed >= len(kernel.instructions)
        inlined += listed - len(kernel.instructions)
    # v8/v9/wmma list inlined instructions under several lines; the totals above still count them once.
    assert inlined > 100


def test_line_totals_match_ncus_line_rows(pages: dict) -> None:
    path = capture(f"source_why_{pages['n']}_cuda_sass.csv.gz")
    parsed = {k.name: k for k in pages["cuda"].kernels}
    checked = 0
    for name, rows in _raw_sections(path):
        header = rows[0]
        samples_col = header.index("Warp Stall Sampling (All Samples)")
        executed_col = header.index("Instructions Executed")
        kernel = parsed[name]
        by_line = {ln.line: ln for ln in kernel.lines}
        for row in rows[1:]:
            if row[0].isdigit():
                summary = kernel.line_summary(by_line[int(row[0])])
                assert summary["samples"] == float(row[samples_col].replace(",", ""))
                assert summary["executed"] == float(row[executed_col].replace(",", ""))
                checked += 1
    assert checked > 500


def test_gaps_and_dashes_are_read() -> None:
    path = capture("source_why_1024_sass.csv.gz")
    text = gzip.open(path, "rt").read()
    assert '"-"' in text
    page = S.parse_source_text(text, source=str(path))
    naive = page.select("sgemm_v1_naive")[0]
    hottest = naive.hottest_instructions(1)[0]
    assert hottest.samples == 36976 and hottest.sass.startswith("LDG.E")
    assert hottest.attributes["Address Space"] == "Global" and hottest.attributes["Access Operation"] == "Load"
    assert "L1 Conflicts Shared N-Way" not in hottest.counters  # "-" is not applicable, not zero
    cuda_text = gzip.open(capture("source_why_1024_cuda_sass.csv.gz"), "rt").read()
    gaps = sum(1 for ln in cuda_text.splitlines() if ln.startswith('"","","...",'))
    assert gaps > 100
    rows = sum(1 for ln in cuda_text.splitlines() if ln.startswith('"","","0x'))
    cuda = S.parse_source_text(cuda_text)
    assert sum(len(ln.addresses) for k in cuda.kernels for ln in k.lines) == rows


def test_thousands_separators() -> None:
    # These exports print plain integers; other ncu pages (and versions) group digits ("36,976"). The same
    # capture with its numbers grouped must read the same.
    text = gzip.open(capture("source_why_1024_sass.csv.gz"), "rt").read()
    grouped = re.sub(r'"(\d{4,})"', lambda m: f'"{int(m.group(1)):,}"', text)
    assert '"36,976"' in grouped and '"36,976"' not in text
    plain, commas = S.parse_source_text(text), S.parse_source_text(grouped)
    for a, b in zip(plain.kernels, commas.kernels, strict=True):
        assert a.total_samples == b.total_samples
        assert a.instructions == b.instructions


def test_gzip_and_plain_text_parse_alike() -> None:
    path = capture("source_why_1024_sass.csv.gz")
    zipped = S.parse_source_bytes(path.read_bytes(), source=path.name)
    plain = S.parse_source_bytes(gzip.decompress(path.read_bytes()), source="plain.csv")
    assert [k.total_samples for k in zipped.kernels] == [k.total_samples for k in plain.kernels]


def test_stall_columns_add_up_to_the_samples(pages: dict) -> None:
    for kernel in pages["sass"].kernels:
        for ins in kernel.instructions.values():
            assert sum(ins.stalls.values()) == pytest.approx(ins.samples)
            assert sum(ins.stalls_not_issued.values()) <= ins.samples_not_issued + 1e-9
            assert not {r for r in ins.stalls if r.startswith("stall_")}
    cublas_hgemm = pages["sass"].kernels[10]
    assert cublas_hgemm.name.startswith("nvjet_sm90")
    # Samples of Hopper's warpgroup instructions (HGMMA, WARPGROUP.WAIT) are under no reason column: they are
    # kept, as warpgroup_arrive (tests/test_stalls.py checks that against the raw page).
    waits = [i for i in cublas_hgemm.instructions.values() if S.UNATTRIBUTED in i.stalls]
    assert waits and all(i.sass.startswith(("HGMMA", "WARPGROUP")) for i in waits)


def test_lines_map_back_to_the_catalog_sources(pages: dict) -> None:
    page = pages["cuda"]
    for kernel in page.kernels:
        assert kernel.catalog_id is not None
        assert "(catalog" in kernel.source_note
        assert all(ln.text.strip() for ln in kernel.lines if ln.addresses)
    assert not [w for w in page.warnings if "past the end" in w]
    v5 = page.select("v5")[0]
    # The kernel's first instruction sits on its signature line.
    first = v5.instructions[min(v5.instructions)]
    assert "sgemm_v5_double_buffer" in next(ln.text for ln in v5.lines if ln.line == first.lines[0])
    # Hottest lines: the inner-product FFMA loop, then the shared-memory stores of the next slice.
    hot = v5.hottest_lines(3)
    assert hot[0]["source"].strip().startswith("sum[xx][yy] +=") and hot[0]["pct"] > 50
    assert hot[0]["dominant_stall"] == "short_scoreboard"
    v9 = page.select("v9-regdb")[0].hottest_lines(1)[0]
    assert "acc[i][j] = fmaf(" in v9["source"] and v9["pct"] > 60
    v1 = page.select("v1")[0].hottest_lines(1)[0]
    assert "sum += a[" in v1["source"] and v1["dominant_stall"] == "lg_throttle"
    v3 = page.select("v3")[0].hottest_lines(2)
    assert "sum[xx][yy] +=" in v3[0]["source"] and v3[0]["bank_conflict_n_way"] > 1
    assert "aTile[" in v3[1]["source"]  # storing the next A tile: waits on its global load


def test_v5_hottest_instruction_is_a_shared_store_at_1024() -> None:
    page = SL.load_source_page(capture("source_why_1024_cuda_sass.csv.gz"))
    v5 = page.select("v5")[0]
    hottest = v5.hottest_instructions(1)[0]
    assert hottest.sass.startswith("STS")
    assert hottest.attributes["Address Space"] == "Shared" and hottest.attributes["Access Operation"] == "Store"
    line = next(ln for ln in v5.lines if ln.line == hottest.lines[0])
    assert "aTile[buf]" in line.text  # store(): the transposed A tile written to shared memory


def test_merge_views_takes_lines_where_there_are_any() -> None:
    cuda = SL.read_source_file(capture("source_why_4096_cuda_sass.csv.gz"))
    sass = SL.read_source_file(capture("source_why_4096_sass.csv.gz"))
    merged = SL.merge_views(cuda, sass)
    assert [k.name for k in merged.kernels] == [k.name for k in sass.kernels]
    with_lines = [k for k in merged.kernels if k.lines]
    assert len(with_lines) == 15 and merged.kernels[0].lines == []


def test_json_shape_of_a_kernel(pages: dict) -> None:
    data = pages["cuda"].to_dict(top=5, name="v5")
    (kernel,) = data["kernels"]
    assert set(kernel) >= {"kernel", "total_samples", "lines", "instructions", "stalls"}
    assert len(kernel["lines"]) == 5 and len(kernel["instructions"]) == 5
    ins = kernel["instructions"][0]
    assert set(ins) >= {"address", "sass", "samples", "stalls", "dominant_stall", "bank_conflict_n_way"}
    assert ins["address"].startswith("0x")
    line = kernel["lines"][0]
    assert set(line) >= {"line", "source", "samples", "pct", "dominant_stall", "executed", "addresses"}


def test_foreign_program_sass_view() -> None:
    path = FOREIGN / "source_sass.csv.gz"
    page = SL.load_source_page(path)
    # ncu printed 5 of the 17 launches' sections twice in a row; each is kept once.
    assert page.view == "sass" and len(page.kernels) == 17
    assert sum("twice in a row" in w for w in page.warnings) == 5
    raw = L.load_report(FOREIGN / "raw.csv")
    assert [k.total_samples for k in page.kernels] == [x.value("smsp__pcsamp_sample_count") for x in raw.launches]
    cutlass = page.kernels[0]
    assert cutlass.name.startswith("void cutlass::Kernel2<cutlass_80_simt_sgemm")
    assert cutlass.catalog_id is None and cutlass.source_note.startswith("SASS only")
    assert cutlass.hottest_instructions(1)[0].sass.startswith("FFMA")
    hgemm = next(k for k in page.kernels if k.name.startswith("nvjet_sm90_hsh"))
    assert any(i.sass.startswith("HGMMA") for i in hgemm.instructions.values())


# ---------------------------------------------------------------------------------------------
# Bad input: one line each
# ---------------------------------------------------------------------------------------------


def test_a_raw_page_is_not_a_source_page() -> None:
    with pytest.raises(ReportError, match="no source rows"):
        SL.read_source_file(capture("ncu_why_1024_raw.csv"))


def test_a_page_with_a_header_and_no_rows() -> None:
    text = gzip.open(capture("source_why_1024_sass.csv.gz"), "rt").read()
    head = "\n".join(text.splitlines()[:2])  # the kernel name and the header, nothing after
    with pytest.raises(ReportError, match="no source rows"):
        S.parse_source_text(head, source="cut.csv")
    with pytest.raises(ReportError, match="no source rows"):
        S.parse_source_bytes(b"==WARNING== No kernels were profiled.\n", source="empty.csv")


def test_unknown_kernel_name_names_the_kernels_there() -> None:
    page = SL.load_source_page(capture("source_why_1024_cuda_sass.csv.gz"))
    with pytest.raises(InvalidInput, match=r"no kernel named 'nope'.*sgemm_v5_double_buffer"):
        page.select("nope")


def test_ncu_rep_without_ncu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The source view of a .ncu-rep comes from the ncu-report wheel: no ncu, no process."""
    rep = ROOT / "tests" / "fixtures" / "ncu" / "small.ncu-rep"
    monkeypatch.setattr("profiling.nsight.tools.run_tool", lambda *a, **k: pytest.fail("no process may be started"))
    page = SL.load_source_page(rep)
    assert [k.catalog_id for k in page.kernels] == ["v1", "v5"]


def test_binary_and_damaged_gzip() -> None:
    with pytest.raises(ReportError, match="damaged gzip"):
        S.parse_source_bytes(b"\x1f\x8b\x08\x00garbage", source="bad.csv.gz")
    with pytest.raises(ReportError, match="binary"):
        S.parse_source_bytes(b"\x00\x01\x02", source="bin.csv")


def test_catalog_spec_for_profiled_names() -> None:
    assert SL.catalog_spec_for(
        "void sgemm_tiled<(int)16>(const float *, const float *, float *, int, int, int)"
    ).id == ("tiled-16")
    assert SL.catalog_spec_for("sgemm_v1_naive").id == "v1"
    # A tuning configuration of v8 still maps to v8's source file.
    assert SL.catalog_spec_for("void sgemm_async<(int)64, (int)64, (int)16>(const float *)").id == "v8-async"
    assert SL.catalog_spec_for("void cutlass::Kernel2<x>(T1::Params)") is None


def test_a_kernel_whose_body_is_in_a_header_reads_each_line_from_its_own_file() -> None:
    """v8-async's body lives in v8_body.cuh; ncu lists such a kernel's lines in one section per file. The real
    capture's v8-async section (built when the body was still in v8_async.cu) is repeated as a second section
    under a header's path, as ncu names a `#line`-marked file; those lines must read the header."""
    path = capture("source_why_1024_cuda_sass.csv.gz")
    text = [ln for ln in gzip.open(path, "rt") if not ln.startswith("==")]
    start = next(i for i, ln in enumerate(text) if ln.startswith('"Function Name","void sgemm_async<')) - 1
    end = next(i for i in range(start + 2, len(text)) if text[i].startswith('"File Path"'))
    section = text[start:end]
    header_section = ['"File Path","/tmp/tmpab12/v8_body.cuh"\n', *section[1:]]
    page = S.parse_source_text("".join(section + header_section), source="two files")
    (kernel,) = page.kernels
    assert kernel.source_note == "several files"
    files = {Path(ln.file).name for ln in kernel.lines}
    assert files == {Path(section[0].split('","')[1].rstrip('"\n')).name, "v8_body.cuh"}
    SL.attach_catalog_source(page)
    body = (ROOT / "kernels" / "src" / "v8_body.cuh").read_text().splitlines()
    own = (ROOT / "kernels" / "src" / "v8_async.cu").read_text().splitlines()
    for ln in kernel.lines:
        from_header = ln.file == "kernels/src/v8_body.cuh"
        lines = body if from_header else own
        assert ln.file in ("kernels/src/v8_body.cuh", "kernels/src/v8_async.cu")
        assert ln.text == (lines[ln.line - 1] if ln.line <= len(lines) else "")
    assert sum(ln.file.endswith(".cuh") for ln in kernel.lines) == len(kernel.lines) // 2


# The hottest line of each kernel in both H100 captures: its dominant stall (never "selected": issuing is not a
# stall) and its worst n-way (the largest of its instructions', not their sum).
HOTTEST = {
    "v3": (47, "short_scoreboard", 32.0),
    "v4": (29, "long_scoreboard", 8.0),
    "v5": (61, "short_scoreboard", 8.0),
    "v7-warptile": (135, "not_selected", None),
    "v8-async": (192, "short_scoreboard", None),
    "v9-regdb": (228, "not_selected", None),
}


def test_hottest_lines_name_a_stall_and_the_worst_n_way(pages: dict) -> None:
    kernels = {k.catalog_id: k for k in pages["cuda"].kernels}
    for kid, (line, stall, n_way) in HOTTEST.items():
        hot = kernels[kid].hottest_lines(1)[0]
        assert (hot["line"], hot["dominant_stall"], hot["bank_conflict_n_way"]) == (line, stall, n_way), kid
    # v7, v8 and v9's hottest lines sample "selected" most: the FFMA loop issuing, which is not the cause.
    for kid in ("v7-warptile", "v8-async", "v9-regdb"):
        hot = kernels[kid].hottest_lines(1)[0]
        assert next(iter(hot["stalls"])) == "selected" and hot["dominant_stall"] != "selected", kid
    # v3's line 47 mixes 2-way and 32-way shared loads: the line reads 32-way, the worst of them.
    v3 = kernels["v3"]
    line = next(x for x in v3.lines if x.line == 47)
    n_ways = {i.counters[S.N_WAY] for i in v3.line_instructions(line) if S.N_WAY in i.counters}
    assert n_ways == {2.0, 32.0} and v3.line_summary(line)["bank_conflict_n_way"] == 32.0


def test_dominant_stall_skips_selected_unless_it_is_all_there_is() -> None:
    assert S.dominant_stall({"selected": 10.0, "not_selected": 3.0, "wait": 1.0}) == "not_selected"
    assert S.dominant_stall({"selected": 10.0}) == "selected"
    assert S.dominant_stall({}) is None


def h200_capture_lines(folder: str, page_name: str, kernel_id: str) -> tuple[S.KernelSource, dict]:
    """A catalog kernel of a capture in results/h200-2026-11-29/<folder>/, and its lines' text by (file, line)."""
    page = SL.load_source_page(ROOT / "results" / "h200-2026-11-29" / folder / page_name)
    (kernel,) = [k for k in page.kernels if k.catalog_id == kernel_id]
    return kernel, {(Path(ln.file).name, ln.line): ln.text.strip() for ln in kernel.lines}


def test_a_cuda_header_ncu_could_read_keeps_its_text_and_our_files_read_the_capture_s_sources() -> None:
    """results/h200-2026-11-29/why_session20 (H200, session 20's capture): wgmma-streamk calls __ldcg and __stcg,
    whose lines ncu read from the CUDA toolkit's sm_32_intrinsics.hpp while it could not open ours; those keep ncu's
    text, our lines read the files as compiled for the capture (compiled_sources/: hopper_persistent.cuh changed
    after it)."""
    # compiled_sources/ beside it
    kernel, lines = h200_capture_lines("why_session20", "source_why_streamk_5120_cuda_sass.csv.gz", "wgmma-streamk")
    assert kernel.source_note == "kernels/src/hgemm_wgmma_streamk.cu (catalog, as compiled for this capture)"
    assert lines[("sm_32_intrinsics.hpp", 183)].startswith("__SM_32_INTRINSICS_DECL__ float4 __ldcg(")
    assert lines[("hopper_persistent.cuh", 603)] == "wgmma_wait<WGMMA_IN_FLIGHT>();"
    assert lines[("hgemm_wgmma_streamk.cu", 15)].startswith("hgemm_wgmma_streamk(const __grid_constant__")


@pytest.mark.parametrize(
    "folder,page_name,kernel_id,wait_line,entry_line",
    [
        # session 24's capture (f8e929f): hopper_persistent.cuh and the kernel file changed after it
        ("why8192", "source_why_streamk_8192_cuda_sass.csv.gz", "wgmma-streamk", 949, ("hgemm_wgmma_streamk.cu", 23)),
        (
            "why_cluster",
            "source_why_streamk_cluster_8192_cuda_sass.csv.gz",
            "wgmma-streamk",
            990,
            ("hgemm_wgmma_streamk.cu", 18),
        ),
        (
            "why_cluster",
            "source_why_streamk_cluster_8192_cuda_sass.csv.gz",
            "wgmma-streamk-cluster",
            990,
            ("hgemm_wgmma_streamk_cluster.cu", 14),
        ),
        # e144220: two comment lines more above the consumers' loop
        (
            "why_cluster_cublas",
            "source_why_cluster_cublas_8192_cuda_sass.csv.gz",
            "wgmma-streamk-cluster",
            992,
            ("hgemm_wgmma_streamk_cluster.cu", 14),
        ),
    ],
)
def test_each_why_folder_of_a_day_reads_its_own_compiled_sources(
    folder: str, page_name: str, kernel_id: str, wait_line: int, entry_line: tuple[str, int]
) -> None:
    """results/h200-2026-11-29/why8192, why_cluster and why_cluster_cublas (H200, 8192^3) were compiled from three
    versions of hopper_persistent.cuh: the consumers' wgmma wait, their hottest line, sits at line 949, 990 and 992."""
    _, lines = h200_capture_lines(folder, page_name, kernel_id)
    assert lines[("hopper_persistent.cuh", wait_line)] == "wgmma_wait<WGMMA_IN_FLIGHT>();"
    assert lines[entry_line].startswith(kernel_id.replace("wgmma-", "hgemm_wgmma_").replace("-", "_") + "(")
