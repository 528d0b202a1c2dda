"""Benchmark figures: TFLOP/s per size (FP32 and tensor-core panels) and % of cuBLAS, one colour per kernel."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kernels.catalog import library_ids
from kernels.registry import operation_of
from profiling.charts.style import (
    SLANTED_AXIS_PX,
    family_legend,
    kernel_colors,
    kernel_group,
    legend_below,
    legend_rank,
    legends_below,
    plot_text,
    size_tick,
    size_tick_angle,
    white,
)
from profiling.gpu.timing import UNSTEADY_RATIO

PANELS = (("fp32", "FP32 kernels (vs cuBLAS SGEMM)"), ("tensor", "Tensor-core AddMM kernels (vs cuBLAS)"))


def _per_kernel(ok: pd.DataFrame) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """(escaped name, colour, rows in FLOP order) of each kernel in `ok`, in first-seen order."""
    colors = kernel_colors(str(k) for k in ok["kernel"].unique())
    for kernel, part in ok.groupby("kernel", sort=False):
        yield plot_text(kernel), colors[str(kernel)], part.sort_values("flops")


def compute_kind(kernel: str, operation: object = None) -> str:
    """ "tensor" for a tensor-core operation (HGEMM, AddMM), else "fp32" (the operation table decides)."""
    op = operation_of(kernel, operation if isinstance(operation, str) and operation else None)
    return op.compute if op is not None else "fp32"


def tflops_figure(frame: pd.DataFrame, title: str = "TFLOP/s vs size") -> go.Figure:
    """TFLOP/s against problem size, one line per kernel in its family colour, the library reference dashed.

    FP32 kernels and tensor-core kernels sit in two panels, each with its own y axis and its own cuBLAS reference:
    cuBLAS's tensor-core GEMM runs ~15x faster than any FP32 kernel, and on one axis it would flatten them all.
    """
    ok = frame[(frame["status"] == "ok") & frame["tflops"].notna()]
    sizes = list(dict.fromkeys(ok.sort_values("flops")["size"]))
    ops = ok["operation"] if "operation" in ok.columns else pd.Series(None, index=ok.index)
    kinds = pd.Series([compute_kind(str(k), o) for k, o in zip(ok["kernel"], ops, strict=True)], index=ok.index)
    panels = [(kind, name) for kind, name in PANELS if (kinds == kind).any()] or [PANELS[0]]
    if len(sizes) == 1:
        return _one_size_tflops(ok, kinds, panels, sizes[0])
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[name for _, name in panels], horizontal_spacing=0.1)
    refs = library_ids()
    for col, (kind, _) in enumerate(panels, start=1):
        for name, color, part in _per_kernel(ok[kinds == kind]):
            kernel = str(part["kernel"].iloc[0])
            family = kernel_group(kernel)
            reference = kernel in refs
            fig.add_trace(
                go.Scatter(
                    x=part["size"],
                    y=part["tflops"],
                    mode="lines+markers",
                    name=name,
                    legend=family_legend(family),
                    legendrank=legend_rank(kernel),
                    line={"color": color, "dash": "dash" if reference else "solid", "width": 3 if reference else 2},
                    hovertemplate="%{x}<br>%{y:.2f} TFLOP/s<extra>%{fullData.name}</extra>",
                ),
                row=1,
                col=col,
            )
        fig.update_yaxes(title_text="TFLOP/s" if col == 1 else "", rangemode="tozero", row=1, col=col)
    angle = size_tick_angle(sizes)
    fig.update_xaxes(
        title_text="size (M = N = K)" if all("³" in size_tick(s) for s in sizes) else "size (MxNxK)",
        type="category",
        categoryorder="array",
        categoryarray=sizes,
        tickvals=sizes,
        ticktext=[size_tick(s) for s in sizes],
        tickangle=angle,
    )
    axis_px = SLANTED_AXIS_PX if angle else 80
    fig.update_annotations(font_size=12)  # the panel titles
    fig.update_layout(title_text=title)
    return legends_below(white(fig), axis_px=axis_px)


BAR_ROW_PX = 22
"""Height of one kernel's row in the charts of a bar per kernel: a kernel name per row, legible at 1024 px."""


