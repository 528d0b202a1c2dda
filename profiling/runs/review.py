"""Review of saved runs: filtering, baseline-vs-candidate comparison, kernel history and export.

Pure functions over run records (profiling.runs.store's `gemmlens.run.v1` dicts) and pandas DataFrames; the
Streamlit Review page and `python -m profiling compare` are thin layers over them.

Verdicts per metric and kernel/size: "improvement", "regression" or "same" (the change is within the
noise threshold); "changed" for metrics with no better direction (registers, shared memory) that moved
past the threshold; "n/a" where either side has no value.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from profiling.errors import InvalidInput
from profiling.runs.records import EXPORT_SCHEMA, RESULT_FIELDS, normalize_run, size_text
from profiling.runs.values import finite_number


@dataclass(frozen=True)
class MetricSpec:
    """A compared metric: result field, display label, and which way is better (None: neither)."""

    key: str
    label: str
    better: str | None  # "lower" | "higher" | None


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("time_median_ms", "Time (ms)", "lower"),
    MetricSpec("tflops", "TFLOP/s", "higher"),
    MetricSpec("pct_cublas", "% cuBLAS", "higher"),
    MetricSpec("registers", "Registers", None),
    MetricSpec("shared_bytes", "Shared mem (B)", None),
    MetricSpec("occupancy_pct", "Occupancy (%)", "higher"),
    MetricSpec("bank_conflicts", "Bank conflicts", "lower"),
    MetricSpec("dram_bytes", "DRAM bytes", "lower"),
)
METRIC_BY_KEY = {m.key: m for m in METRICS}
DEFAULT_THRESHOLD_PCT = 2.0

# Colours of verdicts as in Nsight Compute's baseline view: green better, red worse.
VERDICT_COLORS = {
    "improvement": "#1a7f37",
    "regression": "#cf222e",
    "same": "#57606a",
    "changed": "#9a6700",
    "n/a": "#8c959f",
}

RUN_COLUMNS = [
    "id", "label", "author", "notes", "created", "kind", "device_name", "device_cc",
    "catalog_commit", "n_results", "kernels",
]  # fmt: skip
COMPARISON_COLUMNS = [
    "candidate_id", "candidate_label", "kernel", "size", "metric", "metric_label", "better",
    "baseline", "candidate", "delta", "delta_pct", "verdict",
]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Listing and filtering
# ---------------------------------------------------------------------------------------------


def runs_frame(summaries: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A DataFrame of run summaries (RunStore.list_runs() or full records), `created` as UTC timestamps."""
    rows = []
    for s in summaries:
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


