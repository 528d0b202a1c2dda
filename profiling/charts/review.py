"""Review figures over saved runs: baseline-vs-candidate roofline and time bars, and a kernel's history.

Runs are SavedRun records (profiling.runs.records) or their record dicts. Every label that came with a run (kernel,
run label, device, size) reaches plotly through plot_text: legends, ticks and hovers read HTML."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kernels.registry import operation_of
from profiling.charts.roofline import operation_point, roofline
from profiling.charts.style import (
    family_legend,
    kernel_colors,
    kernel_group,
    legend_below,
    legends_below,
    log_ticks,
    plot_text,
    size_tick,
    white,
)
from profiling.device_model import Ceilings
from profiling.runs.comparison import METRIC_BY_KEY, VERDICT_COLORS
from profiling.runs.records import SavedRun, as_run
from profiling.runs.values import finite_number
from profiling.shape import shape_from_label

RUN_COLORS = ("#7a7a7a", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
"""Run colours in the time bars: the baseline grey, candidates in order (runs are not kernels)."""


def review_roofline(
    baseline: SavedRun | Mapping[str, Any],
    candidates: Sequence[SavedRun | Mapping[str, Any]],
    ceilings: Ceilings | None,
) -> go.Figure:
    """Algorithmic roofline of the candidates (filled markers, a legend row per kernel family) with an arrow from
    the baseline point (open circle) of the same kernel and size to each, in the kernel's colour, so the move
    reads without a legend entry per run and kernel; `ceilings` are those of the baseline's device (None: a titled
    empty figure)."""

    def points(run: SavedRun) -> pd.DataFrame:
        rows = []
        for r in run.results:
            t, shape = r.time_median_ms, r.shape
            if not t or shape is None or not (shape.m and shape.n and shape.k) or r.status != "ok":
                continue
            # A bench run keeps its source row, with the operation, in `extra`; else the catalog knows the kernel.
            op = operation_of(r.kernel, r.extra.get("operation"))
            p = operation_point(plot_text(r.kernel), shape, t / 1e3, op, label=r.size)
            p["run"] = plot_text(f"#{run.id} {run.label}")
            rows.append(p)
        return pd.DataFrame(rows, columns=["kernel", "label", "level", "flops", "bytes", "seconds", "compute", "run"])

    base = points(as_run(baseline))
    cands = [points(as_run(c)) for c in candidates]
    if ceilings is None:
        fig = go.Figure()
        fig.update_layout(title_text="Roofline: no ceilings known for this device")
        return fig
    filled = pd.concat(cands, ignore_index=True) if cands else base.iloc[0:0]
    drawn = filled if len(filled) else base
    fig = roofline(drawn, ceilings, "Roofline: baseline (open circle) → candidate (filled), per kernel")
    # The roofline's own colours first, so that each kernel's baseline and arrows match its points.
    colors = kernel_colors([*map(str, drawn["kernel"].unique()), *map(str, base["kernel"].unique())])
    base_at = {(r.kernel, r.label): r for r in base.itertuples()}
    for kernel, part in base.groupby("kernel", sort=False):
        # Toggled with the kernel's legend entry: the same legend group, no entry of its own.
        fig.add_trace(
            go.Scatter(
                x=part["flops"] / part["bytes"],
                y=part["flops"] / part["seconds"],
                mode="markers",
                name=f"{kernel} (baseline)",
                meta="baseline",
                legend=family_legend(kernel_group(str(kernel))),
                legendgroup=f"kernel:{kernel}",
                showlegend=False,
                marker={"color": colors[str(kernel)], "symbol": "circle-open", "size": 11, "line": {"width": 2}},
                text=part["run"] + " " + part["label"],
                hovertemplate="<b>%{fullData.name}</b> %{text}<br>%{y:.3s}FLOP/s<extra></extra>",
            )
        )
    for cand in cands:
        for kernel, part in cand.groupby("kernel", sort=False):
            xs, ys, symbols = [], [], []
            for r in part.itertuples():
                b = base_at.get((r.kernel, r.label))
                if b is None:
                    continue
                start = (b.flops / b.bytes, b.flops / b.seconds)
                end = (r.flops / r.bytes, r.flops / r.seconds)
                if max(abs(math.log10(e / s)) for s, e in zip(start, end, strict=True)) < MIN_MOVE_DECADES:
                    continue  # no visible move: an arrow head on a point would point anywhere
                head = _toward(start, end, ARROW_AT)
                xs += [start[0], head[0], end[0], None]
                ys += [start[1], head[1], end[1], None]
                symbols += ["circle", "arrow", "circle", "circle"]
            if not xs:
                continue
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines+markers",
                    name=f"{kernel}: baseline → candidate",
                    meta="arrow",
                    legend=family_legend(kernel_group(str(kernel))),
                    legendgroup=f"kernel:{kernel}",
                    showlegend=False,
                    line={"color": colors[str(kernel)], "width": 1.5},
                    marker={
                        "symbol": symbols,
                        "size": [0, 11, 0, 0] * (len(xs) // 4),
                        "angleref": "previous",
                        "color": colors[str(kernel)],
                    },
                    hoverinfo="skip",
                )
            )
    for name, symbol in (
        ("baseline", "circle-open"),
        ("candidate", "star"),
        (f"baseline → candidate (moves over {10**MIN_MOVE_DECADES - 1:.0%})", "arrow"),
    ):
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=name,
                legendgroup="runs",
                legendgrouptitle_text="Runs",
                marker={"color": "#666666", "symbol": symbol, "size": 10, "angle": 90 if symbol == "arrow" else 0},
                hoverinfo="skip",
            )
        )
    return legends_below(fig, base_height=560)


MIN_MOVE_DECADES = 0.01
"""Moves shorter than this on both log axes (about 2 %) get no arrow: it would sit on the point, pointing anywhere."""
ARROW_AT = 0.8
"""Where along a baseline -> candidate segment (in log space) the arrow head sits: before the candidate's marker."""