def _bar_rows_height(rows: int, panels: int = 1) -> int:
    """The height of a chart of a row per kernel, `rows` kernels in all: their bars, and each stacked panel's title
    and x axis."""
    return max(320, rows * BAR_ROW_PX + 130 * panels + 40)


def _one_size_tflops(ok: pd.DataFrame, kinds: pd.Series, panels: list[tuple[str, str]], size: str) -> go.Figure:
    """tflops_figure for a benchmark of one size: a line over one size is a column of dots whose colours alone say
    which kernel each is, so each panel is a bar per kernel instead, named on its axis in catalog order (the ladder
    top to bottom), the library reference hatched. The panels stack, each as wide as the chart: side by side at
    1024 px the tensor-core panel's names ran into the FP32 panel's bars."""
    counts = [int(ok[kinds == kind]["kernel"].nunique()) for kind, _ in panels]
    height = _bar_rows_height(sum(counts), len(panels))
    fig = make_subplots(
        rows=len(panels),
        cols=1,
        subplot_titles=[name for _, name in panels],
        row_heights=[max(c, 1) for c in counts],
        vertical_spacing=min(0.3, 130 / height),
    )
    refs = library_ids()
    for row, (kind, _) in enumerate(panels, start=1):
        for name, color, one in sorted(_per_kernel(ok[kinds == kind]), key=lambda t: _fp32_first_rank(t[2])):
            fig.add_trace(
                go.Bar(
                    x=one["tflops"],
                    y=[name],
                    orientation="h",
                    name=name,
                    marker_color=color,
                    marker_pattern_shape="/" if str(one["kernel"].iloc[0]) in refs else "",
                    showlegend=False,
                    hovertemplate="%{y}<br>%{x:.2f} TFLOP/s<extra></extra>",
                ),
                row=row,
                col=1,
            )
        fig.update_xaxes(title_text="TFLOP/s", rangemode="tozero", row=row, col=1)
        fig.update_yaxes(autorange="reversed", type="category", row=row, col=1)
    fig.update_annotations(font_size=12)
    fig.update_layout(title_text=f"TFLOP/s at {size_tick(size)}", barmode="overlay", height=height)
    return white(fig)


UNSTEADY_LEGEND = (
    f"Hatched: cuBLAS's own launches were unsteady at that size (p90 over {UNSTEADY_RATIO}x p10), so the % is not "
    "its speed: rerun"
)
"""The % of cuBLAS chart's note under its title, drawn where any bar's reference was unsteady."""


def _unsteady_note(ratio: float | None) -> str:
    return "<br>cuBLAS unsteady here" + (f" (p90 {ratio:.1f}x p10)" if ratio else "") + ": rerun"


def _fp32_first_rank(rows: pd.DataFrame) -> tuple[bool, int]:
    """Where a kernel's bar sits in the charts of a row per kernel: FP32 kernels first, then tensor-core ones, each
    in catalog order (the catalog lists v9-regdb and its splits after the tensor-core steps; the % of cuBLAS chart
    holds both kinds in one panel)."""
    kernel = str(rows["kernel"].iloc[0])
    operation = rows["operation"].iloc[0] if "operation" in rows.columns else None
    return compute_kind(kernel, operation) == "tensor", legend_rank(kernel)


def _pct_bars(rows: pd.DataFrame, in_rows: bool, offsetgroup: str, **style: object) -> go.Bar:
    """One kernel's % of cuBLAS bars: one per size at its size, or, in a chart of a row per kernel, one on the
    kernel's row (named on the axis, so not in a legend)."""
    if in_rows:
        return go.Bar(
            x=rows["pct_cublas"], y=[style["name"]] * len(rows), orientation="h", **{**style, "showlegend": False}
        )
    return go.Bar(x=rows["size"], y=rows["pct_cublas"], offsetgroup=offsetgroup, **style)


LEGEND_KERNELS_MAX = 8
"""Over several sizes, the most kernels the % of cuBLAS chart tells apart by a legend of colours; more are drawn a row
per kernel, named on the axis, a panel per size (the whole catalog's 30 bars a size in 30 colours could not be
matched to a legend)."""

SIZE_PANELS_MAX = 4
"""The most sizes drawn as side-by-side panels of a row per kernel: at 1024 px each of four is about 180 px wide."""


