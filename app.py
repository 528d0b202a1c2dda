"""GEMM Lens — Overview: the GPU found (or which bundled measurements are shown), tools, data, store."""

from __future__ import annotations

import streamlit as st

from profiling.app import data, ui

st.set_page_config(page_title="GEMM Lens", page_icon="🔎", layout="wide")
st.title("GEMM Lens")
st.caption("Profile CUDA GEMM kernels: catalog → benchmark → Nsight Compute → roofline and occupancy → review.")

bundle = ui.current_bundle()
ui.queue_sidebar()
device, reason = ui.device_probe()

if device:
    st.success(f"GPU found: {ui.safe_md(device.get('name'))} (compute capability {ui.safe_md(device.get('cc'))})")
else:
    where = f"{bundle.device_name} on {bundle.date}" if bundle else "no bundled data"
    st.warning(f"No GPU found; showing bundled measurements from {ui.safe_md(where)}.")
    st.caption(f"Why: {ui.safe_md(data.one_line(reason))}")
    if st.button("Look for a GPU again"):
        ui.device_probe.clear()
        st.rerun()

left, right = st.columns(2)
with left:
    st.subheader("Device" if device else "Device of the bundled measurements")
    shown = device or (bundle.device if bundle else {})
    st.dataframe(data.device_rows(shown), hide_index=True, width="stretch")
with right:
    st.subheader("CUDA tools on this machine")
    st.dataframe(data.tool_rows(), hide_index=True, width="stretch")
    st.subheader("Bundled measurements")
    for b in ui.bundles():
        st.text(f"{b.label}: {len(b.bench_files)} results file(s), {len(b.ncu_groups)} ncu CSV capture(s), "
                f"{len(b.ncu_reps)} .ncu-rep")  # fmt: skip

st.subheader("Pages")
st.markdown(
    "- **Kernels**: each kernel's source, what it adds, its diff against the previous version, compile facts.\n"
    "- **Benchmark**: time kernels against cuBLAS; TFLOP/s and % of cuBLAS per size.\n"
    "- **Profile**: Nsight Compute key metrics and findings; compute-sanitizer.\n"
    "- **Roofline** and **Occupancy**: where each kernel sits, and what limits its occupancy.\n"
    "- **Reports**: upload ncu CSV or .ncu-rep files and compare kernels side by side.\n"
    "- **Review**: saved runs, baseline vs candidates, history, export."
)
