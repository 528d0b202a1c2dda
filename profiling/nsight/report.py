"""Read any Nsight Compute report (CSV pages or .ncu-rep) into one model of kernel launches.

Layouts understood: `--page raw` (header, units row, one row per launch), `--page details` (one row per
section metric or rule, display labels or raw names), `--print-summary per-kernel` (Invocations /
Minimum / Maximum / Average), `--print-units auto`, and ncu's stdout with `==PROF==` lines and the
program's own output around the CSV. Values are converted to base units (see profiling.nsight.metrics); a
value that is not finite (`nan`, `inf`, `1e400`) is missing, with a warning naming the metric.

Input is streamed (profiling.nsight.report_input): UTF-8, UTF-16 or UTF-32 text, read line by line, and the
raw page's values are kept in one float64 table per report (profiling.nsight.metric_table).
"""

from __future__ import annotations

import copy
import io
import itertools
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from profiling.errors import ReportError
from profiling.nsight import metric_registry as R
from profiling.nsight import metrics as M
from profiling.nsight import report_input
from profiling.nsight.layouts import derived_metric, parse_details, parse_raw, parse_summary
from profiling.nsight.metric_table import Metric
from profiling.nsight.model import Finding, KernelLaunch, Layout, Report
from profiling.nsight.text_report import parse_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Finding",
    "KernelLaunch",
    "Layout",
    "Metric",
    "Report",
    "parse_report_bytes",
    "parse_report_stream",
    "parse_report_text",
]

MAX_REPORT_BYTES = 200 * 1000 * 1000
"""Uploads above this are refused: a raw page of 10,000 launches x 400 columns is about 40 MB."""

NCU_REP_MAGIC = b"NVR\x00"
"""First bytes of a .ncu-rep, so a renamed one is still recognised (see test_ncu_rep_magic)."""


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def parse_report_bytes(data: bytes, source: str = "", ours: bool = False) -> Report:
    """Parse report bytes (CSV of any layout, or captured ncu stdout) without a second copy of them."""
    name = Path(source).name or "the report"
    if len(data) > MAX_REPORT_BYTES:
        raise ReportError(f"{name} is over {MAX_REPORT_BYTES / 1e6:.0f} MB; reports that large are not read")
    return parse_report_stream(io.BytesIO(data), source=source, ours=ours)


def parse_report_stream(binary: BinaryIO, source: str = "", ours: bool = False) -> Report:
    """Parse a seekable binary stream (an open file, BytesIO) of report text, reading it once as it goes.

    UTF-8 with or without a BOM, UTF-16 and UTF-32 are read; other bytes that are not UTF-8 are read as Latin-1
    with a warning, and a binary file is refused. Raises ReportError with a one-line message, which names the
    encoding read when it was not UTF-8; an OSError of the stream itself is the caller's to word. `ours`: the report
    comes from a run we made (KernelLaunch.ours), so our kernels may be told by name.
    """
    name = Path(source).name or "the report"
    head = binary.read(report_input.SNIFF_BYTES)
    binary.seek(0)
    codec = report_input.sniff_encoding(head, name)
    label = report_input.encoding_label(codec)
    notes = report_input.Notes()
    if codec != "utf-8" and codec != "utf-8-sig":
        notes.add(f"{name} is {label} text (ncu writes UTF-8): read as {label}")
    lines = report_input.decoded_lines(binary, codec)
    try:
        return _parse_lines(lines, source, notes, ours)
    except UnicodeDecodeError:
        pass  # read again below, as Latin-1
    except ReportError as exc:
        if codec.startswith("utf-8"):
            raise
        raise ReportError(f"{exc} (the file was read as {label} text)") from None
    finally:
        lines.close()
    binary.seek(0)
    seen = "not UTF-8" if codec.startswith("utf-8") else f"not valid {label}"
    notes = report_input.Notes()
    notes.add(f"{name} is {seen} (ncu writes UTF-8): read as Latin-1, so accented text may show wrongly")
    lines = report_input.decoded_lines(binary, "latin-1")
    try:
        return _parse_lines(lines, source, notes, ours)
    except ReportError as exc:
        raise ReportError(f"{exc} (the file is {seen} text; it was read as Latin-1)") from None
    finally:
        lines.close()


