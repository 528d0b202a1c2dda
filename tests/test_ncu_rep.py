"""`.ncu-rep` files read by NVIDIA's ncu-report wheel, with no ncu installed, against the CSV exports ncu made of
the same reports (real captures: tests/fixtures/ncu, tests/fixtures/ncu_rep, results/)."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import pytest

from profiling import usecases
from profiling.errors import ReportError
from profiling.nsight import layout_check, ncu_rep
from profiling.nsight import load as L
from profiling.nsight import report as P
from profiling.nsight import source as S
from profiling.nsight import source_load as SL
from profiling.nsight import units as U

ROOT = Path(__file__).resolve().parent.parent
NCU = ROOT / "tests" / "fixtures" / "ncu"
NCU_REP = ROOT / "tests" / "fixtures" / "ncu_rep"
V4_FULL = ROOT / "results" / "h200-2026-11-22" / "v4_full_1024.ncu-rep"
_ID_COLUMNS = {
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
}


def _raw_exports(rep: Path) -> list[Path]:
    """The `ncu --import R --csv --page raw` exports kept beside a `.ncu-rep` (plain or gzip): `<name>_raw.csv`."""
    name = rep.name.removesuffix(".gz").removesuffix(".ncu-rep")
    return sorted(p for p in rep.parent.glob(f"{name}_raw*") if p.name.endswith((".csv", ".csv.gz")))


def _pairs() -> list[tuple[Path, Path]]:
    pairs = [(V4_FULL, NCU / "full_raw.csv"), (V4_FULL, NCU / "full_raw_base_units.csv")]
    reps = sorted(NCU_REP.glob("*.ncu-rep")) + sorted(NCU_REP.glob("*.ncu-rep.gz"))
    for rep in reps:
        pairs.extend((rep, raw) for raw in _raw_exports(rep))
    return pairs


def test_every_committed_ncu_rep_has_a_raw_export() -> None:
    reps = sorted(NCU_REP.glob("*.ncu-rep")) + sorted(NCU_REP.glob("*.ncu-rep.gz"))
    assert len(reps) >= 2
    assert all(_raw_exports(rep) for rep in reps)


def _csv_rows(path: Path) -> tuple[list[str], list[str], list[list[str]]]:
    data = path.read_bytes()
    text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8-sig")
    lines = [ln for ln in text.splitlines() if not ln.startswith("==")]
    header, units, *rows = list(csv.reader(io.StringIO("\n".join(lines))))
    return header, units, rows


@pytest.mark.parametrize("rep,raw", _pairs(), ids=lambda p: p.name)
def test_every_launch_of_a_ncu_rep_equals_its_raw_csv_export(rep: Path, raw: Path) -> None:
    """For every launch: the same kernel, block, grid, device and compute capability, and for every metric column
    of ncu's raw export the same value (to the precision ncu printed: layout_check.values_agree) or the same
    text; a cell ncu left empty is a metric the wheel has no value for."""
    from_rep = L.load_report(rep)
    from_csv = L.load_report(raw)
    header, units, rows = _csv_rows(raw)
    assert len(from_rep.launches) == len(from_csv.launches) == len(rows)
    found = layout_check.compare(from_rep, from_csv)
    assert found.names_agree
    assert found.disagreements == []
    assert {q.split(" ", 2)[2].split(":")[0] for q in found.ncu_quirks} <= set(layout_check.NCU_BASE_UNIT_QUIRKS)
    metric_columns = [(j, h) for j, h in enumerate(header) if h not in _ID_COLUMNS and ":" not in h]
    compared = 0
    for mine, theirs, row in zip(from_rep.launches, from_csv.launches, rows, strict=True):
        # The function's name as every table shows it; the full demangled name is the report's own spelling, which
        # keeps template casts ncu's CSV writer drops ("sgemm_regdb<(int)128, ...>" against "sgemm_regdb<128, ...>").
        assert (mine.id, mine.function, mine.block, mine.grid, mine.cc, mine.device) == (
            theirs.id,
            theirs.function,
            theirs.block,
            theirs.grid,
            theirs.cc,
            theirs.device,
        )
        assert mine.label == theirs.label
        for j, name in metric_columns:
            cell = row[j].strip()
            number = U.parse_number(cell)
            if number is not None and number != number:  # "nan": no value, which the parser takes as missing
                assert name not in mine.metrics, (mine.id, name)
                continue
            if number is None:
                # Text: the same words, or ncu's "no data"/"n/a" for what the report holds no value of.
                expected = None if cell in ("", "n/a", "no data") else cell
                assert mine.attributes.get(name) == expected and name not in mine.metrics, (mine.id, name, cell)
                continue
            assert name in mine.metrics, (mine.id, name, cell, units[j])
            compared += 1
    assert compared >= 300 * len(rows)
    assert found.compared >= compared - 10 * len(rows)


def test_a_report_read_after_another_has_the_units_it_has_alone() -> None:
    """The wheel's unit of a derived metric depends on what was asked of its report before it, so units are never
    carried from one report to the next: read after small.ncu-rep, v4_full_1024's FP64 FMA count is still in
    threads, as ncu's raw export prints it (it came back as 'inst' when small.ncu-rep's units were remembered)."""
    name = "derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2"
    L.load_report(NCU / "small.ncu-rep")
    after = L.load_report(V4_FULL)
    header, units, _ = _csv_rows(NCU / "full_raw.csv")
    assert units[header.index(name)] == "thread"
    assert (after.launches[0].metrics[name].value, after.launches[0].metrics[name].unit) == (16896, "thread")
    assert layout_check.compare(after, L.load_report(NCU / "full_raw.csv")).disagreements == []


def test_v4_full_capture_values_a_user_sees() -> None:
    """The v4 --set full capture of the bundled H200 run: the numbers the Reports page shows for it."""
    (launch,) = L.load_report(V4_FULL).launches
    assert launch.name == "sgemm_v4_transposed" and launch.label == "v4 1024x1024x1024"
    assert launch.nvtx == "gemmlens:v4:1024x1024x1024"
    assert launch.value("gpu__time_duration.sum") == 268_608
    assert launch.value("launch__registers_per_thread") == 119
    assert launch.attributes["device__attribute_display_name"] == "NVIDIA H200"
    assert len(launch.metrics) >= 2200
    # Rules whole, as the details page lists them: 19 results, 16 with an estimated speedup.
    assert len(launch.findings) == 19
    assert sum(f.estimated_speedup_pct is not None for f in launch.findings) == 16
    issue = next(f for f in launch.findings if f.rule == "IssueSlotUtilization")
    assert (issue.type, issue.section, issue.speedup_type) == ("OPT", "SchedulerStats", "local")
    assert issue.estimated_speedup_pct == pytest.approx(63.38, abs=0.005)
    assert issue.description.startswith("Every scheduler is capable of issuing one instruction per cycle")
    assert issue.description.endswith("sections.")  # not cut


def test_findings_equal_the_details_export() -> None:
    """Rule name, type, section and estimated speedup of every rule row of ncu's details export of the report."""
    (launch,) = L.load_report(V4_FULL).launches
    (details,) = L.load_report(NCU / "full_details.csv").launches

    def key(f):
        return (f.section, f.rule, f.description[:40])

    assert len(details.findings) == len(launch.findings)
    mine_sorted = sorted(launch.findings, key=key)
    theirs_sorted = sorted(details.findings, key=key)
    for mine, theirs in zip(mine_sorted, theirs_sorted, strict=True):
        assert (mine.rule, mine.type, mine.section) == (theirs.rule, theirs.type, theirs.section)
        assert mine.speedup_type == theirs.speedup_type
        if theirs.estimated_speedup_pct is None:
            assert mine.estimated_speedup_pct is None
        else:
            assert mine.estimated_speedup_pct == pytest.approx(theirs.estimated_speedup_pct, abs=0.006)
        # The whole text, its links written as their text as on the details page.
        assert mine.description == theirs.description