def results_frame(runs: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per result of the given run records, with run_id, run_label, created, device_name, size."""
    rows = []
    for run in runs:
        device = run.get("device") or {}
        for r in run.get("results", ()):
            rows.append(
                {
                    "run_id": run.get("id"),
                    "run_label": run.get("label", ""),
                    "created": run.get("created_utc"),
                    "device_name": run.get("device_name") or device.get("name"),
                    "size": size_text(r),
                    **{f: r.get(f) for f in RESULT_FIELDS},
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
# Comparison
# ---------------------------------------------------------------------------------------------


def classify(better: str | None, baseline: Any, candidate: Any, threshold_pct: float) -> str:
    """The verdict of one metric: see the module docstring."""
    b, c = finite_number(baseline), finite_number(candidate)
    if b is None or c is None:
        return "n/a"
    pct = _delta_pct(b, c)
    if abs(pct) <= threshold_pct:
        return "same"
    if better is None:
        return "changed"
    return "improvement" if (pct < 0) == (better == "lower") else "regression"


def _delta_pct(baseline: float, candidate: float) -> float:
    if baseline == 0:
        return 0.0 if candidate == 0 else math.copysign(math.inf, candidate)
    return (candidate - baseline) / abs(baseline) * 100.0


def _keyed(run: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    out: dict[tuple[str, str], Mapping[str, Any]] = {}
    for r in run.get("results", ()):
        out.setdefault((r["kernel"], size_text(r)), r)  # a repeated kernel/size: the first one counts
    return out


def compare_runs(
    baseline: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]],
    *,
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    thresholds: Mapping[str, float] | None = None,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Long comparison table (COMPARISON_COLUMNS): one row per candidate, kernel/size present in both
    runs, and metric; delta = candidate - baseline, delta_pct relative to the baseline. `thresholds`
    overrides the noise threshold (percent) per metric key. A "status" row per pair says whether the
    result went from ok to wrong/failed (regression) or back (improvement)."""
    if not math.isfinite(threshold_pct) or threshold_pct < 0:
        raise InvalidInput(f"the noise threshold must be a percentage >= 0, not {threshold_pct}")
    specs = [METRIC_BY_KEY[k] for k in metrics] if metrics else list(METRICS)
    base = _keyed(baseline)
    rows = []
    for cand in candidates:
        cand_rows = _keyed(cand)
        for key in [k for k in base if k in cand_rows]:
            b, c = base[key], cand_rows[key]
            b_status, c_status = b.get("status") or "ok", c.get("status") or "ok"
            if b_status == c_status:
                verdict = "same"
            elif b_status == "ok":
                verdict = "regression"
            elif c_status == "ok":
                verdict = "improvement"
            else:
                verdict = "changed"
            common = {"candidate_id": cand.get("id"), "candidate_label": cand.get("label", ""),
                      "kernel": key[0], "size": key[1]}  # fmt: skip
            rows.append(
                {**common, "metric": "status", "metric_label": "Status", "better": None,
                 "baseline": b_status, "candidate": c_status, "delta": None, "delta_pct": None,
                 "verdict": verdict}
            )  # fmt: skip
            for spec in specs:
                bv, cv = finite_number(b.get(spec.key)), finite_number(c.get(spec.key))
                limit = (thresholds or {}).get(spec.key, threshold_pct)
                rows.append(
                    {
                        **common, "metric": spec.key, "metric_label": spec.label, "better": spec.better,
                        "baseline": bv, "candidate": cv,
                        "delta": None if bv is None or cv is None else cv - bv,
                        "delta_pct": None if bv is None or cv is None else _delta_pct(bv, cv),
                        "verdict": classify(spec.better, bv, cv, limit),
                    }
                )  # fmt: skip
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def unmatched(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> pd.DataFrame:
    """Kernel/size pairs present in only one of the two runs (columns kernel, size, only_in)."""
    base, cand = _keyed(baseline), _keyed(candidate)
    rows = [{"kernel": k, "size": s, "only_in": "baseline"} for (k, s) in base if (k, s) not in cand]
    rows += [{"kernel": k, "size": s, "only_in": "candidate"} for (k, s) in cand if (k, s) not in base]
    return pd.DataFrame(rows, columns=["kernel", "size", "only_in"])


def side_by_side(comparison: pd.DataFrame) -> pd.DataFrame:
    """Wide table: one row per candidate/kernel/size, per metric columns "<label>", "<label> (base)" and
    "<label> Δ%", plus "<label> verdict" columns for colouring."""
    keys = ["candidate_label", "kernel", "size"]
    if comparison.empty:
        return pd.DataFrame(columns=keys)
    out = comparison[keys].drop_duplicates().reset_index(drop=True)
    for metric, part in comparison.groupby("metric", sort=False):
        label = part["metric_label"].iloc[0]
        part = part.rename(
            columns={"baseline": f"{label} (base)", "candidate": label, "delta_pct": f"{label} Δ%",
                     "verdict": f"{label} verdict"}
        )  # fmt: skip
        cols = [f"{label} (base)", label] + ([f"{label} Δ%"] if metric != "status" else []) + [f"{label} verdict"]
        out = out.merge(part[keys + cols], on=keys, how="left")
    return out


def slower_than(comparison: pd.DataFrame, pct: float) -> pd.DataFrame:
    """Kernel/size pairs whose median time grew by more than `pct` percent, or that stopped being ok."""
    time_rows = comparison[comparison["metric"] == "time_median_ms"]
    slower = time_rows[time_rows["delta_pct"].astype(float) > pct]
    broken = comparison[(comparison["metric"] == "status") & (comparison["verdict"] == "regression")]
    return pd.concat([slower, broken], ignore_index=True)


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


def history_figure(history: pd.DataFrame, kernel: str, metric: str = "time_median_ms") -> go.Figure:
    """Line chart of kernel_history(): one trace per device and size."""
    label = METRIC_BY_KEY[metric].label if metric in METRIC_BY_KEY else metric
    fig = go.Figure()
    for (device, size), part in history.groupby(["device_name", "size"], dropna=False, sort=True):
        fig.add_trace(
            go.Scatter(
                x=part["created"], y=part["value"], mode="lines+markers",
                name=f"{device or 'unknown device'} {size}".strip(), text=part["run_label"],
                hovertemplate="%{text}<br>%{x}<br>%{y:.4g}<extra></extra>",
            )
        )  # fmt: skip
    fig.update_layout(title=f"{kernel}: {label} across runs", xaxis_title="run date", yaxis_title=label)
    return fig


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def comparison_figures(
    baseline: Mapping[str, Any], candidates: Sequence[Mapping[str, Any]], comparison: pd.DataFrame
) -> list[go.Figure]:
    """Median time per kernel/size for each run (grouped bars), and the time change per candidate
    coloured by verdict."""
    figs = []
    bars = go.Figure()
    for run in (baseline, *candidates):
        rows = [r for r in run.get("results", ()) if finite_number(r.get("time_median_ms")) is not None]
        bars.add_trace(
            go.Bar(
                x=[f"{r['kernel']} {size_text(r)}".strip() for r in rows],
                y=[r["time_median_ms"] for r in rows],
                name=_run_name(run),
            )
        )
    bars.update_layout(title="Median time per kernel (lower is better)", barmode="group", yaxis_title="ms")
    figs.append(bars)
    times = comparison[comparison["metric"] == "time_median_ms"].dropna(subset=["delta_pct"])
    if not times.empty:
        delta = go.Figure()
        for label, part in times.groupby("candidate_label", sort=False):
            delta.add_trace(
                go.Bar(
                    x=(part["kernel"] + " " + part["size"]).str.strip(),
                    y=part["delta_pct"].clip(-1000, 1000),
                    name=str(label),
                    marker_color=[VERDICT_COLORS[v] for v in part["verdict"]],
                    text=part["verdict"],
                )
            )
        delta.update_layout(title="Time change vs baseline (%; negative is faster)", yaxis_title="Δ %")
        figs.append(delta)
    return figs


def _run_name(run: Mapping[str, Any]) -> str:
    return f"#{run['id']} {run.get('label', '')}" if run.get("id") is not None else str(run.get("label", ""))


# ---------------------------------------------------------------------------------------------
# Export and import
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
            if isinstance(verdict, str) and verdict in ("improvement", "regression") and not str(c).endswith("(base)"):
                style = f' style="color:{VERDICT_COLORS[verdict]};font-weight:600"'
            cells.append(f"<td{style}>{html.escape(_fmt(row[c]))}</td>")
        if row_verdict:
            v = str(row["verdict"])
            cells.append(f'<td style="color:{VERDICT_COLORS.get(v, "#000")}">{html.escape(v)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def report_html(
    baseline: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]],
    comparison: pd.DataFrame | None = None,
    *,
    title: str = "GEMM Lens review",
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    extra_figures: Sequence[go.Figure] = (),
    history: pd.DataFrame | None = None,
) -> str:
    """A self-contained HTML review: runs, side-by-side table, charts (plotly.js inlined once, so the file
    works offline), plus any extra figures (e.g. the app's roofline) and a history table."""
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
        f"<p>Generated {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC. Verdicts use a noise threshold of "
        f"{threshold_pct:g}%: <span style='color:{VERDICT_COLORS['improvement']}'>improvement</span>, "
        f"<span style='color:{VERDICT_COLORS['regression']}'>regression</span>.</p>",
        "<h2>Runs</h2>",
        _table_html(runs.drop(columns=["notes"])),
        "<h2>Comparison</h2>",
        _table_html(side_by_side(comparison)) if not comparison.empty else "<p>No kernel/size in common.</p>",
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


