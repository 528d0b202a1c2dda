"""Review figures over saved runs: baseline-vs-candidate roofline and time bars, and a kernel's history.

Runs are SavedRun records (profiling.runs.records) or their record dicts. Every label that came with a run (kernel,
run label, device, size) reaches plotly through plot_text: legends, ticks and hovers read HTML."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from kernels.registry import operation_of
from profiling.charts.roofline import operation_point, roofline
from profiling.charts.style import kernel_color, legend_below, log_ticks, plot_text, size_tick
from profiling.device_model import Ceilings
from profiling.runs.comparison import METRIC_BY_KEY, VERDICT_COLORS
from profiling.runs.records import SavedRun, as_run
from profiling.runs.values import finite_number

RUN_COLORS = ("#7a7a7a", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
"""Run colours in the time bars: the baseline grey, candidates in order (runs are not kernels)."""


def review_roofline(
    baseline: SavedRun | Mapping[str, Any],
    candidates: Sequence[SavedRun | Mapping[str, Any]],
    ceilings: Ceilings | None,
) -> go.Figure:
    """Algorithmic roofline of the baseline (open markers) and candidates (filled), each candidate point
    linked to the baseline point of the same kernel and size by a dotted line; `ceilings` are those of the
    baseline's device (None: a titled empty figure)."""

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
    fig = roofline(filled if len(filled) else base, ceilings, "Roofline: baseline (open stars), candidates (filled)")
    for kernel, part in base.groupby("kernel", sort=False):
        fig.add_trace(
            go.Scatter(
                x=part["flops"] / part["bytes"],
                y=part["flops"] / part["seconds"],
                mode="markers",
                name=f"{kernel} (baseline)",
                legendgroup=f"baseline:{kernel}",
                marker={"color": kernel_color(str(kernel)), "symbol": "star-open", "size": 13, "line": {"width": 2}},
                text=part["run"] + " " + part["label"],
                hovertemplate="<b>%{fullData.name}</b> %{text}<br>%{y:.3s}FLOP/s<extra></extra>",
            )
        )
    base_at = {(r.kernel, r.label): r for r in base.itertuples()}
    for cand in cands:
        for r in cand.itertuples():
            b = base_at.get((r.kernel, r.label))
            if b is None:
                continue
            fig.add_trace(
                go.Scatter(
                    x=[b.flops / b.bytes, r.flops / r.bytes],
                    y=[b.flops / b.seconds, r.flops / r.seconds],
                    mode="lines",
                    line={"color": kernel_color(str(r.kernel)), "dash": "dot", "width": 1},
                    legendgroup=f"link:{r.kernel}",
                    showlegend=False,
                    hoverinfo="skip",
                )
            )
    return legend_below(fig, base_height=560)


def history_figure(history: pd.DataFrame, kernel: str, metric: str = "time_median_ms") -> go.Figure:
    """Line chart of review.kernel_history(): one trace per device and size, x = the runs in date order (one
    category per run, "#id label"), so runs saved seconds apart are as readable as runs weeks apart; each run's
    date is in the hover."""
    label = METRIC_BY_KEY[metric].label if metric in METRIC_BY_KEY else metric
    ordered = history.sort_values(["created", "run_id"]) if len(history) else history
    runs = list(dict.fromkeys(_run_tick(r) for r in ordered.itertuples()))
    fig = go.Figure()
    for (device, size), part in ordered.groupby(["device_name", "size"], dropna=False, sort=True):
        fig.add_trace(
            go.Scatter(
                x=[_run_tick(r) for r in part.itertuples()], y=part["value"], mode="lines+markers",
                name=plot_text(f"{device or 'unknown device'} {size}".strip()),
                text=[plot_text(r) for r in part["run_label"]],
                customdata=[str(c)[:19].replace("T", " ") for c in part["created"]],
                hovertemplate="%{text}<br>saved %{customdata} UTC<br>%{y:.4g}<extra></extra>",
            )
        )  # fmt: skip
    fig.update_xaxes(title_text="saved run (oldest first)", type="category", categoryorder="array", categoryarray=runs)
    fig.update_yaxes(title_text=label)
    fig.update_layout(title=plot_text(f"{kernel}: {label} across runs"), template="plotly_white")
    return legend_below(fig)


def _run_tick(row: object) -> str:
    return plot_text(f"#{row.run_id} {row.run_label}")


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
    bars.update_yaxes(type="log", title_text="median time (ms, log scale)", tickvals=ticks[0],
                      ticktext=[f"{t} ms" for t in ticks[1]])  # fmt: skip
    bars.update_xaxes(title_text="kernel and size", tickangle=-45)
    bars.update_layout(title="Median time per kernel (lower is better)", barmode="group", template="plotly_white")
    figs.append(legend_below(bars, base_height=640, axis_px=170))
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
                )
            )
        delta.add_hline(y=0, line_color="#666666", line_width=1)
        delta.update_xaxes(title_text="kernel and size", tickangle=-45)
        delta.update_yaxes(title_text="time change vs baseline (%)", ticksuffix=" %")
        delta.update_layout(title="Time change vs baseline (%; negative is faster; colour = verdict)",
                            template="plotly_white")  # fmt: skip
        figs.append(legend_below(delta, base_height=600, axis_px=170))
    return figs


def _run_name(run: SavedRun) -> str:
    return f"#{run.id} {run.label}" if run.id is not None else run.label
