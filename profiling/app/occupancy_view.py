"""The Occupancy page's parts: the launches it offers (every ncu capture and benchmark of this session) and the
what-if outcome of one configuration: its occupancy, what limits it, and the curves of each resource."""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from profiling import charts
from profiling.analysis import launches
from profiling.analysis.occupancy import theoretical_occupancy
from profiling.app import cache, tables
from profiling.nsight import report as ncu_report
from profiling.runs.results import ResultsDocument

CUSTOM = launches.LaunchConfig("custom", "what-if", "9.0", 256, 64, 0)
"""The starting point of "(enter your own)"."""


def launch_configs(
    report_sets: Iterable[list[tuple[str, ncu_report.Report]]], documents: Iterable[ResultsDocument]
) -> list[launches.LaunchConfig]:
    """Every launch configuration the page offers: each ncu report's launches, then each benchmark's kernels."""
    configs: list[launches.LaunchConfig] = []
    for reports in report_sets:
        configs += launches.launch_configs_from_reports(reports)
    for document in documents:
        configs += launches.launch_configs_from_bench(document)
    return configs


def launch_labels(configs: list[launches.LaunchConfig]) -> list[str]:
    """The Launch box's choices: "name — source" per configuration, then "(enter your own)"."""
    return [f"{c.name} — {c.source}" for c in configs] + ["(enter your own)"]


def what_if_section(base: launches.LaunchConfig, cc: str, threads: int, registers: int, smem: int) -> None:
    """Theoretical occupancy of the configuration entered (ncu's achieved beside it when `base` was measured), what
    limits it, and one curve per resource."""
    result = theoretical_occupancy(cc, threads, registers, smem)
    # One horizontal block for the row: st.columns sent a block per column besides (docs/load-test.md, round 15).
    row = st.container(horizontal=True)
    row.metric("Theoretical occupancy", f"{result.occupancy_pct:.1f}%")
    row.metric("Active warps per SM", f"{result.active_warps_per_sm} / {result.max_warps_per_sm}")
    row.metric("Blocks per SM", result.active_blocks_per_sm)
    if base.achieved_pct is not None:
        row.metric("ncu achieved", f"{base.achieved_pct:.1f}%", help=f"ncu theoretical: {base.ncu_theoretical_pct}")
    st.text(f"Limited by {result.describe()}")
    gap = launches.occupancy_gap_note(result.occupancy_pct, base.achieved_pct, base.waves_per_sm)
    if gap:
        st.text(gap)
    st.dataframe(cache.shown_table(tables.occupancy_limits_table, result), hide_index=True)
    st.caption(
        "How to read the curves: each shows the active warps per SM as one resource varies and the others stay at "
        "this launch's values; the red ring is this launch. A step down means one block fewer fits on an SM; the "
        "flat top is the hardware's warp limit."
    )
    for i, fig in enumerate(cache.figure(charts.occupancy_figures, cc, threads, registers, smem)):
        st.plotly_chart(fig, key=f"occ{i}")
