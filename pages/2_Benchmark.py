"""Benchmark: verify and time catalog kernels against cuBLAS on the GPU; bundled results without one."""

from __future__ import annotations

import streamlit as st

from kernels.catalog import CATALOG
from profiling.app import benchmark_view, state, sweep, ui
from profiling.gpu.jobs import REST_SECONDS

st.title("Benchmark")
frame = state.frame()
bundle, device = frame.bundle, frame.device
if device is None and not frame.probing:
    ui.needs_gpu_notice("Running a benchmark", bundle, frame.no_gpu_reason)

# Outside the form, so choosing list or sweep redraws the form with only that mode's inputs.
mode = st.radio(
    "Sizes",
    ["list", "sweep", "grid", "A/B"],
    horizontal=True,
    key="bench_mode",
    help="A/B: two kernels timed in alternation in one worker, so drift hits both alike.",
)
sizes_text = grid_text = ""
start = stop = 0
pair = ("", "")
with st.form("bench"):
    ids = [s.id for s in CATALOG]
    if mode == "A/B":
        a_col, b_col = st.columns(2)
        pair = (
            a_col.selectbox("A (baseline)", ids, index=ids.index("v7-warptile"), key="ab_a"),
            b_col.selectbox("B (candidate)", ids, index=ids.index("v8-async"), key="ab_b"),
        )
        kernels = []
    else:
        kernels = st.multiselect(
            "Kernels (cuBLAS is timed alongside as the reference)",
            ids,
            default=["v3", "v4", "v5", "v8-async"],
            key="bench_kernels",
        )
    row = st.container(horizontal=True)  # one block: st.columns sent one per column besides (round 15)
    if mode in ("list", "A/B"):
        sizes_text = row.text_input("Square sizes (comma list)", "1024,2048,4096", key="bench_sizes")
    elif mode == "grid":
        grid_text = row.text_input(
            "Grid of shapes",
            "M=1,16,128,1024,4096,N=1024,4096,K=4096",
            key="bench_grid",
            help="Every M x N x K combination, against cuBLAS: the Shape sweep section below.",
        )
    else:
        start = row.number_input("Sweep from", 64, 32768, 512, step=64, key="sweep_start")
        stop = row.number_input("to", 64, 32768, 4096, step=64, key="sweep_stop")
    repeats = row.number_input("Repeats", 1, 1000, 30, key="bench_repeats")
    rest = 0.0
    if mode == "A/B":
        rest = row.number_input(
            "Rest before each pair (s)",
            0.0,
            REST_SECONDS[1],
            0.0,
            step=0.5,
            key="ab_rest",
            help="Long launches reach the GPU's power cap after about ten back to back, and capped pairs give "
            "another ratio; with a rest (2 s is enough on an H200 at 8192), every pair runs at full clock.",
        )
    submitted = st.form_submit_button("Run on the GPU", disabled=device is None, type="primary")

if submitted:
    with ui.user_errors():
        sizes = benchmark_view.requested_sizes(mode, sizes_text, grid_text, int(start), int(stop))
        ui.submit_job(state.BENCH_JOB, *benchmark_view.bench_job(mode, kernels, sizes, int(repeats), pair, float(rest)))

finished = ui.job_result(state.BENCH_JOB)
if finished:
    state.set_live_bench(finished)

sources = ui.bench_sources(bundle)
if not sources:
    st.stop()
source = st.radio("Show", list(sources), key="bench_source", format_func=ui.safe_md)
document = sources[source]
if not benchmark_view.results_section(document, source, bundle):
    st.stop()
benchmark_view.save_section(document)
sweep.sweep_section(state.live_bench())
