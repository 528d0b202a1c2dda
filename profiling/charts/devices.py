"""Results per GPU model: TFLOP/s per kernel and size, grouped bars with one colour per model (profiling.runs.by_device).

Models are not kernels: they get colours of their own, in name order, so the same pair of models reads the same way
on every visit."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from profiling.charts.style import plot_text, size_tick, white

MODEL_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")


BAR_PX = 11
"""Height of one bar: the chart grows with the kernels and sizes, so a tuning sweep's hundred pairs stay readable."""


def device_tflops_figure(models: pd.DataFrame, title: str = "TFLOP/s per GPU model") -> go.Figure:
    """Grouped horizontal bars of by_device.per_model(): one group per kernel and size (a two-level axis, kernels
    in name order from the top, the smallest problem first within a kernel), one bar per GPU model (the median over
    its GPUs; the hover says how many GPUs and whether they disagree). Horizontal, so long kernel names read
    without slanting and the chart grows downwards with the number of pairs."""
    timed = models[models["tflops"].notna()].sort_values(["kernel", "flop_volume", "size"], na_position="last")
    pairs = list(dict.fromkeys(zip(timed["kernel"], timed["size"], strict=True)))
    n_models = timed["model"].nunique()
    fig = go.Figure()
    for i, (model, part) in enumerate(timed.groupby("model", sort=True)):
        part = part.set_index(["kernel", "size"]).reindex(pairs)
        notes = [
            "" if pd.isna(n) else f"{int(n)} GPU{'s' if n != 1 else ''}" + (", GPUs disagree" if d else "")
            for n, d in zip(part["gpus"], part["disagree"], strict=True)
        ]
        fig.add_trace(
            go.Bar(
                y=[[plot_text(k) for k, _ in pairs], [size_tick(s) for _, s in pairs]],
                x=part["tflops"],
                orientation="h",
                name=plot_text(model),
                marker_color=MODEL_COLORS[i % len(MODEL_COLORS)],
                customdata=notes,
                hovertemplate="%{y}<br>%{x:.2f} TFLOP/s (%{customdata})<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_yaxes(title_text="kernel and size (MxNxK; n³ for a cube)", autorange="reversed")
    fig.update_xaxes(title_text="TFLOP/s (median over GPUs)", rangemode="tozero", side="top")
    fig.update_layout(title_text=title, barmode="group", legend_title_text="GPU model")
    # The x axis (ticks and title) and the legend sit on top: a tuning sweep's chart is taller than a screen.
    plot_px = BAR_PX * max(1, len(pairs) * n_models) + 40
    top_px, bottom_px = 150, 30
    legend = {"orientation": "h", "x": 1, "xanchor": "right", "y": 1 + 55 / plot_px, "yanchor": "bottom"}
    fig.update_layout(height=plot_px + top_px + bottom_px, margin={"t": top_px, "b": bottom_px}, legend=legend)
    return white(fig)
