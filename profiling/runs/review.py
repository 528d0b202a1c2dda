"""Review of saved runs: listing and filtering, result tables and kernel history.

Pure functions over runs (SavedRun, or their `gemmlens.run.v1` record dicts) and pandas DataFrames, for the
Streamlit Review page. The comparison is profiling.runs.comparison, the CSV/JSON export and import
profiling.runs.export, the figures profiling.charts.review and the HTML review profiling.charts.review_html.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from profiling.errors import InvalidInput
from profiling.runs.records import RESULT_FIELDS, SavedRun, as_run
from profiling.runs.values import iso_utc

RUN_COLUMNS = [
    "id",
    "label",
    "author",
    "notes",
    "created",
    "kind",
    "device_name",
    "device_cc",
    "catalog_commit",
    "n_results",
    "kernels",
]


# ---------------------------------------------------------------------------------------------
# Listing and filtering
# ---------------------------------------------------------------------------------------------


def runs_frame(summaries: Iterable[SavedRun | Mapping[str, Any]]) -> pd.DataFrame:
    """A DataFrame of run summaries (RunStore.list_runs() or full runs), `created` as UTC timestamps."""
    rows = []
    for s in summaries:
        if isinstance(s, SavedRun):
            s = s.to_dict()
        kernels = s.get("kernels")
        if kernels is None:
            kernels = sorted({r["kernel"] for r in s.get("results", ())})
        device = s.get("device") or {}
        rows.append(
            {
                "id": s.get("id"),
                "label": s.get("label", ""),
                "author": s.get("author", ""),
                "notes": s.get("notes", ""),
                "created": pd.Timestamp(s["created_utc"]) if s.get("created_utc") else pd.NaT,
                "kind": s.get("kind", ""),
                "device_name": s.get("device_name") or device.get("name"),
                "device_cc": s.get("device_cc") or device.get("cc"),
                "catalog_commit": s.get("catalog_commit"),
                "n_results": s.get("n_results", len(s.get("results", ()))),
                "kernels": list(kernels),
            }
        )
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS)
    frame["created"] = pd.to_datetime(frame["created"], utc=True)
    return frame


def _contains(series: pd.Series, text: str) -> pd.Series:
    return series.fillna("").astype(str).str.contains(text, case=False, regex=False)


def _timestamp(value: str | dt.date | dt.datetime | pd.Timestamp, *, end: bool) -> pd.Timestamp:
    stamp = pd.Timestamp(value)
    if stamp.tzinfo is None:
        stamp = stamp.tz_localize("UTC")
    # A bare date as an upper bound means "through that day".
    if end and isinstance(value, (dt.date, str)) and not isinstance(value, dt.datetime):
        if stamp == stamp.normalize() and (not isinstance(value, str) or len(value.strip()) <= 10):
            stamp = stamp + pd.Timedelta(days=1) - pd.Timedelta(microseconds=1)
    return stamp


def filter_runs(
    runs: pd.DataFrame,
    *,
    device: str | None = None,
    kernel: str | None = None,
    label: str | None = None,
    author: str | None = None,
    since: str | dt.date | dt.datetime | None = None,
    until: str | dt.date | dt.datetime | None = None,
) -> pd.DataFrame:
    """Runs matching every given filter. Text filters are case-insensitive substrings (kernel: of any
    kernel in the run); since/until are inclusive, and a bare date as `until` includes that whole day."""
    keep = pd.Series(True, index=runs.index)
    if device:
        keep &= _contains(runs["device_name"], device)
    if label:
        keep &= _contains(runs["label"], label)
    if author:
        keep &= _contains(runs["author"], author)
    if kernel:
        needle = kernel.lower()
        keep &= runs["kernels"].map(lambda ks: any(needle in k.lower() for k in ks))
    try:
        if since:
            keep &= runs["created"] >= _timestamp(since, end=False)
        if until:
            keep &= runs["created"] <= _timestamp(until, end=True)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"not a date: {exc}") from exc
    return runs[keep]


def results_frame(runs: Iterable[SavedRun | Mapping[str, Any]]) -> pd.DataFrame:
    """One row per result of the given runs, with run_id, run_label, created, device_name, size."""
    rows = []
    for run in map(as_run, runs):
        for r in run.results:
            rows.append(
                {
                    "run_id": run.id,
                    "run_label": run.label,
                    "created": iso_utc(run.created),
                    "device_name": run.device_name,
                    "size": r.size,
                    **r.columns(),
                }
            )
    frame = pd.DataFrame(rows, columns=["run_id", "run_label", "created", "device_name", "size", *RESULT_FIELDS])
    frame["created"] = pd.to_datetime(frame["created"], utc=True)
    return frame


def rows_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """RunStore.result_rows() as a DataFrame shaped like results_frame()."""
    runs: dict[Any, dict[str, Any]] = {}
    for row in rows:
        run = runs.setdefault(
            row["run_id"],
            {
                "id": row["run_id"],
                "label": row.get("run_label", ""),
                "created_utc": row.get("created_utc"),
                "device_name": row.get("device_name"),
                "results": [],
            },
        )
        run["results"].append(row)
    return results_frame(runs.values())


def keys_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """RunStore.result_keys() as a DataFrame with rows_frame()'s run_id, kernel, size, device_name and created
    columns (the same values), for what needs only which kernels and sizes each run holds."""
    frame = pd.DataFrame(
        [
            {
                "run_id": row["run_id"],
                "created": row["created_utc"],
                "device_name": row["device_name"],
                "size": row["size"],
                "kernel": row["kernel"],
            }
            for row in rows
        ],
        columns=["run_id", "created", "device_name", "size", "kernel"],
    )
    frame["created"] = pd.to_datetime(frame["created"], utc=True)
    return frame


# ---------------------------------------------------------------------------------------------
# History
# ---------------------------------------------------------------------------------------------


def kernel_history(
    results: pd.DataFrame,
    kernel: str,
    *,
    device: str | None = None,
    size: str | None = None,
    metric: str = "time_median_ms",
) -> pd.DataFrame:
    """One kernel's `metric` across runs, oldest first: created, run_id, run_label, device_name, size,
    value. `results` is results_frame()/rows_frame(); plot one line per (device_name, size)."""
    part = results[results["kernel"] == kernel]
    if device is not None:
        part = part[part["device_name"] == device]
    if size is not None:
        part = part[part["size"] == size]
    part = part[part["status"].fillna("ok") == "ok"]
    out = part[["created", "run_id", "run_label", "device_name", "size"]].copy()
    out["value"] = pd.to_numeric(part[metric], errors="coerce")
    return out.dropna(subset=["value"]).sort_values(["created", "run_id"]).reset_index(drop=True)
