"""The Roofline page's parts: the ceilings and the cached roofline view of the data chosen (an ncu capture, or a
benchmark at one size), and the chart, its table and the ceilings with the measured ones drawn on request."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from profiling.analysis.ceilings import ceilings_for, measured_ceilings
from profiling.app import cache, tables
from profiling.charts.roofline import with_fallback
from profiling.device_model import Ceilings, DeviceInfo
from profiling.nsight import report as ncu_report
from profiling.runs.results import ResultsDocument

View = Callable[[Ceilings], cache.RooflineView]
"""The roofline of the chosen data under given ceilings (cached per server)."""


def report_plot(reports: list[tuple[str, ncu_report.Report]], device: DeviceInfo | None) -> tuple[View, Ceilings]:
    """A hierarchical roofline (one point per launch and memory level) and its ceilings: the report's own clocks,
    else the properties of `device` (as the bundled benchmark recorded them on the GPU the capture ran on)."""
    ceilings = ceilings_for(device, reports[0][1])
    st.caption(
        "Hierarchical roofline from Nsight Compute: one point per launch and memory level (FP32 FLOPs, or 2MNK for a "
        "tensor-core launch, over bytes moved at L1, L2 and DRAM); ceilings from the report's own clocks."
    )
    return functools.partial(cache.report_roofline_view, reports), ceilings


def bench_plot(document: ResultsDocument) -> tuple[View, Ceilings]:
    """An algorithmic roofline of one benchmark size (chosen here, the largest by default) and its device's ceilings."""
    frame = cache.shared(tables.bench_frame, document)
    sizes = list(dict.fromkeys(frame["size"]))
    size = st.selectbox("Size", sizes, index=len(sizes) - 1, key="roof_size")
    st.caption(
        "Algorithmic roofline: 2MNK FLOPs over the minimum traffic (read A and B, write C); "
        "tensor-core kernels are measured against the FP16 tensor ceiling."
    )
    return functools.partial(cache.bench_roofline_view, document, size), ceilings_for(document.device)


def roofline_section(view: View, ceilings: Ceilings, folder: Path | None) -> None:
    """The chart (with the ceilings measured on that GPU when asked for, from `folder` or this machine's cache), the
    table of points under their ceilings, and the ceilings themselves."""
    theoretical = ceilings
    measured = measured_ceilings(ceilings.device_name, folder)
    if measured is not None and st.toggle("Draw the measured ceilings", key="roof_measured"):
        ceilings = with_fallback(measured, theoretical)  # measured where measured; the tensor roof stays
    st.caption(
        "How to read it: x = FLOPs per byte moved, y = FLOP/s achieved, both log. Marker shape = memory level, "
        "colour = kernel family, darker = later step. Solid lines: compute peaks; dashed: bandwidth roofs. A point's "
        "distance below its roof is the headroom; ceilings name their source (device properties = SMs x clocks "
        "recorded with the data; ncu report = the capture's own clocks)."
    )
    shown = view(ceilings)
    st.plotly_chart(shown.figure, key="roofline")
    st.dataframe(shown.table, hide_index=True, width="stretch")
    st.subheader("Ceilings")
    st.dataframe(cache.shown_table(tables.ceilings_table, theoretical, measured), hide_index=True, width="stretch")
