"""Results per GPU model: TFLOP/s per kernel and size, grouped bars with one colour per model (profiling.runs.by_device).

Models are not kernels: they get colours of their own, in name order, so the same pair of models reads the same way
on every visit."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from profiling.charts.style import legend_below, plot_text, size_tick

MODEL_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")


def device_tflops_figure(models: pd.DataFrame, title: str = "TFLOP/s per GPU model") -> go.Figure:
    """Grouped bars of by_device.per_model(): x = kernel and size (two-level axis, smallest problem first within a
    kernel), one bar per GPU model (the median over its GPUs; the hover says how many GPUs and whether they
    disagree)."""
    timed = models[models["tflops"].notna()].sort_values(["kernel", "flop_volume", "size"], na_position="last")
    pairs = list(dict.fromkeys(zip(timed["kernel"], timed["size"], strict=True)))
    fig = go.Figure()
    for i, (model, part) in enumerate(timed.groupby("model", sort=True)):
        part = part.set_index(["kernel", "size"]).reindex(pairs)
        notes = [
            "" if pd.isna(n) else f"{int(n)} GPU{'s' if n != 1 else ''}" + (", GPUs disagree" if d else "")
            for n, d in zip(part["gpus"], part["disagree"], strict=True)
        ]
        fig.add_trace(
            go.Bar(
                x=[[plot_text(k) for k, _ in pairs], [size_tick(s) for _, s in pairs]],
                y=part["tflops"],
                name=plot_text(model),
                marker_color=MODEL_COLORS[i % len(MODEL_COLORS)],
                customdata=notes,
                hovertemplate="%{x}<br>%{y:.2f} TFLOP/s (%{customdata})<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_xaxes(title_text="kernel and size (MxNxK; n³ for a cube)", tickangle=-45)
    fig.update_yaxes(title_text="TFLOP/s (median over the model's GPUs)", rangemode="tozero")
    fig.update_layout(title_text=title, barmode="group", template="plotly_white", legend_title_text="GPU model")
    return legend_below(fig, axis_px=200)
