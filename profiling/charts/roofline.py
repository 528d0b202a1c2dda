"""Roofline figures of algorithmic (benchmark) and hierarchical (ncu L1/L2/DRAM) points (profiling.analysis.roofline
builds the points). No I/O."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kernels.registry import operation_of
from profiling.analysis.roofline import (
    launch_points,
    operation_point,
    roofline_points,
)
from profiling.charts.style import (
    family_legend,
    kernel_colors,
    kernel_group,
    legend_rank,
    legends_below,
    log_ticks,
    plot_text,
    si,
    white,
)
from profiling.device_model import Ceiling, Ceilings
from profiling.nsight import report as ncu_report
from profiling.shape import Shape

LEVEL_SYMBOLS = {"DRAM": "circle", "L2": "square", "L1": "diamond", "algorithmic": "star"}
# Ceilings in colours no kernel family uses (families: blues, oranges, purples, greens, greys).
CEILING_COLORS = {"compute": "#333333", "tensor": "#333333", "DRAM": "#8c564b", "L2": "#bcbd22", "L1": "#e377c2"}


SOURCE_TEXT = {"live device": "device properties"}
"""How a ceiling's source reads on a chart: "live device" ceilings come from the device's properties (max clocks), the
live GPU's or those recorded with a results file, so the chart names the properties rather than claim a live GPU."""

WEBGL_POINTS = 5000
"""Above this many points the kernel traces draw with WebGL (go.Scattergl), and the chart says so."""

OUTLIER_DECADES = 2
"""Points more than this many decades right of the highest ridge point are drawn at the axis edge with a note:
there every point is compute-bound, so its exact intensity does not move it, and one L1 point at 1e7 FLOP/B would
otherwise squeeze every other point into the left third of the axis."""


def ceiling_source(ceiling: Ceiling) -> str:
    """The source of a ceiling as a chart names it."""
    return SOURCE_TEXT.get(ceiling.source, ceiling.source)


def _ceiling_label(kind: str, ceiling: Ceiling, unit: str) -> str:
    return f"{kind} {si(ceiling.value, unit)} ({ceiling_source(ceiling)})"


def with_fallback(preferred: Ceilings, fallback: Ceilings) -> Ceilings:
    """`preferred` ceilings (measured ones, say), each missing one taken from `fallback` (the theoretical ones): the
    measured set has no tensor peak, and a tensor-core point must still have its roof."""
    merged = {
        name: getattr(preferred, name) or getattr(fallback, name)
        for name in ("fp32_flops", "tensor_fp16_flops", "dram_bytes_per_s", "l2_bytes_per_s", "l1_bytes_per_s")
    }
    return replace(preferred, device_name=preferred.device_name or fallback.device_name, **merged)


def _x_range(intensities: list[float], ridges: list[float]) -> tuple[float, float]:
    """Decade-aligned x range over the data and the ridge points, its right end at most OUTLIER_DECADES past the
    highest ridge point."""
    every = intensities + ridges
    if not every:
        return 0.01, 1000.0
    x_lo = 10 ** math.floor(math.log10(min(every) / 4))
    x_hi = 10 ** math.ceil(math.log10(max(every) * 4))
    if ridges:
        x_hi = min(x_hi, 10 ** math.ceil(math.log10(max(ridges)) + OUTLIER_DECADES))
    return x_lo, x_hi


