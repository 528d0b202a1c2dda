"""The Review page's sections: adding runs, the runs listed and their filters, baseline against candidates (the
side-by-side table, the roofline, the comparison figures and the downloads) and the Open tab with its delete button
and comments. Figures come from profiling.charts.review through
profiling.app.cache; the HTML export is profiling.charts.review_html."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from profiling.analysis.ceilings import recorded_device_ceilings
from profiling.app import auth, bundles, cache, permalink, state, store_cache, ui
from profiling.app.bundles import Bundle
from profiling.app.comments_view import comments_section
from profiling.app.saving import save_runs_button
from profiling.runs.comparison import DEFAULT_THRESHOLD_PCT
from profiling.runs.export import MAX_IMPORT_MB, read_runs_upload, to_csv
from profiling.runs.records import SavedRun
from profiling.team.roles import Identity

if TYPE_CHECKING:
    from profiling.runs.store import RunStore


RUNS_SHOWN = 500
"""The newest runs the Review page lists (and filters); older ones stay in the store, out of the page's way."""

FILTERS = {"device": "Device", "kernel": "Kernel", "label": "Label", "author": "Author", "since": "Since (YYYY-MM-DD)"}
"""The run list's filters: link parameter -> label (the widget key is f_<parameter>)."""

FILTERS_KEY = "filters_open"

TIME_CHARTS = "Time charts: median time per kernel and size, and each candidate's change"
"""The label of Compare's expander holding the comparison figures (drawn into only while open)."""

SECTIONS = ("Compare", "By device", "Open / delete", "History")
"""The page's sections, one shown at a time (permalink.sections, the link's `tab`); Compare first and by default."""

SECTION_KEY = "review_tab"


def run_filters() -> dict[str, str | None]:
    """The run list's filters (parameter -> text, None when empty), in an expander drawn into only while open: five
    inputs in columns were eleven messages on every visit. Their values, and their place in the link, are kept
    while it is closed; a link that sets one opens it, and a closed one with filters set says which under it."""
    keys = {name: permalink.bind(name, f"f_{name}", kept=True) for name in FILTERS}
    ui.keep_choices(dict.fromkeys(keys.values()))
    values = {name: str(st.session_state.get(key, "")).strip() for name, key in keys.items()}
    if FILTERS_KEY not in st.session_state and any(values.values()):
        st.session_state[FILTERS_KEY] = True
    box = ui.lazy_expander("Filter runs", key=FILTERS_KEY)
    if box is None:
        if any(values.values()):
            shown = ", ".join(f"{FILTERS[n].split(' (')[0].lower()} “{v}”" for n, v in values.items() if v)
            st.caption(f"Filtered by {ui.safe_md(shown)}.")
    else:
        with box:
            for column, (name, key) in zip(st.columns(len(keys)), keys.items(), strict=True):
                values[name] = column.text_input(FILTERS[name], key=key).strip()
    return {name: value or None for name, value in values.items()}


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
    device), the time figures in an expander drawn into only while open, and the downloads (all cached by the runs'
    content, the exports built on click)."""
    candidates = list(candidates)
    ceilings = recorded_device_ceilings(baseline.device, baseline.device_name)
    view = cache.review_view(baseline, candidates, threshold_pct, cross_gpu, ceilings)
    if view.side.empty:
        st.info("The baseline and candidates have no kernel and size in common.")
    else:
        notes = [
            "Time verdict: faster or slower when the 95 % bootstrap interval of the median-time ratio (Time interval) "
            "excludes no change and passes the threshold; same within it; noisy when too wide to decide; no verdict "
            "(medians only) when a run saved no per-launch times. Δ% "
            "relative to the baseline; the HTML report colours every metric's change."
        ]
        for label, guard in view.guards:
            if guard.differences:
                line = f"{ui.safe_md(label)}: {ui.safe_md(guard.label())}"
                if guard.comparable:
                    notes.append(line)
                else:
                    st.warning(line)
        if view.note:
            notes.append(f"Time, every row: {ui.safe_md(view.note)}.")
        st.caption("\n\n".join(notes))  # one element: each is a message the server builds and sends
        st.dataframe(view.table, hide_index=True, width="stretch", key="side_by_side")
    label = f"Not compared: {len(view.unmatched)} kernel/size pair(s) in one run only"
    if len(view.unmatched) and (box := ui.lazy_expander(label, key="unmatched_open")) is not None:
        box.dataframe(view.unmatched, hide_index=True, width="stretch")
    st.plotly_chart(view.roofline, key="review_roofline")
    # The time charts repeat the table's times as bars (a bar a kernel and size and run): two figures' specs built,
    # hashed and sent on every visit of Compare, for a picture some readers open. One click away, and in the export.
    if view.figures and (box := ui.lazy_expander(TIME_CHARTS, key="time_charts_open")) is not None:
        for i, fig in enumerate(view.figures):
            box.plotly_chart(fig, key=f"cmp_fig{i}")
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
    row = st.container(horizontal=True)  # one block for the row: columns were a block each
    ids = [r.id for r in (baseline, *candidates) if r.id is not None]
    comments = store_cache.comments(ui.run_store(), ids) if ids else []
    html_doc, runs_json = cache.review_exports(baseline, candidates, comparison, threshold_pct, roofline, comments)
    row.download_button("Export HTML report", html_doc, "gemmlens-review.html", "text/html")
    row.download_button("Export comparison CSV", lambda: to_csv(side), "gemmlens-comparison.csv", "text/csv")
    row.download_button("Export runs JSON", runs_json, "gemmlens-runs.json", "application/json")


def add_runs_section(store: RunStore, bundle: Bundle | None, who: Identity | None) -> None:
    """The expander that saves the sidebar's bundled measurements or imports exported runs, drawn into only while
    open, or while it holds a picked file or a save's question, which a run that drew nothing would drop."""
    holding = st.session_state.get("import_json") is not None or state.save_pending() is not None
    box = ui.lazy_expander("Add runs: bundled measurements or an exported JSON", "add_runs", holding)
    if box is None:
        return
    with box:
        if bundle is not None and bundle.bench_files:
            label = f"Save the bundled measurements ({bundle.name})"
            save_runs_button(store, label, lambda: bundles.bundled_runs(bundle), who, key="save_bundled")
        # No upload field for a role that may not save: its bytes would reach the server before any refusal.
        if not auth.may("save"):
            st.caption("Importing runs needs the runner or admin role.")
            return
        imported = st.file_uploader(  # the browser refuses a bigger file itself; the server's limit is the reports'
            f"Import runs (JSON exported from this page, up to {MAX_IMPORT_MB:d} MB)",
            key="import_json",
            max_upload_size=MAX_IMPORT_MB,
        )
        if imported is not None:  # read when Import is clicked: a file that is not runs is a one-line error then
            read = lambda: read_runs_upload(who, imported.name, imported.size, imported.getvalue)  # noqa: E731
            save_runs_button(store, "Import", read, who, key="import_runs")


