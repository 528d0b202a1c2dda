"""Roofline: benchmark results (algorithmic intensity) and ncu reports (L1/L2/DRAM), live, bundled or uploaded."""

from __future__ import annotations

import streamlit as st

from profiling.app import roofline_view, state, ui

st.title("Roofline")
bundle = state.frame().bundle

benches, reports = ui.bench_sources(bundle), ui.report_sources(bundle)
choices = list(reports) + list(benches)
if not choices:
    st.info("Nothing to plot: run a benchmark, profile, or upload a report on the Reports page.")
    st.stop()
source = st.selectbox("Data", choices, key="roof_source")
bundled = source.startswith("bundled")

with ui.user_errors():
    if source in reports:
        # A bundled capture's device is the bundled benchmark's: its properties are the fallback ceilings.
        recorded = benches[next(iter(benches))].device if benches and bundled else None
        view, ceilings = roofline_view.report_plot(reports[source], recorded)
    else:
        view, ceilings = roofline_view.bench_plot(benches[source])
    if bundled:
        ui.bundled_caption(bundle)
    if view(ceilings).empty:
        st.info("These results have no points to plot (no FLOP counts or times).")
        st.stop()
    roofline_view.roofline_section(view, ceilings, bundle.path if bundle is not None and bundled else None)
