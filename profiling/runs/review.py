"""Review of saved runs: listing and filtering, result tables, kernel history and the HTML report.

Pure functions over runs (SavedRun, or their `gemmlens.run.v1` record dicts) and pandas DataFrames, for the
Streamlit Review page. The comparison is profiling.runs.comparison, the CSV/JSON export and import
profiling.runs.export, the figures profiling.charts.review.
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from profiling.charts.review import comparison_figures
from profiling.errors import InvalidInput
from profiling.runs.comparison import (
    BETTER_VERDICTS,
    DEFAULT_THRESHOLD_PCT,
    VERDICT_COLORS,
    WORSE_VERDICTS,
    compare_runs,
    notes_said_once,
    side_by_side,
)
from profiling.runs.records import RESULT_FIELDS, SavedRun, as_run
from profiling.runs.values import iso_utc
from profiling.runs.verdict import comparability

RUN_COLUMNS = [
    "id", "label", "author", "notes", "created", "kind", "device_name", "device_cc",
    "catalog_commit", "n_results", "kernels",
]  # fmt: skip


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
            {"id": row["run_id"], "label": row.get("run_label", ""), "created_utc": row.get("created_utc"),
             "device_name": row.get("device_name"), "results": []},
        )  # fmt: skip
        run["results"].append(row)
    return results_frame(runs.values())


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


# ---------------------------------------------------------------------------------------------
# The HTML report
# ---------------------------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return "inf" if math.isinf(value) else f"{value:.4g}"
    return str(value)


def _table_html(frame: pd.DataFrame) -> str:
    """An HTML table; "<x> verdict" columns colour the cells of their metric and are not shown."""
    verdict_cols = [c for c in frame.columns if str(c).endswith(" verdict")]
    shown = [c for c in frame.columns if c not in verdict_cols and c != "verdict"]
    row_verdict = "verdict" in frame.columns
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown + (["verdict"] if row_verdict else []))
    body = []
    for _, row in frame.iterrows():
        cells = []
        for c in shown:
            base = str(c).removesuffix(" Δ%").removesuffix(" (base)")
            verdict = row.get(f"{base} verdict") if f"{base} verdict" in frame.columns else None
            style = ""
            coloured = (*BETTER_VERDICTS, *WORSE_VERDICTS, "noisy")
            if isinstance(verdict, str) and verdict in coloured and not str(c).endswith("(base)"):
                style = f' style="color:{VERDICT_COLORS[verdict]};font-weight:600"'
            cells.append(f"<td{style}>{html.escape(_fmt(row[c]))}</td>")
        if row_verdict:
            v = str(row["verdict"])
            cells.append(f'<td style="color:{VERDICT_COLORS.get(v, "#000")}">{html.escape(v)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _comparison_html(comparison: pd.DataFrame) -> list[str]:
    """The side-by-side table, with a time note that every row shares said once above it."""
    if comparison.empty:
        return ["<p>No kernel/size in common.</p>"]
    side, note = notes_said_once(side_by_side(comparison))
    return ([f"<p>Time, every row: {html.escape(note)}.</p>"] if note else []) + [_table_html(side)]


VERDICT_RULE = (
    "Time verdicts: faster or slower only when the 95 % bootstrap interval of the median-time ratio excludes "
    "no change and the change exceeds the threshold; same when the interval lies within the threshold; noisy "
    "when it is too wide to say; no verdict (medians only) when a run saved no per-launch times; not comparable "
    "across GPU models."
)


def report_html(
    baseline: SavedRun | Mapping[str, Any],
    candidates: Sequence[SavedRun | Mapping[str, Any]],
    comparison: pd.DataFrame | None = None,
    *,
    title: str = "GEMM Lens review",
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    extra_figures: Sequence[go.Figure] = (),
    history: pd.DataFrame | None = None,
) -> str:
    """A self-contained HTML review: runs, side-by-side table, charts (plotly.js inlined once, so the file
    works offline), plus any extra figures (e.g. the app's roofline) and a history table."""
    baseline, candidates = as_run(baseline), [as_run(c) for c in candidates]
    if comparison is None:
        comparison = compare_runs(baseline, candidates, threshold_pct=threshold_pct)
    runs = runs_frame([baseline, *candidates])
    runs.insert(0, "role", ["baseline"] + ["candidate"] * len(candidates))
    runs["kernels"] = runs["kernels"].map(", ".join)
    runs["created"] = runs["created"].dt.strftime("%Y-%m-%d %H:%M UTC")
    figures = [*comparison_figures(baseline, candidates, comparison), *extra_figures]
    parts = []
    for i, fig in enumerate(figures):
        # The first figure carries plotly.js inline; the rest reuse it.
        parts.append(fig.to_html(full_html=False, include_plotlyjs=(i == 0), default_width="100%"))
    sections = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Generated {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC. {html.escape(VERDICT_RULE)} Practical "
        f"threshold {threshold_pct:g}%: <span style='color:{VERDICT_COLORS['faster']}'>faster</span>, "
        f"<span style='color:{VERDICT_COLORS['slower']}'>slower</span>, "
        f"<span style='color:{VERDICT_COLORS['noisy']}'>noisy</span>.</p>",
        *[
            f"<p><b>{html.escape(c.label)}</b>: {html.escape(comparability(baseline, c).label())}</p>"
            for c in candidates
        ],
        "<h2>Runs</h2>",
        _table_html(runs.drop(columns=["notes"])),
        "<h2>Comparison</h2>",
        *_comparison_html(comparison),
        "<h2>Charts</h2>",
        *[f'<div class="fig">{p}</div>' for p in parts],
    ]
    if history is not None and not history.empty:
        sections += ["<h2>History</h2>", _table_html(history)]
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;color:#1f2328}"
        "table{border-collapse:collapse;margin:1em 0;font-size:13px}"
        "th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:right}th{background:#f6f8fa}"
        ".fig{margin:1em 0}"
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{style}</style></head><body>{''.join(sections)}</body></html>\n"
    )
