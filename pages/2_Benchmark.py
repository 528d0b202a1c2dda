"""Benchmark: verify and time catalog kernels against cuBLAS on the GPU; bundled results without one."""

from __future__ import annotations

import streamlit as st

from kernels.catalog import CATALOG
from profiling import abtest
from profiling.app import auth, cache, shape_grid, state, sweep, tables, ui
from profiling.cluster import app as cluster_app
from profiling.errors import GemmLensError
from profiling.gpu.jobs import BenchSettings, parse_grid, parse_sizes, sweep_sizes
from profiling.runs.convert import bench_run

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
with st.form("bench"):
    ids = [s.id for s in CATALOG]
    if mode == "A/B":
        a_col, b_col = st.columns(2)
        kernel_a = a_col.selectbox("A (baseline)", ids, index=ids.index("v7-warptile"), key="ab_a")
        kernel_b = b_col.selectbox("B (candidate)", ids, index=ids.index("v8-async"), key="ab_b")
    kernels = [] if mode == "A/B" else st.multiselect("Kernels (cuBLAS is timed alongside as the reference)", ids,
                             default=["v3", "v4", "v5", "v8-async"], key="bench_kernels")  # fmt: skip
    c1, c2, c3 = st.columns(3)
    if mode in ("list", "A/B"):
        sizes_text = c1.text_input("Square sizes (comma list)", "1024,2048,4096", key="bench_sizes")
    elif mode == "grid":
        grid_text = c1.text_input(
            "Grid of shapes",
            "M=1,16,128,1024,4096,N=1024,4096,K=4096",
            key="bench_grid",
            help="Every M x N x K combination, against cuBLAS: the Shape sweep section below.",
        )
    else:
        start = c1.number_input("Sweep from", 64, 32768, 512, step=64, key="sweep_start")
        stop = c2.number_input("to", 64, 32768, 4096, step=64, key="sweep_stop")
    repeats = c3.number_input("Repeats", 1, 1000, 30, key="bench_repeats")
    submitted = st.form_submit_button("Run on the GPU", disabled=device is None, type="primary")

if submitted:
    with ui.user_errors():
        if mode == "grid":
            sizes = parse_grid(grid_text)
        else:
            sizes = sweep_sizes(int(start), int(stop)) if mode == "sweep" else parse_sizes(sizes_text)
        if mode == "A/B":
            fn = abtest.ab_job(*abtest.parse_pair(f"{kernel_a},{kernel_b}"), sizes, BenchSettings(repeats=int(repeats)))
            ui.submit_job(state.BENCH_JOB, f"A/B {kernel_a} vs {kernel_b} x {len(sizes)} size(s)", fn)
        elif not kernels:
            raise GemmLensError("choose at least one kernel")
        else:
            fn = cluster_app.benchmark_job(kernels, sizes, BenchSettings(repeats=int(repeats)))
            ui.submit_job(state.BENCH_JOB, f"benchmark {len(kernels)} kernel(s) x {len(sizes)} size(s)", fn)

finished = ui.job_result(state.BENCH_JOB)
if finished:
    state.set_live_bench(finished)

sources = ui.bench_sources(bundle)
if not sources:
    st.stop()
source = st.radio("Show", list(sources), key="bench_source", format_func=ui.safe_md)
document = sources[source]
dev = document.device
if source.startswith("bundled"):
    ui.bundled_caption(bundle)
else:
    st.caption(f"Measured now on {ui.safe_md(dev.get('name', 'the GPU'))} at {ui.safe_md(document.created_utc)}")

results = cache.table(tables.bench_frame, document)
if results.empty:
    st.info("No results yet.")
    st.stop()
if document.ab:
    pair = document.ab
    st.subheader(f"A/B: {pair['b']} against {pair['a']}, interleaved")
    st.caption("B/A: the median of per-pair time ratios, with its 95 % paired bootstrap interval (below 1: B faster).")
    st.dataframe(tables.display(cache.ab_table(document)), hide_index=True, width="stretch")
st.subheader("Results")
view = cache.bench_view(document)
st.dataframe(view.table, hide_index=True, width="stretch")
st.caption("Colour = kernel family (blue: SGEMM ladder, orange: beyond it, purple: tensor core, green: tile-width "
           "study), darker = later step; dashed = the cuBLAS reference of that panel.")  # fmt: skip
st.plotly_chart(view.tflops, key="tflops")
st.plotly_chart(view.pct_cublas, key="pct_cublas")
shape_grid.shape_grid_section(document, f"{source}:{document.created_utc}")

with st.expander("Save this run to the store (Review page)"):
    with st.form("save_bench"):
        label = st.text_input("Label", f"{dev.get('name', 'run')} {document.created_utc[:10]}")
        notes = st.text_area("Notes", "")
        if st.form_submit_button("Save run"):
            with ui.user_errors():
                run = bench_run(document, label=label, notes=notes)
                run_id = ui.run_store().save_run(run, actor=auth.current_identity())
                st.success(f"Saved as run #{run_id}.")

sweep.sweep_section(state.live_bench())