def _toward(start: tuple[float, float], end: tuple[float, float], fraction: float) -> tuple[float, float]:
    """The point `fraction` of the way from `start` to `end` on log-log axes."""
    return tuple(
        10 ** (math.log10(a) + fraction * (math.log10(b) - math.log10(a))) for a, b in zip(start, end, strict=True)
    )


def history_figure(history: pd.DataFrame, kernel: str, metric: str = "time_median_ms") -> go.Figure:
    """review.kernel_history() as small multiples: a panel per size, each with its own y axis (a 1024³ time is
    a hundredth of an 8192³ one; on one axis it would lie flat), a line per device (one colour and legend entry per
    device across panels). x = the runs in date order, one category per run ("#id", its label and date in the
    hover), so runs saved seconds apart read as well as runs weeks apart and no tick label runs into the legend."""
    label = METRIC_BY_KEY[metric].label if metric in METRIC_BY_KEY else metric
    ordered = history.sort_values(["created", "run_id"]) if len(history) else history
    runs = list(dict.fromkeys(f"#{r.run_id}" for r in ordered.itertuples()))
    sizes = sorted(set(ordered["size"]) if len(ordered) else (), key=_size_order)
    fig = make_subplots(
        rows=max(1, len(sizes)),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12 / max(1, len(sizes)),
        subplot_titles=[plot_text(size_tick(str(z))) for z in sizes] or None,
    )
    device_of = ordered["device_name"].where(ordered["device_name"].fillna("") != "", "unknown device")
    devices = sorted(set(device_of))
    shown: set[str] = set()
    for row, size in enumerate(sizes, start=1):
        for i, device in enumerate(devices):
            part = ordered[(ordered["size"] == size) & (device_of == device)]
            if part.empty:
                continue
            fig.add_trace(
                go.Scatter(
                    x=[f"#{r.run_id}" for r in part.itertuples()],
                    y=part["value"],
                    mode="lines+markers",
                    name=plot_text(device),
                    legendgroup=plot_text(device),
                    showlegend=device not in shown,
                    line={"color": RUN_COLORS[(i + 1) % len(RUN_COLORS)]},
                    text=[plot_text(r) for r in part["run_label"]],
                    customdata=[str(c)[:19].replace("T", " ") for c in part["created"]],
                    hovertemplate="%{x} %{text}<br>saved %{customdata} UTC<br>%{y:.4g}<extra>%{fullData.name}</extra>",
                ),
                row=row,
                col=1,
            )
            shown.add(device)
        fig.update_yaxes(title_text=label if len(label) < 24 else "", rangemode="tozero", row=row, col=1)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=runs, tickangle=0)
    fig.update_xaxes(title_text="saved run (oldest first; hover for its label)", row=max(1, len(sizes)), col=1)
    fig.update_annotations(font_size=12)  # the panel titles
    fig.update_layout(title=plot_text(f"{kernel}: {label} across runs, a panel per size"))
    return legend_below(white(fig), base_height=260 + 200 * max(1, len(sizes)))