def roofline_figure(
    points: pd.DataFrame, ceilings: Ceilings, title: str | None = None, show_tensor: bool = False
) -> go.Figure:
    """Log-log roofline: compute ceilings, one diagonal per known bandwidth, one trace per kernel and level.

    Points need columns kernel, label, level ("L1", "L2", "DRAM", "algorithmic"), flops, bytes, seconds.
    Colour = kernel (its family's shade; legend group, so clicking a kernel hides all its points); symbol = level.
    `show_tensor` adds the FP16 tensor ceiling; points with compute == "tensor" are measured against it.
    The legends sit under the plot: level key and ceilings, then a row per kernel family; ticks carry units.
    Points far right of every ridge are drawn at the axis edge and named in a note; above WEBGL_POINTS points
    the kernel traces use WebGL.
    """
    df = roofline_points(points, ceilings)
    compute_ceilings = [("FP32 peak", ceilings.fp32_flops, "compute")]
    if show_tensor:
        compute_ceilings.append(("FP16 tensor peak", ceilings.tensor_fp16_flops, "tensor"))
    compute_ceilings = [(n, c, k) for n, c, k in compute_ceilings if c is not None]
    bandwidths = [
        (level, ceilings.bandwidth(level)) for level in ("DRAM", "L2", "L1") if ceilings.bandwidth(level) is not None
    ]
    top = max((c.value for _, c, _ in compute_ceilings), default=None)

    ridges = [top / bw.value for _, bw in bandwidths] if top else []
    x_lo, x_hi = _x_range(list(df["intensity"]), ridges)
    shown_x = df["intensity"].clip(upper=x_hi)
    outliers = df[df["intensity"] > x_hi]

    fig = go.Figure()
    for rank, (name, ceiling, kind) in enumerate(compute_ceilings):
        fig.add_trace(
            go.Scatter(
                x=[x_lo, x_hi],
                y=[ceiling.value, ceiling.value],
                mode="lines",
                name=_ceiling_label(name, ceiling, "FLOP/s"),
                line={"color": CEILING_COLORS[kind], "width": 2, "dash": "solid" if kind == "compute" else "dashdot"},
                legendgroup="ceilings",
                legendgrouptitle_text="Ceilings",
                legendrank=10 + rank,
                hovertemplate=f"{name}: {si(ceiling.value, 'FLOP/s')}<br>source: {plot_text(ceiling_source(ceiling))}"
                + (f"<br>{plot_text(ceiling.note)}" if ceiling.note else "")
                + "<extra></extra>",
            )
        )
    for rank, (level, bandwidth) in enumerate(bandwidths):
        # The diagonal stops where it meets the highest compute ceiling (the ridge point).
        x_end = top / bandwidth.value if top else x_hi
        xs = np.array([x_lo, min(x_end, x_hi)])
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=bandwidth.value * xs,
                mode="lines",
                name=_ceiling_label(f"{level} bandwidth", bandwidth, "B/s"),
                line={"color": CEILING_COLORS[level], "width": 2, "dash": "dash"},
                legendgroup="ceilings",
                legendrank=20 + rank,
                hovertemplate=f"{level}: {si(bandwidth.value, 'B/s')}<br>source: "
                f"{plot_text(ceiling_source(bandwidth))}"
                + (f"<br>{plot_text(bandwidth.note)}" if bandwidth.note else "")
                + "<extra></extra>",
            )
        )

    scatter = go.Scattergl if len(df) > WEBGL_POINTS else go.Scatter
    colors = kernel_colors(str(k) for k in df["kernel"].unique())
    for kernel, group in df.groupby("kernel", sort=False):
        color = colors[str(kernel)]
        family = kernel_group(str(kernel))
        first = True
        for level, sub in group.groupby("level", sort=False):
            custom = np.column_stack(
                [
                    sub["kernel"],
                    sub["label"],
                    sub["level"],
                    sub["intensity"],
                    [si(a, "FLOP/s") for a in sub["achieved"]],
                    sub["pct_of_roof"],
                    sub["binding_ceiling"],
                ]
            )
            fig.add_trace(
                scatter(
                    x=shown_x[sub.index],
                    y=sub["achieved"],
                    mode="markers",
                    name=str(kernel),
                    legend=family_legend(family),
                    legendgroup=f"kernel:{kernel}",
                    legendrank=legend_rank(str(kernel)),
                    showlegend=first,
                    marker={
                        "color": color,
                        "symbol": LEVEL_SYMBOLS[level],
                        "size": 11,
                        "line": {"color": "white", "width": 1},
                    },
                    customdata=custom,
                    hovertemplate=(
                        "<b>%{customdata[0]}</b> %{customdata[1]}<br>level: %{customdata[2]}"
                        "<br>arithmetic intensity: %{customdata[3]:.3g} FLOP/B"
                        "<br>achieved: %{customdata[4]}"
                        "<br>%{customdata[5]:.1f}% of the %{customdata[6]} ceiling<extra></extra>"
                    ),
                )
            )
            first = False
    # Symbol key: grey markers with no data so the level symbols are explained once, not per kernel.
    for rank, level in enumerate(lv for lv in LEVEL_SYMBOLS if lv in set(df["level"])):
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=level if level != "algorithmic" else "algorithmic (A+B+C once)",
                legendgroup="levels",
                legendgrouptitle_text="Marker = memory level",
                legendrank=1 + rank,
                marker={"color": "#999999", "symbol": LEVEL_SYMBOLS[level], "size": 10},
                hoverinfo="skip",
            )
        )
    notes = []
    if len(outliers):
        listed = ", ".join(
            f"{k} {lv} {v:.3g}" for k, lv, v in outliers[["kernel", "level", "intensity"]].head(3).values
        )
        more = f" and {len(outliers) - 3} more" if len(outliers) > 3 else ""
        notes.append(f"▶ at the right edge: {listed}{more} FLOP/B (compute-bound; axis cut at {x_hi:g})")
    if scatter is go.Scattergl:
        notes.append(f"{len(df):,} points drawn with WebGL")
    for i, note in enumerate(notes):
        fig.add_annotation(
            text=plot_text(note) if "▶" not in note else note,
            xref="paper",
            yref="paper",
            x=0.01,
            y=0.99 - 0.07 * i,
            xanchor="left",
            yanchor="top",
            showarrow=False,
            font={"size": 11, "color": "#555555"},
            bgcolor="rgba(255,255,255,0.8)",
        )
    y_values = list(df["achieved"]) + [c.value for _, c, _ in compute_ceilings]
    # Not decade-aligned: a decade of empty space above the highest roof would squeeze the data.
    y_lo = min(y_values) / 3 if y_values else 1e9
    y_hi = max(y_values) * 2.5 if y_values else 1e15
    x_ticks, x_text = log_ticks(x_lo, x_hi)
    y_ticks, y_text = log_ticks(y_lo, y_hi, "FLOP/s")
    fig.update_xaxes(
        type="log",
        title_text="Arithmetic intensity (FLOP/byte)",
        range=[math.log10(x_lo), math.log10(x_hi)],
        tickvals=x_ticks,
        ticktext=x_text,
    )
    fig.update_yaxes(
        type="log",
        title_text="Performance",
        range=[math.log10(y_lo), math.log10(y_hi)],
        tickvals=y_ticks,
        ticktext=y_text,
    )
    fig.update_layout(
        title_text=title or f"Roofline{' — ' + ceilings.device_name if ceilings.device_name else ''}",
        legend={"groupclick": "togglegroup"},
    )
    return legends_below(white(fig), base_height=560)


