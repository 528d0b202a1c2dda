"""Reports: upload ncu CSV or .ncu-rep files; key metrics, findings, roofline, occupancy; compare kernels."""

from __future__ import annotations

import streamlit as st

from profiling import charts, usecases
from profiling.analysis.ceilings import ceilings_for
from profiling.app import auth, state, tables, ui
from profiling.runs.convert import report_run

st.title("Reports")
bundle = state.frame().bundle

files = st.file_uploader(
    f"Nsight Compute reports: CSV (any page: raw, details, summary) or .ncu-rep, up to {usecases.MAX_UPLOAD_MIB} MiB "
    f"each and {usecases.MAX_SESSION_UPLOAD_BYTES / 1e6:.0f} MB in all",
    accept_multiple_files=True,
    key="report_files",
)
for _name, error in ui.sync_uploads(files or []):
    ui.show_error(error)

uploaded = state.uploaded_reports()
if uploaded:
    reports = uploaded
    st.caption(f"{len(uploaded)} uploaded report(s): " + ", ".join(ui.safe_md(n) for n, _ in uploaded))
elif bundle is not None and bundle.ncu_groups:
    reports = ui.bundle_reports(bundle.name)
    st.caption("No upload yet: showing the bundled ncu capture.")
    ui.bundled_caption(bundle)
else:
    st.stop()

table = tables.key_metrics_table(reports)
st.subheader("Key metrics")
st.dataframe(table, hide_index=True, width="stretch")

tab_roof, tab_find, tab_occ, tab_cmp = st.tabs(["Roofline", "Findings", "Occupancy", "Compare side by side"])
with tab_roof:
    points = charts.report_roofline_points(reports)
    if points.empty:
        st.info(
            "These reports lack FLOP counts or bytes per level, so there is no roofline (profile with --set quick or full)."
        )
    else:
        with ui.user_errors():
            ceilings = ceilings_for(None, reports[0][1])
            st.plotly_chart(charts.roofline(points, ceilings, f"Roofline — {ceilings.device_name or 'ncu report'}"),
                            key="report_roofline")  # fmt: skip
with tab_find:
    findings = tables.findings_table(reports)
    if findings.empty:
        st.caption("No rule findings (export the details page to get them).")
    else:
        st.dataframe(findings, hide_index=True, width="stretch")
with tab_occ:
    st.dataframe(tables.occupancy_table(reports), hide_index=True, width="stretch")
with tab_cmp:
    launches = list(table["launch"])
    chosen = st.multiselect("Launches to compare", launches, default=launches[: min(2, len(launches))], key="cmp")
    if chosen:
        st.dataframe(tables.compare_launches(table, chosen), width="stretch")

if uploaded:
    with st.expander("Save the uploaded reports to the store (Review page)"):
        if st.button("Save as runs"):
            with ui.user_errors():
                who = auth.current_identity()
                ids = [ui.run_store().save_run(report_run(rep, label=name, kind="upload"), actor=who)
                       for name, rep in uploaded]  # fmt: skip
                st.success(f"Saved as run(s) {', '.join(f'#{i}' for i in ids)}.")