VERDICT_ROOM = 0.35
"""Share of the time-change chart's data range added beyond the longest bar for its verdict word."""
VERDICT_TEXT_PX = 12
"""The verdict written on each bar of the time-change chart (same, faster, ...): the legend's size, not smaller."""


def _size_order(size: object) -> tuple:
    """Sizes by their FLOP count ("1024x1024x1024" before "8192x8192x8192"), text sizes after."""
    shape = shape_from_label(str(size))
    return (0, shape.flops, str(size)) if shape is not None else (1, 0, str(size))


def comparison_figures(
    baseline: SavedRun | Mapping[str, Any],
    candidates: Sequence[SavedRun | Mapping[str, Any]],
    comparison: pd.DataFrame,
) -> list[go.Figure]:
    """Median time per kernel/size for each run (grouped bars), and the time change per candidate
    coloured by verdict."""
    figs = []
    bars = go.Figure()
    runs = list(map(as_run, (baseline, *candidates)))
    for i, run in enumerate(runs):
        rows = [r for r in run.results if finite_number(r.time_median_ms) is not None]
        bars.add_trace(
            go.Bar(
                x=[plot_text(f"{r.kernel} {size_tick(r.size or '')}".strip()) for r in rows],
                y=[r.time_median_ms for r in rows],
                name=plot_text(_run_name(run)) + (" (baseline)" if i == 0 else ""),
                marker_color=RUN_COLORS[i % len(RUN_COLORS)],
                hovertemplate="%{x}<br>%{y:.4g} ms<extra>%{fullData.name}</extra>",
            )
        )
    # Times span three or more decades (cuBLAS HGEMM 0.01 ms, naive SGEMM 270 ms): a log axis keeps each bar
    # readable, and equal ratios look equal.
    times = [t for r in runs for t in (finite_number(x.time_median_ms) for x in r.results) if t and t > 0]
    ticks = log_ticks(min(times) / 1.5, max(times) * 1.5) if times else ([], [])
    bars.update_yaxes(
        type="log", title_text="median time (ms, log scale)", tickvals=ticks[0], ticktext=[f"{t} ms" for t in ticks[1]]
    )
    bars.update_xaxes(title_text="kernel and size", tickangle=-45)
    bars.update_layout(title="Median time per kernel (lower is better)", barmode="group")
    figs.append(legend_below(white(bars), base_height=640, axis_px=170))
    times = comparison[comparison["metric"] == "time_median_ms"].dropna(subset=["delta_pct"])
    if not times.empty:
        delta = go.Figure()
        for label, part in times.groupby("candidate_label", sort=False):
            delta.add_trace(
                go.Bar(
                    x=[
                        plot_text(f"{k} {size_tick(z or '')}".strip())
                        for k, z in zip(part["kernel"], part["size"], strict=True)
                    ],
                    y=part["delta_pct"].clip(-1000, 1000),
                    name=plot_text(label),
                    marker_color=[VERDICT_COLORS[v] for v in part["verdict"]],
                    text=part["verdict"],
                    # outside the bar and upright at a fixed size: inside, plotly shrinks the word to the bar
                    textposition="outside",
                    textangle=-90,
                    textfont={"size": VERDICT_TEXT_PX},
                    cliponaxis=False,
                )
            )
        delta.add_hline(y=0, line_color="#666666", line_width=1)
        delta.update_xaxes(title_text="kernel and size", tickangle=-45)
        # Room beyond the longest bars for the upright verdict words written outside them (plotly's autorange
        # leaves none, and below the axis they ran into the tick labels).
        shown = times["delta_pct"].clip(-1000, 1000)
        low, high = min(0.0, float(shown.min())), max(0.0, float(shown.max()))
        pad = VERDICT_ROOM * max(high - low, 1.0)
        delta.update_yaxes(
            title_text="time change vs baseline (%)",
            ticksuffix=" %",
            range=[low - (pad if low < 0 else 0), high + (pad if high > 0 else 0)],
        )
        delta.update_layout(
            title="Time change vs baseline (%; negative is faster; colour = verdict)",
            uniformtext={"minsize": VERDICT_TEXT_PX, "mode": "show"},
        )
        figs.append(legend_below(white(delta), base_height=600, axis_px=170))
    return figs


def _run_name(run: SavedRun) -> str:
    return f"#{run.id} {run.label}" if run.id is not None else run.label
