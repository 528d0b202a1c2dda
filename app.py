"""GEMM Lens, the Streamlit frame: page config, the sidebar (bundle picker, GPU queue) and the GPU probe, once
per run; then the page chosen in the sidebar runs from pages/ (`streamlit run app.py`)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from profiling.app import auth, cache, memory, permalink, state, ui, warm

PAGES = Path(__file__).parent / "pages"
ICON = "🔎"

navigation = st.navigation(
    [
        st.Page(PAGES / "0_Overview.py", title="Overview", icon=":material/home:", default=True),
        st.Page(PAGES / "1_Kernels.py", title="Kernels", icon=":material/code:"),
        st.Page(PAGES / "2_Benchmark.py", title="Benchmark", icon=":material/speed:"),
        st.Page(PAGES / "3_Profile.py", title="Profile", icon=":material/query_stats:"),
        st.Page(PAGES / "4_Roofline.py", title="Roofline", icon=":material/show_chart:"),
        st.Page(PAGES / "5_Occupancy.py", title="Occupancy", icon=":material/grid_view:"),
        st.Page(PAGES / "8_Why.py", title="Why", icon=":material/troubleshoot:"),
        st.Page(PAGES / "9_Indexing.py", title="Indexing", icon=":material/grid_on:"),
        st.Page(PAGES / "6_Reports.py", title="Reports", icon=":material/upload_file:"),
        st.Page(PAGES / "10_Details.py", title="Details", icon=":material/analytics:"),
        st.Page(PAGES / "7_Review.py", title="Review", icon=":material/history:"),
    ]
)
title = "GEMM Lens" if navigation.title == "Overview" else f"{navigation.title} · GEMM Lens"
st.set_page_config(page_title=title, page_icon=ICON, layout="wide")
# Once per server: after a minute with nobody connected, shared caches are emptied and freed memory goes back.
memory.start_trimming(on_idle=cache.clear_shared)
auth.sign_in_gate()  # with sign-in configured, stops here until someone with a role is signed in

# The frame and the page run inside the warm-up imports' gate: those imports wait until no script runs.
with warm.GATE.page():
    permalink.begin()  # the pages' links (query parameters): the sidebar's bundle is bound first
    bundle = ui.current_bundle()
    ui.queue_sidebar()
    device, reason, probing = ui.device_status()
    if probing:
        with st.sidebar:
            ui.rerun_when_probed()
    state.set_frame(state.Frame(bundle=bundle, device=device, no_gpu_reason=reason, probing=probing))
    if (page_file := state.deep_link()) is not None:
        st.switch_page(PAGES / page_file, query_params=permalink.current_params())  # the link's selection goes along
    navigation.run()
# After the page is drawn (a page that stops early leaves it to the next run): the other pages' imports, once.
warm.warm_imports()