def bench_roofline_points(frame: pd.DataFrame, size: str | None = None) -> pd.DataFrame:
    """Algorithmic roofline points (2MNK over the minimum A+B+C traffic) for ok results, one per kernel.

    `size` picks one problem size ("4096x4096x4096"); None keeps every size. Tensor-core AddMM points
    carry compute="tensor" so they are measured against the FP16 tensor ceiling.
    """
    ok = frame[(frame["status"] == "ok") & frame["median_ms"].notna()]
    if size is not None:
        ok = ok[ok["size"] == size]
    rows = []
    for r in ok.itertuples():
        shape = Shape(int(r.m), int(r.n), int(r.k))
        op = operation_of(str(r.kernel), r.operation)
        rows.append(operation_point(plot_text(r.kernel), shape, r.median_ms / 1e3, op))
    return pd.DataFrame(rows, columns=["kernel", "label", "level", "flops", "bytes", "seconds", "compute"])


def report_roofline_points(reports: Sequence[tuple[str, ncu_report.Report]]) -> pd.DataFrame:
    """Hierarchical (L1/L2/DRAM) points of every launch; kernel = catalog id when the launch is ours."""
    frames = []
    for source, report in reports:
        points = launch_points(report)
        if points.empty:
            continue
        ids = {launch.label: launch.identity.kernel_id for launch in report.launches}
        points["kernel"] = [
            ids[label] if ids.get(label) else plot_text(kernel)
            for kernel, label in zip(points["kernel"], points["label"], strict=True)
        ]
        points["label"] = [plot_text(label) for label in points["label"]]
        points["source"] = source
        frames.append(points)
    if not frames:
        return pd.DataFrame(columns=["kernel", "label", "level", "flops", "bytes", "seconds", "compute", "source"])
    return pd.concat(frames, ignore_index=True)


def roofline(points: pd.DataFrame, ceilings: Ceilings, title: str) -> go.Figure:
    """charts.roofline_figure with the tensor ceiling shown when any point is a tensor-core kernel."""
    tensor = "compute" in points.columns and bool((points["compute"] == "tensor").any())
    return roofline_figure(points, ceilings, title=plot_text(title), show_tensor=tensor)


def kernel_points(fig: go.Figure) -> dict[str, int]:
    """Number of plotted points per kernel trace in a roofline figure (ceilings, the level key and the Review
    roofline's baseline markers and arrows, marked by their `meta`, excluded)."""
    counts: dict[str, int] = {}
    for trace in fig.data:
        group = trace.legendgroup or ""
        if group.startswith("kernel:") and trace.meta is None:
            counts[group.removeprefix("kernel:")] = counts.get(group.removeprefix("kernel:"), 0) + len(trace.x)
    return counts
