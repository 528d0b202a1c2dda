"""Open a report of any kind, from a file or an upload's bytes: CSV or ncu's text output is parsed here, a
`.ncu-rep` goes through `ncu --import`; an upload that is a source page comes back as one."""

from __future__ import annotations

import os
import tempfile
import zlib
from pathlib import Path
from typing import TypeAlias

from profiling.errors import GemmLensError, ReportError
from profiling.nsight import tools
from profiling.nsight.report import (
    MAX_REPORT_BYTES,
    NCU_REP_MAGIC,
    Report,
    merge_findings,
    parse_report_bytes,
    parse_report_stream,
    parse_report_text,
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
    """Read a report file: any CSV layout, ncu's text output or stdout, or a `.ncu-rep` (through `ncu --import`).

    `ours`: the file comes from a run we made, so our kernels may be told by name where it has no NVTX ranges
    (KernelLaunch.ours). Raises ReportError with a one-line message for anything unreadable, SourcePageGiven
    (a ReportError) for a source-page export.
    """
    path = Path(path)
    check_report_file(path, "reports", "(export fewer kernels or metrics)")
    try:
        with path.open("rb") as fh:
            if path.suffix != ".ncu-rep" and fh.read(len(NCU_REP_MAGIC)) != NCU_REP_MAGIC:
                fh.seek(0)
                # Parsed as it is read: the file's bytes are never all in memory at once.
                return parse_report_stream(fh, source=str(path), ours=ours)
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    return load_ncu_rep(path, ncu=ncu, timeout_s=timeout_s, ours=ours)


def load_ncu_rep(
    path: str | os.PathLike[str], ncu: str | None = None, timeout_s: float = 300, ours: bool = False
) -> Report:
    """Read a `.ncu-rep` through `ncu --import` (raw page for metrics, details page for rule findings)."""
    path = Path(path)
    exe = ncu or tools.find_ncu()
    if exe is None:
        raise ReportError(
            f"reading {path.name} needs Nsight Compute (ncu), which is not installed here; install it "
            "(CUDA toolkit or https://developer.nvidia.com/nsight-compute) or export CSV where it is: "
            f"`ncu --import {path.name} --csv --page raw > report.csv`"
        )
    raw_text = tools.import_page(exe, path, "raw", timeout_s=timeout_s)
    report = parse_report_text(raw_text, source=str(path), ours=ours)
    try:
        details_text = tools.import_page(exe, path, "details", timeout_s=timeout_s)
        merge_findings(report, parse_report_text(details_text, source=str(path)))
    except GemmLensError as exc:
        report.warnings.append(f"rule findings not read: {exc}")
    return report


def _gunzip(data: bytes, shown: str) -> bytes:
    """The bytes of a gzip upload, refused past MAX_REPORT_BYTES unpacked (a small file can unpack to gigabytes)."""
    unpacker = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = unpacker.decompress(data, MAX_REPORT_BYTES + 1)
    except zlib.error as exc:
        raise ReportError(f"{shown} is a damaged gzip file ({exc})") from None
    if len(out) > MAX_REPORT_BYTES:
        raise ReportError(f"{shown} unpacks to over {MAX_REPORT_BYTES / 1e6:.0f} MB; reports that large are not read")
    return out


def load_upload(name: str, data: bytes, ncu: str | None = None) -> LoadedUpload:
    """Read an uploaded report from its bytes: CSV of any ncu page, ncu's text output or stdout (plain or gzip), or
    a `.ncu-rep` (through ncu). A source-page export (`--page source --csv`) comes back as a SourcePage.

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
    if suffix == ".ncu-rep" or data.startswith(NCU_REP_MAGIC):
        exe = ncu or tools.find_ncu()
        if exe is None:
            raise ReportError(
                f"reading {shown} needs Nsight Compute (ncu), which is not installed here; upload its CSV "
                "export instead (ncu --import report.ncu-rep --csv --page raw > report.csv)"
            )
        with tempfile.TemporaryDirectory(prefix="gemmlens-upload-") as tmp:
            path = Path(tmp) / (Path(shown).stem + ".ncu-rep")
            path.write_bytes(data)
            report = load_ncu_rep(path, ncu=exe)
    elif suffix == ".json":
        raise ReportError(
            f"{shown} is JSON; import saved runs on the Review page, reports here are ncu CSV or .ncu-rep"
        )
    else:
        if data[:2] == b"\x1f\x8b":
            data = _gunzip(data, shown)
        try:
            report = parse_report_bytes(data, source=shown)
        except SourcePageGiven:
            page = parse_source_bytes(data, source=shown)
            page.source = shown
            return page
    report.source = shown
    return report
