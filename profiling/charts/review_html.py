"""The self-contained HTML review of saved runs: runs, the side-by-side comparison, the Review page's charts
(plotly.js inlined once, so the file works offline) and a history table."""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from profiling.charts.review import comparison_figures
from profiling.runs.comparison import (
    BETTER_VERDICTS,
    DEFAULT_THRESHOLD_PCT,
    VERDICT_COLORS,
    WORSE_VERDICTS,
    compare_runs,
    notes_said_once,
    side_by_side,
)
from profiling.runs.records import SavedRun, as_run
from profiling.runs.review import runs_frame
from profiling.runs.verdict import comparability


def _fmt(value: Any, column: str = "") -> str:
    """A cell's text: a change in % to 0.1 with its sign ("-0.4 %" reads better than -0.4472), other numbers to 4
    significant digits, a missing value empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, (int, float)) and str(column).endswith("Δ%"):
        return f"{value:+.1f}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _without_empty_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The table less columns that no row fills (a run list without commits need not show the column)."""
    empty = [c for c in frame.columns if all(_fmt(v) == "" for v in frame[c])]
    return frame.drop(columns=empty)


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
            cells.append(f"<td{style}>{html.escape(_fmt(row[c], str(c)))}</td>")
        if row_verdict:
            v = str(row["verdict"])
            cells.append(f'<td style="color:{VERDICT_COLORS.get(v, "#000")}">{html.escape(v)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    # a wide table scrolls inside its box instead of pushing the page wider than the window
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


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
    comments: Sequence[Mapping[str, Any]] = (),
) -> str:
    """A self-contained HTML review: runs, side-by-side table, charts (plotly.js inlined once, so the file
    works offline), plus any extra figures (e.g. the app's roofline), a history table, and the runs' comments
    (RunStore.comments: each with its run, launch, author and time)."""
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
        _table_html(_without_empty_columns(runs.drop(columns=["notes"]))),
        "<h2>Comparison</h2>",
        *_comparison_html(comparison),
        "<h2>Charts</h2>",
        *[f'<div class="fig">{p}</div>' for p in parts],
    ]
    if history is not None and not history.empty:
        sections += ["<h2>History</h2>", _table_html(history)]
    if comments:
        frame = pd.DataFrame(
            {
                "run": [f"#{c['run_id']}" for c in comments],
                "launch": [c.get("launch") or "(the run)" for c in comments],
                "author": [c["author"] for c in comments],
                "at (UTC)": [c["at"] for c in comments],
                "comment": [c["text"] for c in comments],
            }
        )
        sections += ["<h2>Comments</h2>", _table_html(frame)]
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;color:#1f2328}"
        "table{border-collapse:collapse;margin:1em 0;font-size:13px}"
        "th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:right}th{background:#f6f8fa}"
        ".wide{max-width:100%;overflow-x:auto}.fig{margin:1em 0;max-width:100%;overflow-x:auto}"
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{style}</style></head><body>{''.join(sections)}</body></html>\n"
    )
