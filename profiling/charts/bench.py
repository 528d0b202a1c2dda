"""Benchmark figures: TFLOP/s per size and % of cuBLAS, one colour per kernel."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import plotly.graph_objects as go

from kernels.catalog import reference_ids
from profiling.charts.style import kernel_color, plot_text


def _per_kernel(ok: pd.DataFrame) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """(escaped name, catalog colour, rows in FLOP order) of each kernel in `ok`, in first-seen order."""
    for kernel, part in ok.groupby("kernel", sort=False):
        yield plot_text(kernel), kernel_color(str(kernel)), part.sort_values("flops")


def tflops_figure(frame: pd.DataFrame, title: str = "TFLOP/s vs size") -> go.Figure:
    """One line per kernel: TFLOP/s against problem size (x = sizes in FLOP order), catalog colours."""
    ok = frame[(frame["status"] == "ok") & frame["tflops"].notna()]
    sizes = list(dict.fromkeys(ok.sort_values("flops")["size"]))
    fig = go.Figure()
    for name, color, part in _per_kernel(ok):
        fig.add_trace(
            go.Scatter(
                x=part["size"],
                y=part["tflops"],
                mode="lines+markers",
                name=name,
                line={"color": color},
                hovertemplate="%{x}<br>%{y:.2f} TFLOP/s<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_xaxes(title_text="size (MxNxK)", type="category", categoryorder="array", categoryarray=sizes)
    fig.update_yaxes(title_text="TFLOP/s")
    fig.update_layout(title_text=title, template="plotly_white", legend_title_text="kernel")
    return fig


def pct_cublas_figure(frame: pd.DataFrame, title: str = "% of cuBLAS (same operation, same run)") -> go.Figure:
    """Grouped bars: % of the library reference per kernel, one bar per size; references left out."""
    refs = set(reference_ids().values())
    ok = frame[(frame["status"] == "ok") & frame["pct_cublas"].notna() & ~frame["kernel"].isin(refs)]
    fig = go.Figure()
    for name, color, part in _per_kernel(ok):
        fig.add_trace(
            go.Bar(
                x=part["size"],
                y=part["pct_cublas"],
                name=name,
                marker_color=color,
                hovertemplate="%{x}<br>%{y:.1f}% of cuBLAS<extra>%{fullData.name}</extra>",
            )
        )
    fig.add_hline(y=100, line_dash="dot", line_color="#666666", annotation_text="cuBLAS")
    fig.update_xaxes(title_text="size (MxNxK)", type="category")
    fig.update_yaxes(title_text="% of cuBLAS")
    fig.update_layout(title_text=title, barmode="group", template="plotly_white", legend_title_text="kernel")
    return fig
