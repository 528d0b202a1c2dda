"""Details: one launch as Nsight Compute's Details page shows it, every metric searchable, and two launches compared."""

from __future__ import annotations

import streamlit as st

from profiling.app import details_view as V
from profiling.app import state

st.title("Details")
sources = V.sources(state.frame().bundle)
if not sources:
    st.info("No report yet: upload an ncu report (CSV or .ncu-rep) on the Reports page.")
    st.stop()
# Every selection is bound to the URL (bind="query-params"), so a copied link opens this view.
reports = sources[st.selectbox("Data", list(sources), key="details_source", bind="query-params")]()
options = V.launch_options(reports)
labels = list(options)
if not labels:
    st.info("No launch matches these filters.")
    st.stop()
launch = st.selectbox("Launch", labels, key="details_launch", bind="query-params")
V.keep_tab_choices(labels)
tab_details, tab_metrics, tab_compare = st.tabs(
    ["Details", "Metrics", "Compare launches"], key="details_tab", bind="query-params"
)
# Only the open tab is drawn: a hidden tab's figures and tables cost the server as much as a shown one's.
if tab_details.open:
    with tab_details:
        V.details_section(options[launch][1])
if tab_metrics.open:
    with tab_metrics:
        shown = st.multiselect("Launches side by side", labels, default=labels[:8], key="metric_launches")
        V.browser_section(reports, shown or [launch])
if tab_compare.open:
    with tab_compare:
        left, right = st.columns(2)
        baseline = left.selectbox("Baseline", labels, key="cmp_baseline", bind="query-params")
        candidate = right.selectbox(
            "Candidate", labels, index=min(1, len(labels) - 1), key="cmp_candidate", bind="query-params"
        )
        V.compare_section(options, baseline, candidate)
