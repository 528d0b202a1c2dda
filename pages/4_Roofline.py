"""Roofline: benchmark results (algorithmic intensity) and ncu reports (L1/L2/DRAM), live, bundled or uploaded."""

from __future__ import annotations

import functools

import streamlit as st

from profiling.analysis.ceilings import ceilings_for, measured_ceilings
from profiling.app import cache, state, tables, ui
from profiling.charts.roofline import with_fallback

st.title("Roofline")
bundle = state.frame().bundle

benches, reports = ui.bench_sources(bundle), ui.report_sources(bundle)
choices = list(reports) + list(benches)
if not choices:
    st.info("Nothing to plot: run a benchmark, profile, or upload a report on the Reports page.")
    st.stop()
source = st.selectbox("Data", choices, key="roof_source")

with ui.user_errors():
    if source in reports:
        chosen = reports[source]
        device = benches[next(iter(benches))].device if benches and source.startswith("bundled") else None
        ceilings = ceilings_for(device, chosen[0][1])
        view = functools.partial(cache.report_roofline_view, chosen)
        st.caption("Hierarchical roofline from Nsight Compute: one point per launch and memory level "
                   "(FP32 FLOPs, or 2MNK for a tensor-core launch, over bytes moved at L1, L2 and DRAM); ceilings from the "
                   "report's own clocks.")  # fmt: skip
    else:
        document = benches[source]
        frame = cache.table(tables.bench_frame, document)
        sizes = list(dict.fromkeys(frame["size"]))
        size = st.selectbox("Size", sizes, index=len(sizes) - 1, key="roof_size")
        ceilings = ceilings_for(document.device)
        view = functools.partial(cache.bench_roofline_view, document, size)
        st.caption("Algorithmic roofline: 2MNK FLOPs over the minimum traffic (read A and B, write C); "
                   "tensor-core kernels are measured against the FP16 tensor ceiling.")  # fmt: skip
    if source.startswith("bundled"):
        ui.bundled_caption(bundle)
    if view(ceilings).empty:
        st.info("These results have no points to plot (no FLOP counts or times).")
        st.stop()
    theoretical = ceilings
    folder = bundle.path if bundle is not None and source.startswith("bundled") else None
    measured = measured_ceilings(ceilings.device_name, folder)
    if measured is not None and st.toggle("Draw the measured ceilings", key="roof_measured"):
        ceilings = with_fallback(measured, theoretical)  # measured where measured; the tensor roof stays
    st.caption("How to read it: x = FLOPs per byte moved, y = FLOP/s achieved, both log. Marker shape = memory "
               "level, colour = kernel family, darker = later step. Solid lines: compute peaks; dashed: bandwidth "
               "roofs. A point's distance below its roof is the headroom; ceilings name their source (device "
               "properties = SMs x clocks recorded with the data; ncu report = the capture's own clocks).")  # fmt: skip
    shown = view(ceilings)
    st.plotly_chart(shown.figure, key="roofline")
    st.dataframe(shown.table, hide_index=True, width="stretch")
    st.subheader("Ceilings")
    st.dataframe(tables.display(tables.ceilings_table(theoretical, measured)), hide_index=True, width="stretch")
