"""Reports: upload ncu CSV or .ncu-rep files; key metrics, findings, roofline, occupancy; compare kernels."""

from __future__ import annotations

import streamlit as st

from profiling import usecases
from profiling.app import permalink, reports_view, state, ui

st.title("Reports")
permalink.check("reports")
bundle = state.frame().bundle

files = st.file_uploader(
    f"Nsight Compute reports: CSV (any page: raw, details, summary, source), ncu's text output, or .ncu-rep, up to "
    f"{usecases.MAX_UPLOAD_MIB} MiB each and {usecases.MAX_SESSION_UPLOAD_BYTES / 1e6:.0f} MB in all",
    accept_multiple_files=True,
    key="report_files",
    on_change=state.mark_report_files_changed,
)
# Streamlit empties the uploader when the reader visits another page; the uploads stay until the reader changes
# the files here (removing the last one clears them).
if st.session_state.pop(state.REPORT_FILES_CHANGED, False) or files:
    for _name, error in reports_view.sync_uploads(files or []):
        ui.show_error(error)

uploaded, merged = ui.uploaded_reports()
for _name, _page in state.uploaded_source_pages():
    st.info(f"{ui.safe_md(_name)} is a source page ({len(_page.kernels)} kernel sections): see the Why page.")
if uploaded:
    reports = uploaded
    st.caption(f"{len(uploaded)} uploaded report(s): " + ", ".join(ui.safe_md(n) for n, _ in uploaded))
    for note in merged:
        st.info(ui.safe_md(note))
elif bundle is not None and bundle.ncu_groups:
    reports = ui.bundle_reports(bundle.name)
    st.caption("No upload yet: showing the bundled ncu capture.")
    ui.bundled_caption(bundle)
else:
    ui.no_capture_notice(bundle)
    st.stop()

table = reports_view.key_metrics_section(reports)
tabs = ["Roofline", "Findings", "Occupancy", "Compare side by side"]
tab_roof, tab_find, tab_occ, tab_cmp = permalink.tabs("tab", "reports_tab", tabs)
# The roofline, the findings and the occupancy table are built and sent only to someone looking. Compare stays
# drawn: a link carries its launches from any tab.
if tab_roof.open:
    with tab_roof:
        reports_view.roofline_tab(reports)
if tab_find.open:
    with tab_find:
        reports_view.findings_tab(reports)
if tab_occ.open:
    with tab_occ:
        reports_view.occupancy_tab(reports)
with tab_cmp:
    reports_view.compare_tab(table, reports)
permalink.publish("reports")

if uploaded:
    reports_view.save_section(uploaded)