def pct_cublas_figure(
    frame: pd.DataFrame,
    title: str = "% of cuBLAS in the same run (its SGEMM or its AddMM)",
) -> go.Figure:
    """Grouped bars: % of the library reference per kernel, one bar per size; references left out. `frame` is
    tables.bench_frame's: bars whose reference was unsteady (its `reference_unsteady`) are hatched. For a benchmark
    of one size, or of more than LEGEND_KERNELS_MAX kernels over at most SIZE_PANELS_MAX sizes, a row per kernel named
    on the axis in catalog order and a panel per size (a group of bars told apart only by colour needs a legend of
    every kernel)."""
    refs = library_ids()
    ok = frame[(frame["status"] == "ok") & frame["pct_cublas"].notna() & ~frame["kernel"].isin(refs)]
    sizes = list(dict.fromkeys(ok.sort_values("flops")["size"])) if len(ok) else []
    kernels = list(_per_kernel(ok))
    in_rows = len(sizes) == 1 or (len(kernels) > LEGEND_KERNELS_MAX and len(sizes) <= SIZE_PANELS_MAX)
    if in_rows:
        kernels.sort(key=lambda t: _fp32_first_rank(t[2]))
        fig = make_subplots(rows=1, cols=len(sizes), shared_yaxes=True, horizontal_spacing=0.03)
        hover = "%{y}<br>%{x:.1f}% of cuBLAS%{customdata}<extra></extra>"
    else:
        fig = go.Figure()
        hover = "%{x}<br>%{y:.1f}% of cuBLAS%{customdata}<extra>%{fullData.name}</extra>"
    for group, (name, color, part) in enumerate(kernels):
        kernel = str(part["kernel"].iloc[0])
        for col, size in enumerate(sizes if in_rows else [None], start=1):
            here = part[part["size"] == size] if in_rows else part
            if here.empty:
                continue
            unsteady = [bool(u) for u in here["reference_unsteady"]]
            notes = [
                _unsteady_note(p) if u else "" for u, p in zip(unsteady, here["reference_p90_over_p10"], strict=True)
            ]
            at = {"row": 1, "col": col} if in_rows else {}
            style = {"name": name, "legendgroup": kernel, "marker_color": color, "hovertemplate": hover}
            fig.add_trace(
                _pct_bars(here, in_rows, str(group), legendrank=legend_rank(kernel), customdata=notes, **style), **at
            )
            if any(unsteady):
                # The hatch is a second trace over the same bars (same offset group), so the legend's swatch, which
                # plotly draws from a trace's first bar, stays plain.
                hatched = [n for n, u in zip(notes, unsteady, strict=True) if u]
                fig.add_trace(
                    _pct_bars(
                        here[unsteady],
                        in_rows,
                        str(group),
                        showlegend=False,
                        marker_pattern_shape="/",
                        customdata=hatched,
                        **style,
                    ),
                    **at,
                )
    if len(ok) and ok["reference_unsteady"].any():
        title = f"{title}<br><sup>{UNSTEADY_LEGEND}</sup>"
    if in_rows:
        for col, size in enumerate(sizes, start=1):
            fig.add_vline(
                x=100,
                line_dash="dot",
                line_color="#666666",
                annotation_text="cuBLAS = 100 %" if col == 1 else "",
                row=1,
                col=col,
            )
            fig.update_xaxes(
                title_text=f"% of cuBLAS at {size_tick(size)}",
                ticksuffix=" %",
                rangemode="tozero",
                matches="x" if col > 1 else None,  # one scale, so a bar's length compares across the sizes
                row=1,
                col=col,
            )
        fig.update_yaxes(autorange="reversed", type="category")
        fig.update_layout(title_text=title, barmode="overlay", showlegend=False, height=_bar_rows_height(len(kernels)))
        return white(fig)
    fig.add_hline(y=100, line_dash="dot", line_color="#666666", annotation_text="cuBLAS = 100 %")
    angle = size_tick_angle(sizes)
    fig.update_xaxes(
        title_text="size", type="category", tickvals=sizes, ticktext=[size_tick(s) for s in sizes], tickangle=angle
    )
    fig.update_yaxes(title_text="% of cuBLAS", ticksuffix=" %")
    # showlegend: plotly hides the legend of a single trace, which would leave one kernel's bars unnamed.
    fig.update_layout(title_text=title, barmode="group", showlegend=True)
    return legend_below(white(fig), axis_px=SLANTED_AXIS_PX if angle else 80)