def test_small_capture_without_ncu() -> None:
    report = L.load_report(NCU / "small.ncu-rep")
    assert [launch.label for launch in report.launches] == ["v1 256x256x256", "v5 256x256x256"]
    assert [launch.block for launch in report.launches] == [(32, 32, 1), (16, 16, 1)]
    assert report.launches[1].value("launch__registers_per_thread") == 127


def test_upload_of_a_ncu_rep_needs_no_ncu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("NCU_PATH", raising=False)
    report = usecases.load_upload("v4.ncu-rep", V4_FULL.read_bytes())
    assert isinstance(report, P.Report) and report.source == "v4.ncu-rep"
    (launch,) = report.launches
    assert launch.value("gpu__time_duration.sum") == 268_608 and len(launch.findings) == 19


@pytest.mark.parametrize(
    "name,data",
    [
        ("v4.ncu-rep", b"NVR\x00\x07\x00\x00\x00" + b"\x00" * 64),
        ("cut.ncu-rep", (NCU / "small.ncu-rep").read_bytes()[:5000]),
        ("renamed.bin", b"NVR\x00\x09\x00\x00\x00" + b"\x17" * 64),
    ],
)
def test_a_ncu_rep_the_wheel_cannot_read_names_the_versions_and_the_fix(name: str, data: bytes) -> None:
    with pytest.raises(ReportError) as info:
        usecases.load_upload(name, data)
    message = str(info.value)
    assert "\n" not in message and name.rsplit(".", 1)[0] in message
    assert f"ncu-report {ncu_rep.wheel_version()}" in message
    assert "pip install -U ncu-report" in message and "ncu --import" in message
    assert "file format" in message


