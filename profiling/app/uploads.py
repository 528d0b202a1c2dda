"""Uploaded report files, read by the parser's own checks (profiling.nsight.load and .report).

The one check added here: a JSON upload is a runs export meant for the Review page, so it is pointed there.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from profiling.errors import ReportError
from profiling.nsight import load as ncu_load
from profiling.nsight import report as ncu_report

MAX_UPLOAD_BYTES = ncu_report.MAX_REPORT_BYTES
"""The parser's limit; server.maxUploadSize in .streamlit/config.toml matches it."""
MAX_UPLOAD_MB = MAX_UPLOAD_BYTES // (1000 * 1000)


def read_upload(name: str, data: bytes, ncu: str | None = None) -> ncu_report.Report:
    """Parse one uploaded report (CSV of any ncu page, ncu stdout, or .ncu-rep through ncu).

    Raises ReportError with a one-line message for empty, oversized, binary, truncated or foreign files.
    """
    shown = Path(name).name or "upload"
    suffix = Path(shown).suffix.lower()
    if suffix == ".json" and data.strip():
        raise ReportError(
            f"{shown} is JSON; import saved runs on the Review page, reports here are ncu CSV or .ncu-rep"
        )
    if data.strip() and (suffix == ".ncu-rep" or data.startswith(ncu_report.NCU_REP_MAGIC)):
        # ncu --import reads files only: the upload goes to a temporary file under its own name.
        with tempfile.TemporaryDirectory(prefix="gemmlens-upload-") as tmp:
            path = Path(tmp) / (Path(shown).stem + ".ncu-rep")
            path.write_bytes(data)
            report = ncu_load.load_report(path, ncu=ncu)
    else:
        report = ncu_report.parse_report_bytes(data, source=shown)
    report.source = shown
    return report