def open_section(store: RunStore, ids: list[int], names: dict[int, str], who: Identity | None, shown: bool) -> None:
    """The Open / delete section: a run's facts and results, its delete button and its comments, drawn only while
    `shown`. The run chosen stays in the link and in the session while it is not."""
    key = permalink.bind_run("open", "open_run", ids, kept=not shown)
    if not shown:
        return
    open_id = st.selectbox("Run", ids, format_func=names.get, key=key)
    run = store_cache.read_run(store, open_id)
    info, results = cache.run_tables(run)
    st.dataframe(info, hide_index=True, width="stretch")
    st.dataframe(results, hide_index=True, width="stretch")
    delete_run_button(store, open_id, len(run.results), who)
    comments_section(store, run, who)


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


def _default_pair(ids: list[int], pair: tuple[int, int] | None, base_id: int | None) -> tuple[int, list[int]]:
    """The baseline (`base_id` when still listed, else the default pair's first, else the oldest shown) and the
    candidates a Compare section drawn afresh offers by default (the pair's second, else the newest other run)."""
    if base_id not in ids:
        base_id = pair[0] if pair else ids[-1]
    others = [i for i in ids if i != base_id]
    return base_id, [pair[1]] if pair and pair[0] == base_id and pair[1] in others else others[:1]


def comparison_choices(
    ids: list[int], pair: tuple[int, int] | None, names: dict[int, str]
) -> tuple[int, list[int], float, bool]:
    """The Compare section's choices: the baseline run (the default pair's first, else the oldest shown), the
    candidates (the pair's second), the practical threshold in % and whether runs of different GPU models may be
    compared; each bound to the page's link (permalink)."""
    # Baseline and candidates each as wide as the page: run labels are long, and a narrow box cut them off.
    c1, c3 = st.columns([3, 1])
    base_at = ids.index(_default_pair(ids, pair, None)[0])
    permalink.bind_run("baseline", "baseline", ids)
    base_id = c1.selectbox("Baseline", ids, index=base_at, format_func=names.get, key="baseline")
    others = [i for i in ids if i != base_id]
    first = _default_pair(ids, pair, base_id)[1]
    permalink.bind_run("candidates", "candidates", others, multi=True)
    cand_ids = c1.multiselect("Candidates", others, default=first, format_func=names.get, key="candidates")
    _bind_threshold_and_gpu()
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
        key="cross_gpu",
        help="Compare runs of different GPU models; the verdicts are labelled cross-GPU.",
    )
    return base_id, cand_ids, threshold, cross_gpu


def _bind_threshold_and_gpu(kept: bool = False) -> None:
    """Bind Compare's practical threshold and its across-GPU switch to the link (`kept`: while not drawn)."""
    permalink.bind("threshold", "threshold", parse=permalink.parse_percent, default=DEFAULT_THRESHOLD_PCT, kept=kept)
    permalink.bind("cross_gpu", "cross_gpu", parse=permalink.parse_bool, default=False, kept=kept)


def comparison_kept(ids: list[int]) -> dict[str, list[int] | None]:
    """Compare's widget keys and the values each may keep (for ui.keep_choices) through runs that show another
    section: listed runs, the candidates without the baseline (a candidate made baseline leaves them)."""
    base = st.session_state.get("baseline")
    return {"baseline": ids, "candidates": [i for i in ids if i != base], "threshold": None, "cross_gpu": None}


def kept_comparison_choices(ids: list[int], pair: tuple[int, int] | None) -> tuple[int, list[int]]:
    """While another section is shown: the baseline and candidates Compare holds (or would show by default), read
    without drawing its widgets, for By device to start from. Its four choices stay in the link (bound kept) and,
    kept by the page (comparison_kept), in the session; a link's values reach them as when drawn."""
    permalink.bind_run("baseline", "baseline", ids, kept=True)
    base_id, first = _default_pair(ids, pair, st.session_state.get("baseline"))
    others = [i for i in ids if i != base_id]
    permalink.bind_run("candidates", "candidates", others, multi=True, kept=True)
    _bind_threshold_and_gpu(kept=True)
    held = st.session_state.get("candidates")
    return base_id, [i for i in held if i in others] if held is not None else first
