"""The shape-grid heatmap: a kernel's % of cuBLAS SGEMM at every M x N of the grid, one panel per K, the colour
scale centred on the 90 % target, shapes exempt from it in grey, shapes not counted because cuBLAS's times were
unsteady in amber with no % (data from profiling.analysis.shape_grid)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from profiling.analysis.shape_grid import EXEMPT_BELOW_TFLOPS, GRID_K, GRID_MN, TARGET_PCT, grid_panels, pct_text
from profiling.charts.style import plot_text
from profiling.gpu.timing import UNSTEADY_RATIO

SCALE_SPAN = 40.0
"""The colour scale runs TARGET_PCT +- this (50-130 %): the target sits white in the middle, a cell further off
than this takes the end colour (its label still says the value)."""
TARGET_SCALE = [
    [0.0, "rgb(103,0,31)"],
    [0.4999, "rgb(253,219,199)"],
    [0.5, "rgb(209,229,240)"],
    [1.0, "rgb(5,48,97)"],
]
"""Red under the target, blue at or over it (RdBu's ends), with a step at the target so a cell just under it never
reads as one just over it."""
EXEMPT_COLOR = "#c8c8c8"
NOT_MEASURED_COLOR = "#f2f2f2"
UNSTEADY_COLOR = "#f2c55c"
"""Neither red nor blue: a shape whose cuBLAS times were unsteady is neither under the target nor over it."""
UNSTEADY_LABEL = "rerun"
"""The label of such a cell, in place of a % measured against a cuBLAS median that is not cuBLAS's time: what to do,
in as few letters as a status ("unsteady" is clipped in a cell at 1024 px)."""
BACK_SCALE = [
    [0.0, NOT_MEASURED_COLOR],
    [0.25, NOT_MEASURED_COLOR],
    [0.25, UNSTEADY_COLOR],
    [0.75, UNSTEADY_COLOR],
    [0.75, EXEMPT_COLOR],
    [1.0, EXEMPT_COLOR],
]
"""The cells drawn behind the scale: not measured (0), unsteady cuBLAS (0.5), exempt (1)."""
FAILED_COLOR = TARGET_SCALE[0][1]
"""A cell that did not verify takes the low end of the scale."""
NOT_MEASURED = "–"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not math.isnan(float(value)) else None


def _cell_text(pct: float | None, status: str | None) -> str:
    if pct is not None:  # whole percent, with a decimal where rounding would lift it to the target
        return pct_text(pct) if pct < TARGET_PCT <= round(pct) else pct_text(pct, 0)
    return status if isinstance(status, str) and status != "ok" else NOT_MEASURED


def target_heatmap(cells: pd.DataFrame, kernel: str, device: str | None = None) -> go.Figure:
    """% of cuBLAS per M x N cell, a panel per K of the grid, each cell labelled with its value (grey: exempt,
    cuBLAS under 10 TFLOP/s; amber "rerun": not counted, cuBLAS's times unsteady; dark red with its status: did
    not verify; "–": not measured)."""
    pct = grid_panels(cells, "pct_cublas")
    exempt = grid_panels(cells, "exempt")
    unsteady = grid_panels(cells, "unsteady")
    spread = grid_panels(cells, "cublas_p90_over_p10")
    status = grid_panels(cells, "status")
    mine = grid_panels(cells, "tflops")
    ref = grid_panels(cells, "cublas_tflops")
    config = grid_panels(cells, "config")
    labels = [str(v) for v in GRID_MN]
    lo, hi = TARGET_PCT - SCALE_SPAN, TARGET_PCT + SCALE_SPAN
    fig = make_subplots(
        rows=1,
        cols=len(GRID_K),
        shared_yaxes=True,
        horizontal_spacing=0.03,
        subplot_titles=[f"K = {k}" for k in GRID_K],
    )
    for col, k in enumerate(GRID_K, start=1):
        z: list[list[float | None]] = []
        back: list[list[float | None]] = []  # exempt (1), unsteady cuBLAS (0.5) or not measured (0)
        text: list[list[str]] = []
        back_text: list[list[str]] = []
        hover: list[list[str]] = []
        for m in GRID_MN:
            z_row, back_row, text_row, back_text_row, hover_row = [], [], [], [], []
            for n in GRID_MN:
                value = _number(pct[k].at[m, n])
                state = status[k].at[m, n]
                is_exempt = exempt[k].at[m, n] is True
                is_unsteady = unsteady[k].at[m, n] is True
                measured = isinstance(state, str)
                failed = measured and state != "ok"
                colour = lo if failed and not is_exempt else value
                in_back = is_exempt or is_unsteady or not measured
                z_row.append(None if in_back else colour)
                back_row.append((1.0 if is_exempt else 0.5 if is_unsteady else 0.0) if in_back else None)
                label = UNSTEADY_LABEL if is_unsteady else _cell_text(value, state if measured else None)
                text_row.append("" if in_back else label)
                back_text_row.append(label if in_back else "")
                if measured:
                    ran = (str(config[k].at[m, n] or "") or "-").split(" ")[0]
                    theirs = _number(mine[k].at[m, n])
                    if is_unsteady:
                        ratio = _number(spread[k].at[m, n]) or 0.0
                        hover_row.append(
                            f"not counted: cuBLAS's own times were unsteady here (slowest tenth {ratio:.1f}x the "
                            f"fastest, over {UNSTEADY_RATIO:g}x), so its median is not its time; rerun this shape"
                        )
                    else:
                        hover_row.append(f"{pct_text(value)} % of cuBLAS" if value is not None else f"status: {state}")
                    hover_row[-1] += (
                        f"<br>{kernel}: {theirs:.2f} TFLOP/s" if theirs is not None else ""
                    ) + f"<br>cuBLAS: {_number(ref[k].at[m, n]) or 0:.2f} TFLOP/s<br>ran {plot_text(ran)}"
                    if is_exempt:
                        hover_row[-1] += f"<br>exempt: cuBLAS under {EXEMPT_BELOW_TFLOPS:.0f} TFLOP/s"
                else:
                    hover_row.append("not measured")
            z.append(z_row)
            back.append(back_row)
            text.append(text_row)
            back_text.append(back_text_row)
            hover.append(hover_row)
        fig.add_trace(
            go.Heatmap(
                z=back,
                x=labels,
                y=labels,
                colorscale=BACK_SCALE,
                zmin=0,
                zmax=1,
                showscale=False,
                text=back_text,
                texttemplate="%{text}",
                textfont={"size": 9, "color": "#333333"},
                customdata=hover,
                xgap=2,
                ygap=2,
                name="exempt, unsteady or not measured",
                hovertemplate=f"M=%{{y}} N=%{{x}} K={k}<br>%{{customdata}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=labels,
                y=labels,
                text=text,
                texttemplate="%{text}",
                textfont={"size": 9},
                customdata=hover,
                coloraxis="coloraxis",
                xgap=2,
                ygap=2,
                name=f"K = {k}",
                hovertemplate=f"M=%{{y}} N=%{{x}} K={k}<br>%{{customdata}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(
            title_text="N (columns of C)",
            type="category",
            categoryorder="array",
            tickangle=-45,
            categoryarray=labels,
            row=1,
            col=col,
        )
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=labels)
    fig.update_yaxes(title_text="M (rows of C)", row=1, col=1)
    keys = [(f"exempt: cuBLAS under {EXEMPT_BELOW_TFLOPS:.0f} TFLOP/s", EXEMPT_COLOR)]
    if cells["unsteady"].any():
        keys.append((f"{UNSTEADY_LABEL}: cuBLAS's times unsteady, not counted", UNSTEADY_COLOR))
    if (cells["status"] != "ok").any():
        keys.append(("did not verify", FAILED_COLOR))
    for name, colour in keys:
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=name,
                hoverinfo="skip",
                marker={"color": colour, "symbol": "square", "size": 12},
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=f"{NOT_MEASURED} not measured",
            marker={
                "color": NOT_MEASURED_COLOR,
                "symbol": "square",
                "size": 12,
                "line": {"color": "#999999", "width": 1},
            },
            hoverinfo="skip",
        )
    )
    where = f"<br><sup>{plot_text(device)}, each cell against cuBLAS timed in the same run</sup>" if device else ""
    fig.update_layout(
        title={"text": f"{plot_text(kernel)}: % of cuBLAS SGEMM per shape (target {TARGET_PCT:.0f} %){where}"},
        coloraxis={
            "colorscale": TARGET_SCALE,
            "cmin": lo,
            "cmax": hi,
            "colorbar": {
                "title": {"text": "% of cuBLAS SGEMM (same run)", "side": "right"},
                "thickness": 14,
                "tickvals": [lo, lo + SCALE_SPAN / 2, TARGET_PCT, hi - SCALE_SPAN / 2, hi],
                "ticktext": [
                    f"≤ {lo:.0f}",
                    f"{lo + SCALE_SPAN / 2:.0f}",
                    f"{TARGET_PCT:.0f} target",
                    f"{hi - SCALE_SPAN / 2:.0f}",
                    f"≥ {hi:.0f}",
                ],
            },
        },
        legend={"orientation": "h", "yanchor": "top", "y": -0.3, "x": 0},
        height=520,
        margin={"t": 90, "b": 140, "l": 70, "r": 20},
        plot_bgcolor="#ffffff",
    )
    return fig
