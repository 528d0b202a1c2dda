"""Export and import of review data: any review table as CSV or JSON, and whole runs as one JSON document
(`gemmlens.runs.v1`) that another store imports. The HTML report is profiling.charts.review_html.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from profiling.errors import InvalidInput
from profiling.runs.records import EXPORT_SCHEMA, RUN_SCHEMA, SavedRun, as_run
from profiling.runs.values import iso_utc, parse_json, to_utc
from profiling.team.roles import Identity, PermissionDenied, require

# A cell starting with one of these is a formula to Excel, LibreOffice or Google Sheets (OWASP's "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> Any:
    """Text a spreadsheet would run as a formula (`=cmd|' /C calc'!A0`, `@SUM(...)`) with a leading single quote,
    so it shows as text; other text and every number as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def to_csv(frame: pd.DataFrame) -> str:
    """CSV text of any table for download: lists are joined with ';', and every text cell is spreadsheet_safe
    (numeric columns stay numbers, negative ones included)."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_numeric_dtype(out[col]) or pd.api.types.is_bool_dtype(out[col]):
            continue
        joined = out[col].map(lambda v: ";".join(map(str, v)) if isinstance(v, list) else v)
        out[col] = joined.map(spreadsheet_safe)
    out.columns = [spreadsheet_safe(str(c)) for c in out.columns]
    buffer = io.StringIO()
    # Text quoted, numbers not: a bare CR inside a cell would otherwise end the row in a spreadsheet.
    out.to_csv(buffer, index=False, quoting=csv.QUOTE_NONNUMERIC)
    return buffer.getvalue()


def to_json(frame: pd.DataFrame) -> str:
    """JSON records of any review table (timestamps in ISO 8601)."""
    return frame.to_json(orient="records", date_format="iso", force_ascii=False, indent=1)


def export_runs_json(runs: Sequence[SavedRun | Mapping[str, Any]]) -> str:
    """Full run records as one JSON document (`gemmlens.runs.v1`) that import_runs_json reads back."""
    clean = []
    for run in map(as_run, runs):
        rec = run.to_dict(store_fields=False)
        # Kept for reference; a store assigns its own on import.
        if run.id is not None:
            rec["source_id"] = run.id
        if run.saved is not None:
            rec["source_saved_utc"] = iso_utc(run.saved)
        clean.append(rec)
    doc = {"schema": EXPORT_SCHEMA, "exported_utc": iso_utc(to_utc(None)), "runs": clean}
    return json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False)


def read_runs_json(text: str | bytes, source: str = "the import") -> list[SavedRun]:
    """The runs of export_runs_json() output (or of a single run record), without their source store ids;
    save them with RunStore.import_runs. InvalidInput names the first bad field (e.g. "run 1 of the export:
    result 3 (v5): m 1e+300 is out of range")."""
    doc = parse_json(text, source, expected="a JSON export of runs")
    if isinstance(doc, Mapping) and doc.get("schema") == EXPORT_SCHEMA:
        runs = doc.get("runs")
        if not isinstance(runs, list):
            raise InvalidInput("the runs export has no `runs` list")
    elif isinstance(doc, Mapping) and "results" in doc and doc.get("schema", RUN_SCHEMA) == RUN_SCHEMA:
        runs = [doc]
    else:
        found = doc.get("schema") if isinstance(doc, Mapping) else type(doc).__name__
        raise InvalidInput(f"not a GEMM Lens runs export: schema {found!r}, expected {EXPORT_SCHEMA!r}")
    out = []
    for i, run in enumerate(runs):
        try:
            out.append(SavedRun.from_dict(run).detached())
        except InvalidInput as exc:
            raise InvalidInput(f"run {i + 1} of the export: {exc}") from exc
    return out


MAX_IMPORT_MB = 25
"""The largest runs export imported on the Review page, in MB (10^6 bytes). An export of a 48-result benchmark
with every launch's time is about 100 KB; parsing JSON takes about 25 times its size in memory, so the cap keeps
one import from taking the server's memory. The page's uploader is given it too (st.file_uploader's
max_upload_size), so the browser refuses a bigger file before sending a byte."""
MAX_IMPORT_BYTES = MAX_IMPORT_MB * 1000 * 1000


def read_runs_upload(actor: Identity | None, name: str, size: int, read: Callable[[], bytes]) -> list[SavedRun]:
    """The runs of an uploaded export, checked in the order that costs least: the role first (before a byte is
    read: `read` is called only for an identity that may save runs), then the size (MAX_IMPORT_BYTES), then the
    content (read_runs_json). PermissionDenied or InvalidInput with one line."""
    if actor is None:
        raise PermissionDenied("sign in first: importing runs needs a signed-in identity")
    require(actor, "save")
    if size > MAX_IMPORT_BYTES:
        raise InvalidInput(
            f"{name} is {size / 1e6:.0f} MB; run imports over {MAX_IMPORT_BYTES / 1e6:.0f} MB are not read (export "
            "fewer runs at a time)"
        )
    return read_runs_json(read(), name)


def import_runs_json(text: str | bytes) -> list[dict[str, Any]]:
    """read_runs_json() as run record dicts."""
    return [run.to_dict() for run in read_runs_json(text)]
