"""The Review page's sections: the runs listed, baseline against candidates (the side-by-side table, the roofline,
the comparison figures and the downloads) and the delete button. Figures come from profiling.charts.review through
profiling.app.cache; the HTML export is profiling.charts.review_html."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from profiling.analysis.ceilings import recorded_device_ceilings
from profiling.app import cache, permalink, state, store_cache, ui
from profiling.runs.comparison import DEFAULT_THRESHOLD_PCT
from profiling.runs.export import to_csv
from profiling.runs.records import SavedRun
from profiling.team.roles import Identity

if TYPE_CHECKING:
    from profiling.runs.store import RunStore


RUNS_SHOWN = 500
"""The newest runs the Review page lists (and filters); older ones stay in the store, out of the page's way."""


def listed_runs(store: RunStore) -> list[dict[str, Any]]:
    """Summaries of the newest RUNS_SHOWN runs (RunStore.list_runs, one page), with a caption when there are more."""
    summaries, total = store_cache.listed_runs(store, RUNS_SHOWN)
    if total is not None and total > RUNS_SHOWN:
        st.caption(f"Listing the newest {RUNS_SHOWN} of {total} saved runs.")
    return summaries


def review_comparison(
    baseline: SavedRun, candidates: Sequence[SavedRun], threshold_pct: float, cross_gpu: bool = False
) -> None:
    """Baseline vs candidates: the side-by-side table coloured by verdict, the roofline (ceilings of the baseline's
    device), the time figures, and the downloads (all cached by the runs' content, the exports built on click)."""
    candidates = list(candidates)
    ceilings = recorded_device_ceilings(baseline.device, baseline.device_name)
    view = cache.review_view(baseline, candidates, threshold_pct, cross_gpu, ceilings)
    if view.side.empty:
        st.info("The baseline and candidates have no kernel and size in common.")
    else:
        st.caption(
            "Time verdict: faster or slower when the 95 % bootstrap interval of the median-time ratio (Time interval) "
            "excludes no change and passes the threshold; same within it; noisy when too wide to decide; no verdict "
            "(medians only) when a run saved no per-launch times. Δ% "
            "relative to the baseline; the HTML report colours every metric's change."
        )
        for label, guard in view.guards:
            if guard.differences:
                (st.warning if not guard.comparable else st.caption)(
                    f"{ui.safe_md(label)}: {ui.safe_md(guard.label())}"
                )
        if view.note:
            st.caption(f"Time, every row: {ui.safe_md(view.note)}.")
        st.dataframe(view.table, hide_index=True, width="stretch", key="side_by_side")
    if len(view.unmatched):
        with st.expander(f"Not compared: {len(view.unmatched)} kernel/size pair(s) in one run only"):
            st.dataframe(view.unmatched, hide_index=True, width="stretch")
    st.plotly_chart(view.roofline, key="review_roofline")
    for i, fig in enumerate(view.figures):
        st.plotly_chart(fig, key=f"cmp_fig{i}")
    review_downloads(baseline, candidates, view.comparison, view.side, threshold_pct, view.roofline)


def review_downloads(
    baseline: SavedRun,
    candidates: Sequence[SavedRun],
    comparison: pd.DataFrame,
    side: pd.DataFrame,
    threshold_pct: float,
    roofline: go.Figure,
) -> None:
    """Download buttons for a comparison: the self-contained HTML report, the side-by-side table (CSV) and the
    runs (JSON); each file is built when its button is clicked, not on every visit."""
    e1, e2, e3 = st.columns(3)
    ids = [r.id for r in (baseline, *candidates) if r.id is not None]
    comments = store_cache.comments(ui.run_store(), ids) if ids else []
    html_doc, runs_json = cache.review_exports(baseline, candidates, comparison, threshold_pct, roofline, comments)
    e1.download_button("Export HTML report", html_doc, "gemmlens-review.html", "text/html")
    e2.download_button("Export comparison CSV", lambda: to_csv(side), "gemmlens-comparison.csv", "text/csv")
    e3.download_button("Export runs JSON", runs_json, "gemmlens-runs.json", "application/json")


def delete_run_button(store: RunStore, run_id: int, n_results: int, actor: Identity | None) -> None:
    """For those who may delete: move a saved run to the trash, after the reader confirms with a second button."""
    if actor is None or not actor.may("delete"):
        return
    if st.button(f"Delete run #{run_id}", key="delete"):
        state.set_delete_pending(run_id)
    if state.delete_pending() != run_id:
        return
    st.warning(f"Move run #{run_id} and its {n_results} results to the trash? An admin can restore it from there.")
    yes, no = st.columns(2)
    if yes.button("Yes, delete", key="delete_yes", type="primary"):
        store.delete_run(run_id, actor=actor)
        state.set_delete_pending(None)
        st.rerun()
    if no.button("Keep it", key="delete_no"):
        state.set_delete_pending(None)
        st.rerun()


def comparison_choices(
    ids: list[int], pair: tuple[int, int] | None, names: dict[int, str]
) -> tuple[int, list[int], float, bool]:
    """The Compare tab's choices: the baseline run (the default pair's first, else the oldest shown), the candidates
    (the pair's second), the practical threshold in % and whether runs of different GPU models may be compared;
    each bound to the page's link (permalink)."""
    # Baseline and candidates each as wide as the page: run labels are long, and a narrow box cut them off.
    c1, c3 = st.columns([3, 1])
    base_at = ids.index(pair[0]) if pair else len(ids) - 1
    permalink.bind_run("baseline", "baseline", ids)
    base_id = c1.selectbox("Baseline", ids, index=base_at, format_func=names.get, key="baseline")
    others = [i for i in ids if i != base_id]
    first = [pair[1]] if pair and pair[0] == base_id and pair[1] in others else others[:1]
    permalink.bind_run("candidates", "candidates", others, multi=True)
    cand_ids = c1.multiselect("Candidates", others, default=first, format_func=names.get, key="candidates")
    permalink.bind("threshold", "threshold", parse=permalink.parse_percent, default=DEFAULT_THRESHOLD_PCT)
    threshold = c3.number_input(
        "Practical threshold (%)",
        0.0,
        100.0,
        DEFAULT_THRESHOLD_PCT,
        key="threshold",
        help="A change smaller than this is 'same' even when the interval shows it is real.",
    )
    cross_gpu = c3.checkbox(
        "Across GPU models",
        key=permalink.bind("cross_gpu", "cross_gpu", parse=permalink.parse_bool, default=False),
        help="Compare runs of different GPU models; the verdicts are labelled cross-GPU.",
    )
    return base_id, cand_ids, threshold, cross_gpu