def to_csv(frame: pd.DataFrame) -> str:
    """CSV text of any review table (lists are joined with ';')."""
    out = frame.copy()
    for col in out.columns:
        if out[col].map(lambda v: isinstance(v, list)).any():
            out[col] = out[col].map(lambda v: ";".join(map(str, v)) if isinstance(v, list) else v)
    buffer = io.StringIO()
    out.to_csv(buffer, index=False)
    return buffer.getvalue()


def to_json(frame: pd.DataFrame) -> str:
    """JSON records of any review table (timestamps in ISO 8601)."""
    return frame.to_json(orient="records", date_format="iso", force_ascii=False, indent=1)


def export_runs_json(runs: Sequence[Mapping[str, Any]]) -> str:
    """Full run records as one JSON document (`gemmlens.runs.v1`) that import_runs_json reads back."""
    clean = []
    for run in runs:
        rec = normalize_run(run)
        for key in ("id", "saved_utc"):  # kept for reference; a store assigns its own on import
            if run.get(key) is not None:
                rec[f"source_{key}"] = run[key]
        clean.append(rec)
    doc = {"schema": EXPORT_SCHEMA, "exported_utc": f"{dt.datetime.now(dt.UTC):%Y-%m-%dT%H:%M:%SZ}", "runs": clean}
    return json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False)


def import_runs_json(text: str | bytes) -> list[dict[str, Any]]:
    """Run records from export_runs_json() output (or a single run record); save with RunStore.import_runs."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"not a JSON export of runs ({exc})") from exc
    if isinstance(doc, Mapping) and doc.get("schema") == EXPORT_SCHEMA:
        runs = doc.get("runs")
        if not isinstance(runs, list):
            raise InvalidInput("the runs export has no `runs` list")
    elif isinstance(doc, Mapping) and "results" in doc and doc.get("schema", "gemmlens.run.v1") == "gemmlens.run.v1":
        runs = [doc]
    else:
        found = doc.get("schema") if isinstance(doc, Mapping) else type(doc).__name__
        raise InvalidInput(f"not a GEMM Lens runs export: schema {found!r}, expected {EXPORT_SCHEMA!r}")
    out = []
    for i, run in enumerate(runs):
        try:
            out.append(normalize_run(run))
        except InvalidInput as exc:
            raise InvalidInput(f"run {i + 1} of the export: {exc}") from exc
    return out
