"""Figures of the Details view (profiling.analysis.details): % of peak bars and the memory flow chart."""

from __future__ import annotations

import plotly.graph_objects as go

from profiling.analysis.details import Details, Figure
from profiling.charts.style import plot_text, si

_BAR = "#1f77b4"
_NODE_COLORS = {"Kernel": "#444444", "L1/TEX": "#1f77b4", "Shared": "#9467bd", "L2": "#ff7f0e", "DRAM": "#d62728"}


def peak_bars(figures: list[Figure], title: str) -> go.Figure:
    """Horizontal bars of % of peak (0-100 %), one per figure, the value printed at each bar's end; figures the
    report lacks are listed as "n/a"."""
    shown = [f for f in figures if f.unit == "%"]
    labels = [plot_text(f.label) for f in shown]
    values = [f.value if f.value is not None else 0.0 for f in shown]
    texts = [f"{f.value:.1f} %" if f.value is not None else "n/a" for f in shown]
    fig = go.Figure(
        go.Bar(x=values, y=labels, orientation="h", marker_color=_BAR, text=texts, textposition="outside",
               cliponaxis=False, hovertemplate="%{y}: %{text}<extra></extra>")
    )  # fmt: skip
    fig.update_layout(
        title=title,
        xaxis={"range": [0, 110], "title": "% of peak", "ticksuffix": " %"},
        yaxis={"autorange": "reversed"},
        height=90 + 28 * max(1, len(shown)),
        margin={"l": 10, "r": 30, "t": 50, "b": 40},
        showlegend=False,
    )
    return fig


def memory_flow(details: Details, title: str = "Memory flow") -> go.Figure:
    """The memory chart as a flow diagram: kernel -> L1/TEX and shared memory, L1/TEX <-> L2, L2 <-> DRAM, the width
    of each band its bytes; each level's node names its bytes, throughput and hit rate."""
    levels = {m.level: m for m in details.memory}
    names = ["Kernel", "L1/TEX", "Shared", "L2", "DRAM"]
    node_text = []
    for name in names:
        level = levels.get(name)
        parts = [name]
        if level is not None:
            if level.bytes is not None:
                parts.append(si(level.bytes, "B"))
            if level.bytes_per_second is not None:
                parts.append(si(level.bytes_per_second, "B/s"))
            if level.hit_rate_pct is not None:
                parts.append(f"hit {level.hit_rate_pct:.1f} %")
            if level.peak_pct is not None:
                parts.append(f"{level.peak_pct:.1f} % of peak")
        node_text.append(plot_text(" · ".join(parts)))
    index = {n: i for i, n in enumerate(names)}
    flows = [(a, b, v) for a, b, v in details.flows if a in index and b in index]
    fig = go.Figure(
        go.Sankey(
            arrangement="fixed",
            node={
                "label": node_text,
                "color": [_NODE_COLORS[n] for n in names],
                "pad": 18,
                "thickness": 16,
                "x": [0.01, 0.35, 0.35, 0.68, 0.99],
                "y": [0.4, 0.25, 0.8, 0.3, 0.3],
            },
            link={
                "source": [index[a] for a, _, _ in flows],
                "target": [index[b] for _, b, _ in flows],
                "value": [v for _, _, v in flows],
                "customdata": [si(v, "B") for _, _, v in flows],
                "hovertemplate": "%{source.label} → %{target.label}: %{customdata}<extra></extra>",
                "color": "rgba(120,120,120,0.35)",
            },
            valueformat=".3s",
            valuesuffix="B",
        )
    )
    fig.update_layout(title=title, height=360, margin={"l": 10, "r": 10, "t": 50, "b": 10}, font={"size": 12})
    return fig
