"""Overview: the GPU found (or which bundled measurements are shown), tools, data, store."""

from __future__ import annotations

import streamlit as st

from profiling.app import auth, cache, shape_grid, state, tables, ui
from profiling.app.table_format import table_height
from profiling.device_model import DeviceInfo
from profiling.errors import first_line

PAGES_GUIDE = (
    "- **Kernels**: each kernel's source, what it adds, its diff against the previous version, compile facts.\n"
    "- **Benchmark**: time kernels against cuBLAS; TFLOP/s and % of cuBLAS per size; A/B runs and shape sweeps.\n"
    "- **Profile**: Nsight Compute key metrics and findings; compute-sanitizer.\n"
    "- **Roofline** and **Occupancy**: where each kernel sits, and what limits its occupancy.\n"
    "- **Why**: where each kernel's warps wait (stall reasons), on which source lines and SASS, and which counters "
    "moved between two versions.\n"
    "- **Indexing**: which elements and bytes each lane of a warp touches, against 32-byte sectors and the 32 "
    "shared-memory banks, predicted and checked against the captures.\n"
    "- **Reports**: upload ncu CSV or .ncu-rep files and compare kernels side by side.\n"
    "- **Details**: one launch as Nsight Compute's Details page shows it, every metric searchable, two launches "
    "compared.\n"
    "- **Review**: saved runs, baseline vs candidates, history, export."
)

st.title("GEMM Lens")
st.caption("Profile CUDA GEMM kernels: catalog → benchmark → Nsight Compute → roofline and occupancy → review.")
frame = state.frame()
bundle, device = frame.bundle, frame.device
where = f"{bundle.device_name} on {bundle.date}" if bundle else "no bundled data"
if not auth.sign_in_configured():
    st.caption("Running without sign-in, for one local user (README: Run it for a team).")

if frame.probing:
    st.info(f"Looking for a GPU; showing bundled measurements from {ui.safe_md(where)} meanwhile.")
elif device:
    st.success(f"GPU found: {ui.safe_md(device.name)} (compute capability {ui.safe_md(device.cc)})")
else:
    st.warning(f"No GPU found; showing bundled measurements from {ui.safe_md(where)}.")
    st.caption(f"Why: {ui.safe_md(first_line(frame.no_gpu_reason))}")
    if st.button("Look for a GPU again"):
        ui.reprobe()
        st.rerun()

# Grids, not Markdown tables: a grid keeps to its column at 1024 px (a long path scrolls inside it).
left, right = st.columns(2)
with left:
    st.subheader("Device" if device else "Device of the bundled measurements")
    shown = device or (bundle.device if bundle else DeviceInfo())
    # Every row shown: the software versions at the bottom (CUDA, CuPy, NVRTC) decide what a number can be compared to.
    device_table = cache.shown_table(tables.device_rows, shown)
    st.dataframe(
        device_table, hide_index=True, width="stretch", height=table_height(len(device_table)), key="device_rows"
    )
with right:
    st.subheader("CUDA tools on this machine")
    # Looked up on each visit (a tool installed meanwhile shows), drawn from a shared table per answer.
    tools = cache.shown_table(tables.tool_rows, tables.installed_tools())
    st.dataframe(tools, hide_index=True, width="stretch", key="tool_rows")
st.subheader("Bundled measurements")
st.caption("Every committed results folder with a benchmark: pick one in the sidebar (the newest is the default).")
st.dataframe(ui.bundles_shown(), hide_index=True, width="stretch", key="bundle_rows")

if bundle is not None and bundle.bench_files:
    st.subheader("Bundled benchmark at a glance")
    ui.bundled_caption(bundle)
    document = ui.bench_document(bundle.name)
    if not shape_grid.grid_glance(document, f"overview:{bundle.name}"):
        st.caption(
            "FP32 kernels against cuBLAS SGEMM and tensor-core AddMM kernels against cuBLAS, each kind in its own "
            "titled panel with its own axis. Colour = kernel family, darker = later step; dashed line or hatched "
            "bar = the cuBLAS reference."
        )
        st.plotly_chart(cache.bench_view(document).tflops, key="glance")

st.subheader("Pages")
st.markdown(PAGES_GUIDE)