def parse_report_text(text: str, source: str = "", ours: bool = False) -> Report:
    """Parse the text of a CSV export or ncu stdout into a Report; raises ReportError when unreadable."""
    return _parse_lines(report_input.text_lines(text), source, report_input.Notes(), ours)


def _parse_lines(lines: Iterator[str], source: str, notes: report_input.Notes, ours: bool = False) -> Report:
    name = Path(source).name or "the report"
    header = report_input.find_header(lines, name, notes)
    if isinstance(header, report_input.TextStart):
        report = parse_text(itertools.chain([header.line], lines), notes)
        if header.errors and not any(launch.metrics for launch in report.launches):
            raise ReportError(f"{name} holds no metrics; ncu said: {header.errors}")
        return _finish(report, source, notes, ours, name)
    records = report_input.body_records(lines, name, notes)
    columns = set(header)
    if {"Metric Name", "Metric Value"} <= columns:
        report = parse_details(header, report_input.csv_rows(records, name), notes)
    elif {"Metric Name", "Average"} <= columns:
        report = parse_summary(header, report_input.csv_rows(records, name), notes)
    else:
        report = parse_raw(header, records, notes, name)
    return _finish(report, source, notes, ours, name)


def _finish(report: Report, source: str, notes: report_input.Notes, ours: bool, name: str) -> Report:
    report.source = source
    if not report.launches:
        raise ReportError(f"{name} has a header but no kernel launches (truncated, or no kernel was profiled)")
    known: dict[tuple[Any, ...], Any] = {}
    for launch in report.launches:
        launch.ours = ours
        launch.identify(known)
    report.warnings = notes.finish()
    return report


def merge_findings(target: Report, details: Report) -> None:
    """Copy rule findings and metrics missing from `target` out of a details-page Report of the same run."""
    by_id = {launch.id: launch for launch in details.launches}
    for launch in target.launches:
        other = by_id.get(launch.id)
        if other is not None:
            _merge_launch(launch, other)


def _merge_launch(launch: KernelLaunch, other: KernelLaunch) -> None:
    """`other`'s findings, and its metrics, unmapped rows and tables that `launch` lacks, added to `launch`."""
    launch.findings.extend(other.findings)
    for name, metric in other.metrics.items():
        launch.metrics.setdefault(name, metric)
    launch.unmapped.update(other.unmapped)
    for title, rows in other.tables.items():
        launch.tables.setdefault(title, rows)
    M.fill_fallbacks(launch.metrics, derived_metric)
    launch.derived = M.derive(launch.metric_values())
    launch.identify()


def launch_key(launch: KernelLaunch) -> tuple:
    """What identifies one launch across the pages of one capture: process, ncu's launch ID, kernel name, and
    the block, grid, device and NVTX range that each page repeats."""
    return launch.process, launch.id, launch.name, launch.block, launch.grid, launch.device, launch.nvtx


