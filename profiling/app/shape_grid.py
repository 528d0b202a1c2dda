"""The Benchmark page's shape-grid section: a kernel's % of cuBLAS over the "no shape left behind" grid as a
heatmap (a panel per K), the target count and the shapes under the target. Shown whenever the chosen results hold a
grid result, told by their shapes (profiling.analysis.shape_grid.grid_kernels)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kernels.tuning import config_id_legend
from profiling.analysis.shape_grid import (
    EXEMPT_BELOW_TFLOPS,
    TARGET_PCT,
    TargetSummary,
    below_target_table,
    grid_cells,
    grid_kernels,
    target_summary,
)
from profiling.app import cache
from profiling.app.cache import FIGURE_ENTRIES, HASH_FUNCS, TTL_S, share_figures
from profiling.app.table_format import arrow
from profiling.app.ui import safe_md
from profiling.charts.shape_grid import UNSTEADY_LABEL, target_heatmap
from profiling.gpu.timing import UNSTEADY_RATIO
from profiling.runs.results import ResultsDocument


# Shared read-only (st.cache_resource): the page only reads the kernels and draws the summary and its table, and a
# copy out of st.cache_data unpickled them on every visit of the Benchmark page.
@cache.resource(ttl=TTL_S, max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def _kernels(document: ResultsDocument) -> list[str]:
    return grid_kernels(document)


@cache.resource(ttl=TTL_S, max_entries=32, show_spinner=False, hash_funcs=HASH_FUNCS)
def _summary(document: ResultsDocument, kernel: str) -> tuple[TargetSummary, pd.DataFrame, Any]:
    """(the summary, the shapes under the target, that table as drawn: Arrow, so a visit only serialises it)."""
    summary = target_summary(document, kernel)
    below = below_target_table(summary)
    return summary, below, arrow(below)


@cache.resource(ttl=TTL_S, max_entries=FIGURE_ENTRIES, show_spinner=False)
def _figure(key: str, _document: ResultsDocument, kernel: str) -> go.Figure:
    return share_figures(target_heatmap(grid_cells(_document, kernel), kernel, _document.device_name))


CELLS_CAPTION = (
    f"Each cell: the kernel's speed as a % of cuBLAS SGEMM timed in the same run at that M x N x K (median of "
    f"L2-flushed launches). Red: under {TARGET_PCT:.0f} %; blue: at or over it. Grey: exempt, cuBLAS itself "
    f"reaches less than {EXEMPT_BELOW_TFLOPS:.0f} TFLOP/s there. Amber, '{UNSTEADY_LABEL}': not counted, cuBLAS's own "
    f"times there were unsteady (its slowest tenth of launches over {UNSTEADY_RATIO:g}x its fastest), so there is no "
    "% to judge until that shape is rerun. Hover a cell for both TFLOP/s and the configuration that ran."
)


def shape_grid_section(document: ResultsDocument, key: str) -> None:
    """The grid heatmap, the target count and the shapes under the target of the chosen results (`key` names
    them for the figure cache); nothing when they hold no grid result."""
    kernels = _kernels(document)
    if not kernels:
        return
    st.subheader(f"Shape grid: % of cuBLAS against the {TARGET_PCT:.0f} % target")
    kernel = st.selectbox("Kernel on the grid", kernels, key="grid_target_kernel")
    summary, below, below_shown = _summary(document, kernel)
    st.markdown(safe_md(summary.sentence))
    st.caption(CELLS_CAPTION)
    st.plotly_chart(_figure(f"{key}:{kernel}", document, kernel), key="grid_target_heatmap")
    if not below.empty:
        st.caption(
            f"Shapes under {TARGET_PCT:.0f} % (not exempt), worst first, with the 95 % bootstrap interval of the % "
            "from the per-launch times; then any shape not counted because cuBLAS's own times were unsteady there. "
            f"{safe_md(config_id_legend())}"
        )
        st.dataframe(below_shown, hide_index=True, width="stretch")


def grid_glance(document: ResultsDocument, key: str) -> bool:
    """For the Overview's glance at a bundle that holds a grid result: the target sentence and heatmap of its first
    grid kernel (sgemm-auto where measured), where a TFLOP/s line over a hundred shapes reads as noise. False, and
    nothing drawn, when the results hold no grid result."""
    kernels = _kernels(document)
    if not kernels:
        return False
    kernel = kernels[0]
    summary, _, _ = _summary(document, kernel)
    st.markdown(safe_md(summary.sentence))
    st.caption(f"{CELLS_CAPTION} The Benchmark page lists the shapes under the target and the other kernels.")
    st.plotly_chart(_figure(f"{key}:{kernel}", document, kernel), key="glance")
    return True
