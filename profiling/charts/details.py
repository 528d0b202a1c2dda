"""Figures of the Details view (profiling.analysis.details): % of peak bars and the memory flow chart."""

from __future__ import annotations

import plotly.graph_objects as go

from profiling.analysis.details import Details, Figure, MemoryLevel
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
        go.Bar(
            x=values,
            y=labels,
            orientation="h",
            marker_color=_BAR,
            text=texts,
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{y}: %{text}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        xaxis={"range": [0, 110], "title": "% of peak", "ticksuffix": " %"},
        yaxis={"autorange": "reversed"},
        height=90 + 28 * max(1, len(shown)),
        margin={"l": 10, "r": 30, "t": 50, "b": 40},
        showlegend=False,
    )
    return fig


# Box of each node in the chart's 0-12 x 0-6 plane: (x0, x1, y0, y1).
_BOXES = {
    "Kernel": (0.2, 2.0, 2.0, 4.0),
    "L1/TEX": (3.6, 6.2, 3.3, 5.7),
    "Shared": (3.6, 6.2, 0.3, 2.7),
    "L2": (7.6, 9.4, 2.0, 4.6),
    "DRAM": (10.4, 11.9, 2.0, 4.6),
}


def _node_text(name: str, level: MemoryLevel | None) -> str:
    lines = [f"<b>{name}</b>"]
    if level is not None:
        if level.bytes is not None:
            lines.append(si(level.bytes, "B"))
        if level.bytes_per_second is not None:
            lines.append(si(level.bytes_per_second, "B/s"))
        if level.hit_rate_pct is not None:
            lines.append(f"hit {level.hit_rate_pct:.1f} %")
        if level.peak_pct is not None:
            lines.append(f"{level.peak_pct:.1f} % of peak")
    return "<br>".join(lines)


def memory_flow(details: Details, title: str = "Memory chart") -> go.Figure:
    """The memory chart as ncu draws it, simplified: the kernel, L1/TEX and shared memory, L2 and DRAM as boxes (each
    with its bytes, throughput, hit rate and % of peak), and the bytes that flow between them on the arrows; a box's
    colour deepens with its % of peak."""
    levels = {m.level: m for m in details.memory}
    fig = go.Figure()
    for name, (x0, x1, y0, y1) in _BOXES.items():
        level = levels.get(name)
        busy = min(1.0, (level.peak_pct or 0.0) / 100.0) if level is not None else 0.0
        fig.add_shape(
            type="rect",
            x0=x0,
            x1=x1,
            y0=y0,
            y1=y1,
            line={"color": _NODE_COLORS[name], "width": 2},
            fillcolor=_NODE_COLORS[name],
            opacity=0.12 + 0.5 * busy,
            layer="below",
        )
        fig.add_annotation(
            x=(x0 + x1) / 2,
            y=(y0 + y1) / 2,
            text=plot_text(name) if level is None and name != "Kernel" else _node_text(name, level),
            showarrow=False,
            font={"size": 12},
        )
    for source, target, moved in details.flows:
        if source not in _BOXES or target not in _BOXES:
            continue
        sx0, sx1, sy0, sy1 = _BOXES[source]
        tx0, tx1, ty0, ty1 = _BOXES[target]
        start = (sx1, (sy0 + sy1) / 2)
        end = (tx0, (ty0 + ty1) / 2)
        fig.add_annotation(
            x=end[0],
            y=end[1],
            ax=start[0],
            ay=start[1],
            xref="x",
            yref="y",
            axref="x",
            ayref="y",
            showarrow=True,
            arrowhead=3,
            arrowwidth=2,
            arrowcolor="#555",
            text="",
        )
        fig.add_annotation(
            x=(start[0] + end[0]) / 2,
            y=(start[1] + end[1]) / 2 + 0.25,
            text=si(moved, "B"),
            showarrow=False,
            font={"size": 11, "color": "#333"},
            bgcolor="rgba(255,255,255,0.8)",
        )
    fig.update_layout(
        title=title,
        xaxis={"range": [0, 12.1], "visible": False, "fixedrange": True},
        yaxis={"range": [0, 6], "visible": False, "fixedrange": True},
        height=380,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        plot_bgcolor="white",
        showlegend=False,
    )
    return fig