def merge_pages(reports: Sequence[tuple[str, Report]]) -> tuple[list[tuple[str, Report]], list[str]]:
    """Reports read together, with the launches that several pages of one capture hold (its raw and details
    pages) merged into one launch with the union of their metrics and findings, and a note per merge.

    A launch is the same when launch_key agrees and the two reports are different pages (layouts): two raw pages
    are two runs, whose IDs and names repeat (the process is known by name only). It is kept in the first report
    that has it; a report left with no launch of its own is dropped. The reports given are not changed (they may
    be shared between sessions): a report that takes in another's launches is a copy.
    """
    first: dict[tuple, list[int]] = {}  # launch key -> indexes in `out` of the reports holding it
    out: list[tuple[str, Report]] = []
    copied: set[int] = set()
    notes: list[str] = []
    for name, report in reports:
        own, merged_into = [], {}
        for launch in report.launches:
            key = launch_key(launch)
            at = next((i for i in first.get(key, ()) if out[i][1].layout != report.layout), None)
            if at is None:
                own.append(launch)
                continue
            if at not in copied:
                out[at] = (out[at][0], copy.deepcopy(out[at][1]))
                copied.add(at)
            target = next(lc for lc in out[at][1].launches if launch_key(lc) == key)
            _merge_launch(target, launch)
            merged_into[out[at][0]] = merged_into.get(out[at][0], 0) + 1
        for target, count in merged_into.items():
            held = f"the same {count} launches as" if not own else f"{count} launch(es) also in"
            notes.append(
                f"{name} holds {held} {target} (same process, ID and kernel): each is shown once, with the "
                "metrics and findings of both files"
            )
        if not own:
            continue
        if len(own) < len(report.launches):
            kept = copy.copy(report)
            kept.launches = own
            report = kept
        for launch in own:
            first.setdefault(launch_key(launch), []).append(len(out))
        out.append((name, report))
    return out, notes


# ---------------------------------------------------------------------------------------------
# Catalog matching and tables
# ---------------------------------------------------------------------------------------------


def metric_sources(launch: KernelLaunch) -> str:
    """'dram__bytes.sum = dram__bytes_read.sum + dram__bytes_write.sum; ...' for each metric the launch's report
    did not hold but its other metrics gave (empty when none)."""
    found = []
    for target, *_ in M.FALLBACKS:
        metric = launch.metrics.get(target)
        if metric is not None and metric.derived_from and f"{target} =" not in " ".join(found):
            found.append(f"{target} = {metric.derived_from}")
    return "; ".join(found)


KEY_COLUMNS: tuple[tuple[str, str], ...] = tuple((d.key, d.names[0]) for d in R.FRAME_COLUMNS)
KEY_DERIVED: tuple[str, ...] = (
    "theoretical_occupancy_pct",
    "achieved_occupancy_pct",
    "occupancy_achieved_of_theoretical",
    "shared_ld_bank_conflict_pct",
    "shared_ld_n_way",
    "shared_st_bank_conflict_pct",
    "shared_st_n_way",
    "fp32_flops",
    "fp32_flops_per_second",
    "fp32_pct_of_peak",
    "dram_bytes_per_second",
    "ai_l1",
    "ai_l2",
    "ai_dram",
)


def key_metrics_frame(report: Report) -> pd.DataFrame:
    """One row per launch with the key metrics.

    Columns: id, kernel (the function's own name), full_name (as ncu printed it), label, catalog_id, block, grid,
    cc, the KEY_COLUMNS names (base units: ns, bytes, counts), the KEY_DERIVED names (%, flop, flop/second,
    flop/byte) and derived_from (metric_sources: which values were derived from which metrics); missing values
    are NaN.
    """
    import pandas as pd  # lazy: reading a report for the CLI or the worker needs no pandas

    records = []
    for launch in report.launches:
        record: dict[str, Any] = {
            "id": launch.id,
            "kernel": launch.function,
            "full_name": launch.name,
            "label": launch.label,
            "catalog_id": launch.identity.kernel_id,
            "block": "x".join(map(str, launch.block)) if launch.block else None,
            "grid": "x".join(map(str, launch.grid)) if launch.grid else None,
            "cc": launch.cc,
        }
        for column, name in KEY_COLUMNS:
            record[column] = launch.value(name)
        for name in KEY_DERIVED:
            record[name] = launch.derived.get(name)
        record["derived_from"] = metric_sources(launch)
        records.append(record)
    frame = pd.DataFrame.from_records(records)
    numeric = [c for c, _ in KEY_COLUMNS] + list(KEY_DERIVED)
    frame[numeric] = frame[numeric].astype("float64")
    return frame


def iter_metric_names(report: Report) -> Iterable[str]:
    """Every canonical metric name present in any launch, in first-seen order."""
    seen: dict[str, None] = {}
    for launch in report.launches:
        for name in launch.metrics:
            seen.setdefault(name, None)
    return list(seen)
