"""Warp-stall figures for the Why page: one stacked horizontal bar per launch, one colour per stall reason.

Input is `profiling.analysis.stalls.stalls_frame` (columns label, reason, value, share, kind, meaning). Reasons
keep ncu's names; the hover and the legend's group title carry the plain meaning.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
import plotly.graph_objects as go

from profiling.analysis.stalls import REASONS
from profiling.charts.style import kernel_color, plot_text, white

Scale = Literal["cycles", "share"]

# Families share a hue: reds global memory, oranges shared memory, greens "the scheduler had work".
REASON_COLORS: dict[str, str] = {
    "long_scoreboard": "#c0392b",
    "lg_throttle": "#f1948a",
    "short_scoreboard": "#e67e22",
    "mio_throttle": "#f8c471",
    "barrier": "#8e44ad",
    "wait": "#8d6e63",
    "math_pipe_throttle": "#1e8449",
    "not_selected": "#82e0aa",
    "selected": "#2874a6",
    "dispatch_stall": "#17a2b8",
    "no_instruction": "#7f8c8d",
    "branch_resolving": "#bdc3c7",
    "tex_throttle": "#f5b7b1",
    "drain": "#a9cce3",
    "imc_miss": "#d7bde2",
    "membar": "#5d6d7e",
    "sleeping": "#e8daef",
    "gmma": "#b7950b",
    "warpgroup_arrive": "#f7dc6f",
    "misc": "#cacfd2",
}
_OTHER_COLOR = "#999999"
_REASON_ORDER = list(REASONS)
# Stall reasons a legend row holds. Two, not three: at 1024 px long launch labels (sgemm-auto @ 333x127x4096) narrow
# the plot, and a third column ran past the figure's right edge.
LEGEND_COLUMNS = 2


def reason_color(reason: str) -> str:
    """The colour of a stall reason, the same in every figure."""
    return REASON_COLORS.get(reason, _OTHER_COLOR)


def _tick(label: str, kernel_id: str | None) -> str:
    color = kernel_color(kernel_id) if kernel_id else "#333333"
    return f'<span style="color:{color}">■</span> {plot_text(label)}'


def stall_figure(
    frame: pd.DataFrame,
    scale: Scale = "cycles",
    title: str = "Warp stalls per launch",
    kernel_ids: dict[str, str] | None = None,
    min_share: float = 0.005,
) -> go.Figure:
    """Stacked bars, one per launch (top to bottom in the frame's order), one segment per stall reason.

    scale "cycles": warp cycles per issued instruction (ncu's Warp Cycles Per Issued Instruction split by
    reason; the total is printed at each bar's end); "share": % of each launch's total. Launches whose values
    are raw samples (no scale known) force "share". `kernel_ids` maps labels to catalog ids for the colour
    mark beside each label. Reasons under `min_share` in every launch are left out of the legend and the bars.
    """
    if frame.empty:
        return go.Figure(layout={"title": {"text": f"{plot_text(title)}: no stall data"}, "height": 160})
    if scale == "cycles" and (frame["kind"] != "cycles_per_issue").any():
        scale = "share"
    labels = list(dict.fromkeys(frame["label"]))
    shown = frame.groupby("reason")["share"].max()
    reasons = sorted(
        (r for r in shown.index if shown[r] >= min_share),
        key=lambda r: (_REASON_ORDER.index(r) if r in _REASON_ORDER else len(_REASON_ORDER), r),
    )
    factor = 1.0 if scale == "cycles" else 100.0
    numbers = frame.set_index("label")[["reason", "value", "share"]]
    by_reason = {r: part[["value", "share"]].reindex(labels).fillna(0.0) for r, part in numbers.groupby("reason")}
    # One constructor call with plain dicts: plotly validates the figure once (add_trace and update_* each
    # validate again, which made this figure cost a few hundred ms).
    traces: list[dict] = []
    for reason in reasons:
        part = by_reason[reason]
        traces.append(
            {
                "type": "bar",
                "y": labels,
                "x": list(part["value" if scale == "cycles" else "share"] * factor),
                "customdata": list(zip(part["share"] * 100, part["value"], strict=True)),
                "orientation": "h",
                "name": reason,
                "marker": {"color": reason_color(reason)},
                "legendgroup": reason,
                "hovertemplate": (
                    f"<b>%{{y}}</b><br><b>{reason}</b>: {plot_text(REASONS.get(reason, ''))}<br>"
                    "%{customdata[1]:.2f} cycles per issued instruction, %{customdata[0]:.1f}% of the total"
                    "<extra></extra>"
                ),
            }
        )
    # Each bar's total warp cycles per issued instruction at its end (at 100% in the share view).
    totals = frame.groupby("label", sort=False)["value"].sum().reindex(labels)
    known = bool((frame["kind"] == "cycles_per_issue").all())
    suffix = " cycles/inst" if scale == "share" else ""
    traces.append(
        {
            "type": "scatter",
            "y": labels,
            "x": list(totals) if scale == "cycles" else [100.0] * len(labels),
            "mode": "text",
            "text": [f" {t:,.1f}{suffix}" if known else "" for t in totals],
            "textposition": "middle right",
            "showlegend": False,
            "hoverinfo": "skip",
        }
    )
    unit = "warp cycles per issued instruction" if scale == "cycles" else "% of the launch's stall cycles"
    xaxis: dict = {"title": {"text": unit}, "showgrid": True, "zeroline": True}
    if scale == "cycles":
        xaxis["range"] = [0, float(totals.max()) * 1.12]
    else:
        xaxis.update(range=[0, 125 if known else 100], tickvals=[0, 20, 40, 60, 80, 100], ticksuffix="%")
    ids = kernel_ids or {}
    # Fixed pixels: bars of 26 px, the axis title, then the legend (LEGEND_COLUMNS reasons a row).
    plot_px = 30 + 26 * len(labels)
    bottom = 80 + 24 * -(-len(reasons) // LEGEND_COLUMNS)
    layout = {
        "title": {"text": plot_text(title)},
        "barmode": "stack",
        "height": plot_px + 50 + bottom,
        "margin": {"l": 10, "r": 20, "t": 50, "b": bottom},
        "xaxis": xaxis,
        "yaxis": {
            "autorange": "reversed",
            "tickmode": "array",
            "tickvals": labels,
            "ticktext": [_tick(label, ids.get(label)) for label in labels],
        },
        "legend": {
            "orientation": "h",
            "yanchor": "top",
            "y": -62 / plot_px,
            "x": 0,
            # 90 % of the plot's width shared by a row's entries: they fit under the bars at any width.
            "entrywidth": 0.9 / LEGEND_COLUMNS,
            "entrywidthmode": "fraction",
            # In pixels: plotly caps a horizontal legend at half the figure's height by default and scrolls the
            # rest, which cut off a figure of two launches (the legend has the whole bottom margin to itself).
            "maxheight": bottom,
            "tracegroupgap": 0,
            "title": {"text": "stall reason (hover a bar for its meaning)", "side": "top left"},
        },
        "bargap": 0.25,
    }
    return white(go.Figure(data=traces, layout=layout))
