"""Open a report of any kind, from a file or an upload's bytes: CSV or ncu's text output is parsed here, a
`.ncu-rep` is read by NVIDIA's `ncu-report` wheel (profiling.nsight.ncu_rep, no ncu needed); an upload that is a
source page comes back as one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TypeAlias

from profiling.errors import GemmLensError, ReportError
from profiling.nsight import ncu_rep, report_input
from profiling.nsight.report import (
    MAX_REPORT_BYTES,
    NCU_REP_MAGIC,
    Report,
    parse_report_bytes,
    parse_report_stream,
)
from profiling.nsight.report_input import SourcePageGiven
from profiling.nsight.source import SourcePage, parse_source_bytes

LoadedUpload: TypeAlias = Report | SourcePage
"""What load_upload gives: a Report (metrics of launches), or a SourcePage (a `--page source` export, for the
source view)."""


def check_report_file(path: Path, what: str, hint: str = "") -> None:
    """ReportError with one line unless `path` is a readable file of at most MAX_REPORT_BYTES."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not path.is_file():
        raise ReportError(f"{path} is not a file")
    if size > MAX_REPORT_BYTES:
        limit = f"{path.name} is {size / 1e6:.0f} MB; {what} over {MAX_REPORT_BYTES / 1e6:.0f} MB are not read"
        raise ReportError(f"{limit} {hint}".rstrip())


def load_report(
    path: str | os.PathLike[str], ncu: str | None = None, timeout_s: float = 300, ours: bool = False
) -> Report:
    """Read a report file: any CSV layout, ncu's text output or stdout, or a `.ncu-rep` (through the ncu-report
    wheel; `ncu` and `timeout_s` are kept for callers that pass them and are not used).

    `ours`: the file comes from a run we made, so our kernels may be told by name where it has no NVTX ranges
    (KernelLaunch.ours). Raises ReportError with a one-line message for anything unreadable, SourcePageGiven
    (a ReportError) for a source-page export.
    """
    path = Path(path)
    check_report_file(path, "reports", "(export fewer kernels or metrics)")
    if ncu_rep.is_ncu_rep(path):
        return load_ncu_rep(path, ncu=ncu, timeout_s=timeout_s, ours=ours)
    try:
        with path.open("rb") as fh:
            if fh.read(2) == b"\x1f\x8b":  # a gzip export (`.csv.gz`), as the uploader and `source` take them
                fh.seek(0)
                data = report_input.gunzip(fh.read(), path.name, MAX_REPORT_BYTES)
                return parse_report_bytes(data, source=str(path), ours=ours)
            fh.seek(0)
            # Parsed as it is read: the file's bytes are never all in memory at once.
            return parse_report_stream(fh, source=str(path), ours=ours)
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None


def load_ncu_rep(
    path: str | os.PathLike[str], ncu: str | None = None, timeout_s: float = 300, ours: bool = False
) -> Report:
    """Read a `.ncu-rep` with the ncu-report wheel: every metric of every launch, NVTX ranges and rule findings.

    No process is started. Only where the wheel is not installed and an `ncu` is given (a GPU machine that has
    just written the report) is the report read with `ncu --import` instead.
    """
    try:
        return ncu_rep.read_ncu_rep(path, ours=ours)
    except ncu_rep.ReaderMissing:
        if ncu is None:
            raise
    return _import_with_ncu(Path(path), ncu, timeout_s, ours)


def _import_with_ncu(path: Path, ncu: str, timeout_s: float, ours: bool) -> Report:
    """The raw page (metrics) and details page (rule findings) of a `.ncu-rep` through `ncu --import`."""
    from profiling.nsight import tools
    from profiling.nsight.report import merge_findings, parse_report_text

    report = parse_report_text(tools.import_page(ncu, path, "raw", timeout_s=timeout_s), source=str(path), ours=ours)
    try:
        details_text = tools.import_page(ncu, path, "details", timeout_s=timeout_s)
        merge_findings(report, parse_report_text(details_text, source=str(path)))
    except GemmLensError as exc:
        report.warnings.append(f"rule findings not read: {exc}")
    return report


def load_upload(name: str, data: bytes, ncu: str | None = None) -> LoadedUpload:
    """Read an uploaded report from its bytes: CSV of any ncu page, ncu's text output or stdout (plain or gzip), or
    a `.ncu-rep` (through the ncu-report wheel). A source-page export (`--page source --csv`) comes back as a SourcePage.

    Raises ReportError with a one-line message for empty, oversized, binary, truncated or foreign files.
    """
    shown = Path(name).name or "upload"
    if not data:
        raise ReportError(f"{shown} is empty; expected an Nsight Compute CSV export or a .ncu-rep file")
    if len(data) > MAX_REPORT_BYTES:
        raise ReportError(
            f"{shown} is {len(data) / 1e6:.0f} MB; uploads over {MAX_REPORT_BYTES / 1e6:.0f} MB are not read"
        )
    suffix = Path(shown).suffix.lower()
    if data[:2] == report_input.GZIP_MAGIC and not shown.lower().endswith(".ncu-rep.gz"):
        data = report_input.gunzip(data, shown, MAX_REPORT_BYTES)
    if suffix == ".ncu-rep" or data.startswith(NCU_REP_MAGIC) or shown.lower().endswith(".ncu-rep.gz"):
        # The wheel reads files only: the bytes go to a private temporary file for the time of the read.
        with tempfile.TemporaryDirectory(prefix="gemmlens-upload-") as tmp:
            path = Path(tmp) / (Path(shown).stem[:100] + (".ncu-rep.gz" if data[:2] == b"\x1f\x8b" else ".ncu-rep"))
            path.write_bytes(data)
            report = ncu_rep.read_ncu_rep(path)
            # The source view is read while the file is here: an upload's bytes are not kept.
            page = ncu_rep.read_source_page(path)
            if any(k.instructions for k in page.kernels):
                page.source = shown
                report.source_page = page
    elif suffix == ".json":
        raise ReportError(
            f"{shown} is JSON; import saved runs on the Review page, reports here are ncu CSV or .ncu-rep"
        )
    else:
        try:
            report = parse_report_bytes(data, source=shown)
        except SourcePageGiven:
            page = parse_source_bytes(data, source=shown)
            page.source = shown
            return page
    report.source = shown
    return report
