"""Shape-sweep charts: a heatmap of TFLOP/s or % of cuBLAS over M x N at one K with the whole-wave boundaries drawn
in, and the map of which kernel wins each shape (data from profiling.analysis.sweep)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from profiling.analysis.sweep import grid_table, winners
from profiling.charts.style import legend_rank, plot_text

VALUE_TITLES = {"pct_cublas": "% of cuBLAS (same run)", "tflops": "TFLOP/s"}
WAVE_LINE = "#111111"
WINNER_COLORS = qualitative.Safe


def _axis_labels(values: list[int]) -> list[str]:
    return [str(v) for v in values]


def _wave_segments(waves: pd.DataFrame) -> tuple[list[float | None], list[float | None]]:
    """Cell-border segments (in category index units) between neighbours whose launches need a different whole
    number of waves: where the block count crosses SMs x blocks per SM."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    whole = waves.map(lambda w: math.ceil(w - 1e-9) if isinstance(w, (int, float)) and w == w else None)
    rows, cols = whole.shape
    for i in range(rows):
        for j in range(cols):
            here = whole.iat[i, j]
            if here is None:
                continue
            if j + 1 < cols and whole.iat[i, j + 1] is not None and whole.iat[i, j + 1] != here:
                xs += [j + 0.5, j + 0.5, None]
                ys += [i - 0.5, i + 0.5, None]
            if i + 1 < rows and whole.iat[i + 1, j] is not None and whole.iat[i + 1, j] != here:
                xs += [j - 0.5, j + 0.5, None]
                ys += [i + 0.5, i + 0.5, None]
    return xs, ys


def sweep_heatmap(frame: pd.DataFrame, kernel: str, k: int, value: str = "pct_cublas") -> go.Figure:
    """M x N heatmap of one kernel at one K (each cell labelled with its value), black lines where the launch needs
    one more whole wave; hover gives blocks, blocks per SM and waves."""
    table = grid_table(frame, kernel, k, value)
    waves = grid_table(frame, kernel, k, "waves").reindex(index=table.index, columns=table.columns)
    blocks = grid_table(frame, kernel, k, "blocks").reindex(index=table.index, columns=table.columns)
    x, y = _axis_labels(list(table.columns)), _axis_labels(list(table.index))
    pct = value == "pct_cublas"
    text = table.map(lambda v: "" if pd.isna(v) else (f"{v:.0f}" if pct or v >= 10 else f"{v:.2g}"))
    custom = [[[blocks.iat[i, j], waves.iat[i, j]] for j in range(table.shape[1])] for i in range(table.shape[0])]
    fig = go.Figure(
        go.Heatmap(
            z=table.values,
            x=x,
            y=y,
            text=text.values,
            texttemplate="%{text}",
            textfont={"size": 10},
            colorscale="Viridis",
            zmin=0,
            zmax=max(100.0, float(table.max().max() or 0)) if pct else None,
            colorbar={"title": {"text": VALUE_TITLES[value], "side": "right"}},
            customdata=custom,
            xgap=1,
            ygap=1,
            hovertemplate=(
                f"M=%{{y}} N=%{{x}} K={k}<br>{VALUE_TITLES[value]}: %{{z:.3g}}"
                "<br>blocks %{customdata[0]:.0f}, waves %{customdata[1]:.2f}<extra></extra>"
            ),
            name=plot_text(kernel),
        )
    )
    xs, ys = _wave_segments(waves)
    # Layout shapes, not a trace: on category axes shapes take category indices, so the lines sit on cell borders.
    # Set in one go: add_shape re-validates every shape already there on each call (quadratic in the lines).
    fig.update_layout(
        shapes=[
            {
                "type": "line",
                "x0": x0,
                "x1": x1,
                "y0": y0,
                "y1": y1,
                "xref": "x",
                "yref": "y",
                "line": {"color": WAVE_LINE, "width": 3},
            }
            for x0, x1, y0, y1 in zip(xs[0::3], xs[1::3], ys[0::3], ys[1::3], strict=True)
        ]
    )
    if xs:
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="lines",
                line={"color": WAVE_LINE, "width": 3},
                hoverinfo="skip",
                name="one more whole wave (blocks pass a multiple of SMs x blocks/SM)",
                showlegend=True,
            )
        )
    fig.update_layout(
        title=f"{plot_text(kernel)}: {VALUE_TITLES[value]} over M x N at K = {k}",
        xaxis={"title": "N (columns of C)", "type": "category"},
        yaxis={"title": "M (rows of C)", "type": "category"},
        legend={"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0},
        height=520,
        margin={"t": 60, "b": 110},
    )
    # The wave lines live in index units on the category axes: pin the ranges so they line up with the cells.
    fig.update_xaxes(range=[-0.5, len(x) - 0.5])
    fig.update_yaxes(range=[-0.5, len(y) - 0.5])
    return fig


def winner_map(frame: pd.DataFrame, k: int, kernels: list[str] | None = None) -> go.Figure:
    """Which kernel is fastest at each M x N (at one K): cells in the winner's family colour, labelled with its name
    and its lead over the runner-up."""
    best = winners(frame, k, kernels)
    ms = sorted(best["m"].unique())
    ns = sorted(best["n"].unique())
    # Winners in catalog order, each a distinct colour (family shades of neighbouring steps are too alike here).
    names = sorted(dict.fromkeys(best["winner"]), key=legend_rank)
    index = {name: i for i, name in enumerate(names)}
    z = [[None] * len(ns) for _ in ms]
    text = [[""] * len(ns) for _ in ms]
    hover = [[""] * len(ns) for _ in ms]
    for r in best.itertuples():
        i, j = ms.index(r.m), ns.index(r.n)
        z[i][j] = index[r.winner] + 0.5  # the middle of its colour band
        lead = "" if r.lead_pct is None or pd.isna(r.lead_pct) else f"+{r.lead_pct:.0f}%"
        text[i][j] = f"{r.winner}<br>{lead}"
        hover[i][j] = f"{r.winner}: {r.tflops:.3g} TFLOP/s, {lead or 'alone'} ahead of the next"
    # A discrete colour scale: one band per winner, a distinct colour each.
    scale = []
    for i in range(len(names)):
        lo, hi = i / len(names), (i + 1) / len(names)
        scale += [[lo, WINNER_COLORS[i % len(WINNER_COLORS)]], [hi, WINNER_COLORS[i % len(WINNER_COLORS)]]]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=_axis_labels(ns),
            y=_axis_labels(ms),
            text=text,
            texttemplate="%{text}",
            textfont={"size": 9},
            customdata=hover,
            hovertemplate="M=%{y} N=%{x}<br>%{customdata}<extra></extra>",
            colorscale=scale or "Greys",
            zmin=0,
            zmax=max(len(names), 1),
            showscale=False,
            xgap=1,
            ygap=1,
        )
    )
    for name, i in index.items():  # a legend entry per winner (the heatmap itself has none)
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=plot_text(name),
                marker={"color": WINNER_COLORS[i % len(WINNER_COLORS)], "symbol": "square", "size": 12},
            )
        )
    fig.update_layout(
        title=f"Fastest kernel per shape at K = {k} (label: lead over the runner-up)",
        xaxis={"title": "N (columns of C)", "type": "category"},
        yaxis={"title": "M (rows of C)", "type": "category"},
        legend={"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0},
        height=520,
        margin={"t": 60, "b": 110},
    )
    return fig
