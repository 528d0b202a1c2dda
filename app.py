"""GEMM Lens, the Streamlit frame: page config, the sidebar (bundle picker, GPU queue) and the GPU probe, once
per run; then the page chosen in the sidebar runs from pages/ (`streamlit run app.py`)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from profiling.app import auth, cache, memory, permalink, state, ui, warm

PAGES = Path(__file__).parent / "pages"
ICON = "🔎"

# The pages in the sidebar's order (file, title, icon); the first is the default. A comment, not a docstring: Streamlit
# draws a bare string of the main script as Markdown.
PAGE_LIST = (
    ("0_Overview.py", "Overview", ":material/home:"),
    ("1_Kernels.py", "Kernels", ":material/code:"),
    ("2_Benchmark.py", "Benchmark", ":material/speed:"),
    ("3_Profile.py", "Profile", ":material/query_stats:"),
    ("4_Roofline.py", "Roofline", ":material/show_chart:"),
    ("5_Occupancy.py", "Occupancy", ":material/grid_view:"),
    ("8_Why.py", "Why", ":material/troubleshoot:"),
    ("9_Indexing.py", "Indexing", ":material/grid_on:"),
    ("6_Reports.py", "Reports", ":material/upload_file:"),
    ("10_Details.py", "Details", ":material/analytics:"),
    ("7_Review.py", "Review", ":material/history:"),
)


navigation = st.navigation(ui.pages(PAGES, PAGE_LIST))
title = "GEMM Lens" if navigation.title == "Overview" else f"{navigation.title} · GEMM Lens"
st.set_page_config(page_title=title, page_icon=ICON, layout="wide")
# Once per server: the modules imported so far are frozen out of Python's full collections (already done where
# profiling.app.serve started it); after a minute with nobody connected, shared caches are emptied and freed
# memory goes back.
memory.tune_collector()
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
