"""Profile: Nsight Compute key metrics and findings, report downloads, and a compute-sanitizer check."""

from __future__ import annotations

import streamlit as st

from kernels.catalog import CATALOG
from profiling import usecases
from profiling.app import profile_view, state, ui
from profiling.errors import GemmLensError
from profiling.nsight.tools import find_ncu, find_tool
from profiling.shape import parse_shape

st.title("Profile")
frame = state.frame()
bundle, device = frame.bundle, frame.device
ncu = find_ncu()
can_profile = device is not None and ncu is not None
if device is None and not frame.probing:
    ui.needs_gpu_notice("Profiling with Nsight Compute", bundle, frame.no_gpu_reason)
elif device is not None and ncu is None:
    st.info("Profiling needs Nsight Compute (ncu): install it with the CUDA toolkit or set NCU_PATH.")

live = state.live_profile()
reports, files = profile_view.shown_capture(bundle)
kernel_ids = [s.id for s in CATALOG if s.source]
# The form starts from the capture shown below: its kernels and size (keyed by it, so another capture resets them).
shown_kernels, shown_size = profile_view.capture_kernels(reports, kernel_ids)
shown_key = files[0].name if files else "none"
with st.form("profile"):
    chosen = st.multiselect(
        "Kernels", kernel_ids, default=shown_kernels or ["v3", "v4", "v5"], key=f"prof_kernels:{shown_key}"
    )
    c1, c2, c3 = st.columns(3)
    size_text = c1.text_input("Size (MxNxK)", shown_size or "1024x1024x1024", key=f"prof_size:{shown_key}")
    metric_set = c2.selectbox("Metric set", ["quick", "full"], key="prof_set")
    clock = c3.selectbox("Clock control", ["none", "base"], key="prof_clock")
    extra = st.text_input("Extra ncu metrics (comma list)", "", key="prof_extra")
    run = st.form_submit_button("Profile with ncu", disabled=not can_profile, type="primary")

if run:
    with ui.user_errors():
        shape = parse_shape(size_text)
        if not chosen:
            raise GemmLensError("choose at least one kernel")
        out_dir = state.new_profile_folder()
        fn = usecases.profile_job(
            chosen, (shape.m, shape.n, shape.k), out_dir / "profile.ncu-rep", metric_set, extra.split(","), clock
        )
        ui.submit_job(state.PROFILE_JOB, f"ncu {', '.join(chosen)} {shape.label}", fn)

profiled = ui.job_result(state.PROFILE_JOB)
if profiled is not None and profiled is not live:
    state.set_live_profile(profiled)
    st.rerun()  # show the new profile, and start the form from its kernels

if live is not None:
    st.caption(f"Profiled now ({live.metric_set} set, clock control {live.clock_control}, {live.seconds:.1f} s)")
elif files:
    profile_view.capture_picker(bundle)
    ui.bundled_caption(bundle)
else:
    ui.no_capture_notice(bundle)
    st.stop()

table = profile_view.capture_section(reports)
profile_view.downloads_section(table, files, bundle.ncu_reps if bundle is not None and live is None else ())

st.subheader("compute-sanitizer")
sanitizer = find_tool("compute-sanitizer")
if device is None or sanitizer is None:
    st.caption(
        "A memcheck/racecheck run needs a GPU and compute-sanitizer (CUDA toolkit); "
        f"compute-sanitizer {'found' if sanitizer else 'not found'} here."
    )
with st.form("sanitize"):
    c1, c2, c3 = st.columns(3)
    san_kernel = c1.selectbox("Kernel", kernel_ids, index=kernel_ids.index("v5"), key="san_kernel")
    san_size = c2.text_input("Size (MxNxK)", "256x256x256", key="san_size")
    tool = c3.selectbox("Tool", ["memcheck", "racecheck", "synccheck", "initcheck"], key="san_tool")
    check = st.form_submit_button("Check", disabled=device is None or sanitizer is None)
if check:
    with ui.user_errors():
        shape = parse_shape(san_size)
        fn = usecases.sanitize_job(san_kernel, (shape.m, shape.n, shape.k), tool)
        ui.submit_job(state.SANITIZE_JOB, f"{tool} {san_kernel}", fn)
checked = ui.job_result(state.SANITIZE_JOB)
if checked is not None:
    profile_view.sanitizer_outcome(checked)
