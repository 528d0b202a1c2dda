"""Reports: upload ncu CSV or .ncu-rep files; key metrics, findings, roofline, occupancy; compare kernels."""

from __future__ import annotations

import hashlib

import streamlit as st

from profiling import charts, usecases
from profiling.analysis.ceilings import ceilings_for
from profiling.app import auth, cache, permalink, state, tables, ui
from profiling.runs.convert import report_run

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
    for _name, error in ui.sync_uploads(files or []):
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

table = cache.figure(tables.key_metrics_table, reports)  # shared, read-only
st.subheader("Key metrics")
st.dataframe(
    cache.shown_table(tables.key_metrics_table, reports),
    hide_index=True,
    width="stretch",
    column_config={title: st.column_config.Column(help=text) for title, text in tables.KEY_TABLE_HELP.items()},
)

tabs = ["Roofline", "Findings", "Occupancy", "Compare side by side"]
tab_roof, tab_find, tab_occ, tab_cmp = permalink.tabs("tab", "reports_tab", tabs)
with tab_roof:
    if cache.figure(charts.report_roofline_points, reports).empty:
        st.info(
            "These reports lack FLOP counts or bytes per level, so there is no roofline (profile with --set quick or full)."
        )
    else:
        with ui.user_errors():
            ceilings = ceilings_for(None, reports[0][1])
            st.caption("One point per launch and memory level (marker shape); colour = kernel family. Ceilings "
                       "from the report's own clocks (ncu report) where it has them.")  # fmt: skip
            roofline = cache.report_roofline_view(reports, ceilings, "ncu report").figure
            st.plotly_chart(roofline, key="report_roofline")
with tab_find:
    findings = cache.shown_table(tables.findings_table, reports)
    if not len(findings):
        st.caption(
            "No rule findings: ncu writes them on the details page. Export it from the report with "
            "`ncu --import REPORT.ncu-rep --csv --page details > details.csv` and upload that file too."
        )
    else:
        st.dataframe(findings, hide_index=True, width="stretch")
with tab_occ:
    st.dataframe(cache.shown_table(tables.occupancy_table, reports), hide_index=True, width="stretch")
with tab_cmp:
    launches = list(table["launch"])
    # The key follows the launches shown: after an upload the choice starts again from the first two launches
    # instead of keeping the bundled ones, which the new list no longer has.
    key = "cmp-" + hashlib.sha1("\n".join(launches).encode()).hexdigest()[:12]
    permalink.bind("launches", key, launches, multi=True)
    chosen = st.multiselect("Launches to compare", launches, default=launches[: min(2, len(launches))], key=key)
    if chosen:
        st.dataframe(tables.compare_display(tables.compare_launches(table, chosen)), width="stretch")
permalink.publish("reports")

if uploaded:
    with st.expander("Save the uploaded reports to the store (Review page)"):
        if st.button("Save as runs"):
            with ui.user_errors():
                who = auth.current_identity()
                ids = [ui.run_store().save_run(report_run(rep, label=name, kind="upload"), actor=who)
                       for name, rep in uploaded]  # fmt: skip
                st.success(f"Saved as run(s) {', '.join(f'#{i}' for i in ids)}.")
