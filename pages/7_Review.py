"""Review: saved runs — list and filter, open, delete, baseline vs candidates, history, export and import."""

from __future__ import annotations

import streamlit as st

from profiling.app import admin, auth, device_view, permalink, state, store_cache, tables, ui
from profiling.app.comments_view import COMMENT_DRAFT
from profiling.app.review_view import (
    RUNS_SHOWN,
    SECTION_KEY,
    SECTIONS,
    add_runs_section,
    comparison_choices,
    comparison_kept,
    kept_comparison_choices,
    listed_runs,
    open_section,
    review_comparison,
    run_filters,
)
from profiling.errors import GemmLensError
from profiling.runs.comparison import METRIC_BY_KEY, METRICS

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

add_runs_section(store, bundle, who)

if not summaries:
    st.info("No saved runs yet: save a benchmark, an uploaded report, or the bundled measurements above.")
    admin.admin_section(store, who)
    st.stop()

st.subheader("Runs")
filters = run_filters()
try:
    table, ids = store_cache.runs_shown(store, RUNS_SHOWN, **filters)
except GemmLensError as exc:
    ui.show_error(exc)
    table, ids = store_cache.runs_shown(store, RUNS_SHOWN)
st.dataframe(table, hide_index=True, width="stretch")
names = store_cache.run_names(store, RUNS_SHOWN)
if not ids:
    st.stop()

pair, kernels = store_cache.review_defaults(store, ids)  # default: the two runs with most kernel/size pairs in common
# Kept while their sections are not shown: Compare's choices, History's, the By device runs, the run open and its
# comment's draft.
ui.keep_choices(
    comparison_kept(ids)
    | {"hist_kernel": kernels, "hist_metric": METRIC_BY_KEY, device_view.RUNS_KEY: ids, "open_run": ids}
    | COMMENT_DRAFT
)
# One section drawn at a time, behind a one-message switcher (tabs sent a block per tab on every visit).
section = permalink.sections("tab", SECTION_KEY, SECTIONS)
if section == "Compare":
    base_id, cand_ids, threshold, cross_gpu = comparison_choices(ids, pair, names)
    if cand_ids:
        baseline, candidates = store_cache.read_run(store, base_id), store_cache.read_runs(store, cand_ids)
        review_comparison(baseline, candidates, threshold, cross_gpu)
else:  # Compare's choices stay in the link, and By device starts from its runs
    base_id, cand_ids = kept_comparison_choices(ids, pair)
if section == "By device":  # the Compare runs by default: a mixed cluster run alone, or runs of different GPUs
    chosen = device_view.chosen_runs(ids, [base_id, *cand_ids], names)
    device_view.by_device_section(store_cache.read_runs(store, chosen))
open_section(store, ids, names, who, shown=section == "Open / delete")
if section == "History" and kernels:
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
