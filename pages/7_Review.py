"""Review: saved runs — list and filter, open, delete, baseline vs candidates, history, export and import."""

from __future__ import annotations

import streamlit as st

from profiling.app import admin, auth, bundles, cache, device_view, permalink, state, store_cache, tables, ui
from profiling.app.comments_view import comments_section
from profiling.app.review_view import (
    RUNS_SHOWN,
    comparison_choices,
    delete_run_button,
    listed_runs,
    review_comparison,
)
from profiling.app.saving import save_runs_button
from profiling.errors import GemmLensError
from profiling.runs.comparison import METRIC_BY_KEY, METRICS
from profiling.runs.export import MAX_IMPORT_MB, read_runs_upload

st.title("Review")
permalink.check("review")
bundle = state.frame().bundle
who = auth.current_identity()

try:
    summaries = listed_runs(store := ui.run_store())
except GemmLensError as exc:
    ui.show_error(exc)
    st.stop()
st.caption(
    f"Run store: {ui.safe_md(store.display_url)}"
    + (f" (read-only: {ui.safe_md(store.read_only_reason)})" if store.read_only else "")
)

with st.expander("Add runs: bundled measurements or an exported JSON"):
    if bundle is not None and bundle.bench_files:
        label = f"Save the bundled measurements ({bundle.name})"
        save_runs_button(store, label, lambda: bundles.bundled_runs(bundle), who, key="save_bundled")
    # No upload field for a role that may not save: its bytes would reach the server before any refusal.
    if auth.may("save"):
        imported = st.file_uploader(  # the browser refuses a bigger file itself; the server's limit is the reports'
            f"Import runs (JSON exported from this page, up to {MAX_IMPORT_MB:d} MB)",
            key="import_json",
            max_upload_size=MAX_IMPORT_MB,
        )
        if imported is not None:  # read when Import is clicked: a file that is not runs is a one-line error then
            read = lambda: read_runs_upload(who, imported.name, imported.size, imported.getvalue)  # noqa: E731
            save_runs_button(store, "Import", read, who, key="import_runs")
    else:
        st.caption("Importing runs needs the runner or admin role.")

if not summaries:
    st.info("No saved runs yet: save a benchmark, an uploaded report, or the bundled measurements above.")
    admin.admin_section(store, who)
    st.stop()

st.subheader("Runs")
FILTERS = {"device": "Device", "kernel": "Kernel", "label": "Label", "author": "Author", "since": "Since (YYYY-MM-DD)"}
filters = {
    name: column.text_input(FILTERS[name], key=permalink.bind(name, f"f_{name}"))
    for column, name in zip(st.columns(5), FILTERS, strict=True)
}
try:
    table, ids = store_cache.runs_shown(store, RUNS_SHOWN, **{k: v.strip() or None for k, v in filters.items()})
except GemmLensError as exc:
    ui.show_error(exc)
    table, ids = store_cache.runs_shown(store, RUNS_SHOWN)
st.dataframe(table, hide_index=True, width="stretch")
names = store_cache.run_names(store, RUNS_SHOWN)
if not ids:
    st.stop()

pair, kernels = store_cache.review_defaults(store, ids)  # default: the two runs with most kernel/size pairs in common
# Kept while their tabs are closed: the History choices and the By device runs.
ui.keep_choices({"hist_kernel": kernels, "hist_metric": METRIC_BY_KEY, device_view.RUNS_KEY: ids})
tab_cmp, tab_dev, tab_open, tab_hist = permalink.tabs(
    "tab", "review_tab", ["Compare", "By device", "Open / delete", "History"]
)
# Compare and Open stay drawn: By device starts from Compare's runs, a link carries their choices from any tab,
# and a comment being typed on Open survives a look at another tab.
with tab_cmp:
    base_id, cand_ids, threshold, cross_gpu = comparison_choices(ids, pair, names)
    if cand_ids:
        baseline, candidates = store_cache.read_run(store, base_id), store_cache.read_runs(store, cand_ids)
        review_comparison(baseline, candidates, threshold, cross_gpu)
# By device's table and figure, and History's (a panel per size), are built and sent only to someone looking.
if tab_dev.open:  # the Compare tab's runs by default: a mixed cluster run alone, or runs of different GPUs
    with tab_dev:
        chosen = device_view.chosen_runs(ids, [base_id, *cand_ids], names)
        device_view.by_device_section(store_cache.read_runs(store, chosen))
with tab_open:
    open_id = st.selectbox("Run", ids, format_func=names.get, key=permalink.bind_run("open", "open_run", ids))
    run = store_cache.read_run(store, open_id)
    info, results = cache.run_tables(run)
    st.dataframe(info, hide_index=True, width="stretch")
    st.dataframe(results, hide_index=True, width="stretch")
    delete_run_button(store, open_id, len(run.results), who)
    comments_section(store, run, who)
if tab_hist.open and kernels:
    with tab_hist:
        h1, h2 = st.columns(2)
        kernel = h1.selectbox("Kernel", kernels, key=permalink.bind("history_kernel", "hist_kernel", kernels))
        metric = h2.selectbox(
            "Metric",
            [m.key for m in METRICS],
            format_func=tables.metric_label,
            key=permalink.bind("metric", "hist_metric", METRIC_BY_KEY),
        )
        history = store_cache.history(store, ids, kernel, metric)
        st.plotly_chart(history.figure, key="history")
        st.dataframe(history.table, hide_index=True, width="stretch")

permalink.publish("review")
admin.admin_section(store, who)  # admins only: the trash and the audit log