def test_format_version_is_read_from_the_header() -> None:
    assert ncu_rep.file_format_version(V4_FULL) == 2
    assert ncu_rep.file_format_version(NCU / "raw.csv") is None


def test_without_the_wheel_the_message_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_wheel(name, *args, **kwargs):
        if name == "ncu_report":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_wheel)
    with pytest.raises(ReportError, match=r"needs NVIDIA's reader `ncu-report`.*pip install") as info:
        L.load_report(V4_FULL)
    assert "\n" not in str(info.value)


def test_source_view_of_a_ncu_rep_agrees_with_the_raw_page() -> None:
    """Per-instruction warp-stall samples from the report: summed over the kernel, each reason equals the raw
    page's smsp__pcsamp_warps_issue_stalled_<reason> of the same report; the hottest line is v4's shared store."""
    page = SL.load_source_page(V4_FULL)
    (kernel,) = page.kernels
    (launch,) = L.load_report(NCU / "full_raw.csv").launches
    assert kernel.catalog_id == "v4" and kernel.view == "cuda,sass"
    assert kernel.total_samples == launch.value("smsp__pcsamp_sample_count") == 16_317
    for reason, samples in kernel.stall_totals().items():
        name = "no_instructions" if reason == "no_instruction" else reason
        assert samples == launch.value(f"smsp__pcsamp_warps_issue_stalled_{name}"), reason
    hottest = kernel.hottest_instructions(1)[0]
    assert hottest.sass.startswith("STS") and hottest.samples == 3396
    assert hottest.counters["L1 Conflicts Shared N-Way"] == 8
    top = kernel.hottest_lines(1)[0]
    assert top["file"] == "kernels/src/v4_transposed.cu" and top["dominant_stall"] == "long_scoreboard"
    assert top["source"].strip()  # the catalog's line text


def test_report_command_reads_a_ncu_rep_without_ncu(monkeypatch, capsys) -> None:
    from profiling.cli import main

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("NCU_PATH", raising=False)
    assert main(["report", str(V4_FULL)]) == 0
    out = capsys.readouterr().out
    assert "sgemm_v4_transposed" in out or "v4" in out


def _source_pairs() -> list[tuple[Path, Path]]:
    reps = sorted(NCU_REP.glob("*.ncu-rep")) + sorted(NCU_REP.glob("*.ncu-rep.gz"))
    pairs = []
    for rep in reps:
        name = rep.name.removesuffix(".gz").removesuffix(".ncu-rep")
        pairs.extend((rep, p) for p in sorted(rep.parent.glob(f"{name}_source_*.csv*")))
    return pairs


@pytest.mark.parametrize("rep,export", _source_pairs(), ids=lambda p: p.name)
def test_source_view_of_a_ncu_rep_equals_its_source_export(rep: Path, export: Path) -> None:
    """Every instruction of ncu's source-page export that executed or was sampled is read from the report with
    the same warp-stall samples (all, not issued, per reason), executions and memory counters."""
    mine = ncu_rep.read_source_page(rep)
    theirs = S.parse_source_bytes(export.read_bytes(), source=export.name)
    assert theirs.kernels
    compared = 0
    for kernel in theirs.kernels:
        (same,) = [k for k in mine.kernels if S.short_name(k.name) == S.short_name(kernel.name)]
        # Each instruction sits on the line the report names for it; ncu's export lists an inlined instruction
        # under its call sites too, so the export's lines include ours.
        assert {ln.line for ln in same.lines} <= {ln.line for ln in kernel.lines}
        for address, ins in kernel.instructions.items():
            if not (ins.samples or ins.executed):
                continue
            got = same.instructions[address]
            assert (got.samples, got.samples_not_issued, got.executed) == (
                ins.samples,
                ins.samples_not_issued,
                ins.executed,
            ), hex(address)
            assert {r: v for r, v in got.stalls.items() if v} == ins.stalls, hex(address)
            for label in (S.N_WAY, S.SHARED_EXCESSIVE, S.GLOBAL_EXCESSIVE):
                assert got.counters.get(label) == ins.counters.get(label), (hex(address), label)
            compared += 1
    assert compared >= 40
