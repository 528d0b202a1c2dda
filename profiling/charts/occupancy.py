"""Nsight-Compute-style occupancy graphs: active warps per SM against block size, registers, shared memory."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from profiling.analysis.occupancy import sweep_all, theoretical_occupancy
from profiling.charts.style import white

_OCCUPANCY_GRAPHS = (
    ("threads", "threads_per_block", "Impact of Varying Block Size", "Threads per block"),
    ("registers", "registers_per_thread", "Impact of Varying Register Count Per Thread", "Registers per thread"),
    (
        "shared_mem",
        "shared_mem_per_block",
        "Impact of Varying Shared Memory Usage Per Block",
        "Shared memory per block (bytes)",
    ),
)


NOTE_TOP_PX = 60
"""The top margin above an occupancy graph's note: the title's room."""
NOTE_LINE_PX = 17
"""One line of the note (the occupancy, then each binding limit) above the graph."""


def occupancy_figures(
    cc: str, threads: int, registers: int, shared_mem: int, carveout: int | None = None
) -> tuple[go.Figure, go.Figure, go.Figure]:
    """Nsight-Compute-style graphs of active warps per SM vs block size, registers and shared memory.

    Each marks the kernel's own configuration and names the limiters above the graph, one a line.
    """
    current = theoretical_occupancy(cc, threads, registers, shared_mem, carveout)
    sweeps = sweep_all(cc, threads, registers, shared_mem, carveout)
    here = {"threads": threads, "registers": registers, "shared_mem": shared_mem}
    # One binding limit a line, so the note stays narrower than the chart at 1024 px.
    lines = [
        f"{current.occupancy_pct:.1f}% occupancy ({current.active_warps_per_sm}/{current.max_warps_per_sm} warps)",
        *current.describe_each(),
    ]
    figures = []
    for key, column, title, x_title in _OCCUPANCY_GRAPHS:
        frame = sweeps[key]
        fig = go.Figure(
            go.Scatter(
                x=frame[column],
                y=frame["active_warps_per_sm"],
                mode="lines+markers" if len(frame) <= 300 else "lines",
                line={"shape": "hv", "color": "#76b900", "width": 2},
                marker={"size": 5},
                name="warp occupancy",
                customdata=np.column_stack([frame["occupancy_pct"], frame["active_blocks_per_sm"]]),
                hovertemplate=(
                    f"{x_title}: %{{x}}<br>active warps: %{{y}}<br>occupancy: %{{customdata[0]:.1f}}%"
                    "<br>blocks per SM: %{customdata[1]}<extra></extra>"
                ),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[here[key]],
                y=[current.active_warps_per_sm],
                mode="markers",
                name="this kernel",
                marker={"color": "#d62728", "size": 14, "symbol": "circle-open", "line": {"width": 3}},
                hovertemplate=f"this kernel: {x_title} %{{x}}, %{{y}} warps<extra></extra>",
            )
        )
        # Above the plot, not on it: inside, at 100 % occupancy it covered the curve's top and the ring.
        fig.add_annotation(
            text="<br>".join(lines),
            xref="paper",
            yref="paper",
            x=0,
            y=1.02,
            xanchor="left",
            yanchor="bottom",
            showarrow=False,
            align="left",
        )
        fig.update_xaxes(title_text=x_title)
        fig.update_yaxes(title_text="Warp occupancy (active warps per SM)", range=[0, current.max_warps_per_sm * 1.05])
        fig.update_layout(
            title_text=f"{title} (CC {current.cc})",
            showlegend=True,
            margin={"t": NOTE_TOP_PX + NOTE_LINE_PX * len(lines)},
        )
        figures.append(white(fig))
    return figures[0], figures[1], figures[2]
