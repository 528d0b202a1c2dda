"""Reads of the run store cached per server, keyed by the store's URL and revision (RunStore.revision: the newest
audit entry, which every write adds). A visit then costs one small query; the runs, the list and the result table
are read again only after someone changes the store, in this process or another one on the same database.

Runs are kept as shared objects (st.cache_resource): SavedRun is frozen, and keeping one object per run lets the
figure and table caches key it by identity instead of hashing its whole content on every visit. The lists, frames
and defaults read from the store are shared too, and read-only: a copy out of st.cache_data is unpickled on every
call, and the Review page reads several per visit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from profiling import charts
from profiling.app import cache, table_format, tables
from profiling.app.cache import TTL_S
from profiling.app.table_format import arrow
from profiling.runs import review
from profiling.runs.comparison import METRIC_BY_KEY
from profiling.runs.records import SavedRun

if TYPE_CHECKING:  # SQLAlchemy loads with the first page that opens the store, not with every first visit
    from profiling.runs.store import RunStore

RUN_ENTRIES = 256
LIST_ENTRIES = 32


_REVISION = "store_cache_revision"
"""Session-state key of (this page run's token, store URL, revision): the revision is read once per page run."""


def _this_run() -> object | None:
    """An object that is new at the start of every script run of this session and lives through it (Streamlit
    resets the run context's cursor dict then); None outside a run. Held in the memo, it cannot be freed and its
    address reused by a later run's, so `is` tells runs apart."""
    ctx = get_script_run_ctx()
    return getattr(ctx, "cursors", None) if ctx is not None else None


def store_key(store: RunStore) -> tuple[str, int]:
    """(the store's URL, its revision), the revision read once per page run: a page reads the store through several
    caches, and each query costs more than the cached read it guards. Every write in the app reruns the page, so a
    run never reads around its own write; a write elsewhere shows on the next run, as before."""
    url = str(store.engine.url)
    run = _this_run()
    held = st.session_state.get(_REVISION) if run is not None else None
    if held is not None and held[0] is run and held[1] == url:
        return url, held[2]
    revision = store.revision()
    if run is not None:
        st.session_state[_REVISION] = (run, url, revision)
    return url, revision


_key = store_key


@cache.resource(ttl=TTL_S, max_entries=RUN_ENTRIES, show_spinner=False)
def _run(url: str, revision: int, run_id: int, _store: RunStore) -> SavedRun:
    return _store.read_run(run_id)


@cache.resource(ttl=TTL_S, max_entries=LIST_ENTRIES, show_spinner=False)
def _listed(url: str, revision: int, limit: int, _store: RunStore) -> tuple[list[dict[str, Any]], int | None]:
    summaries = _store.list_runs(limit=limit)
    return summaries, (_store.count_runs() if len(summaries) == limit else None)


@st.cache_data(ttl=TTL_S, max_entries=LIST_ENTRIES, show_spinner=False)
def _results(url: str, revision: int, run_ids: tuple[int, ...], _store: RunStore) -> pd.DataFrame:
    return review.rows_frame(_store.result_rows(run_ids=list(run_ids)))


def read_run(store: RunStore, run_id: int) -> SavedRun:
    """store.read_run, cached until the store changes."""
    return _run(*_key(store), int(run_id), store)


def read_runs(store: RunStore, run_ids: Sequence[int]) -> list[SavedRun]:
    """store.read_runs, cached run by run until the store changes."""
    url, revision = _key(store)
    return [_run(url, revision, int(i), store) for i in run_ids]


def listed_runs(store: RunStore, limit: int) -> tuple[list[dict[str, Any]], int | None]:
    """(the newest `limit` run summaries, the total when there are more), cached until the store changes (shared,
    read-only)."""
    return _listed(*_key(store), limit, store)


def results_frame(store: RunStore, run_ids: Sequence[int]) -> pd.DataFrame:
    """review.rows_frame of the runs' result rows, cached until the store changes."""
    return _results(*_key(store), tuple(int(i) for i in run_ids), store)


@cache.resource(ttl=TTL_S, max_entries=LIST_ENTRIES, show_spinner=False)
def _comments(url: str, revision: int, run_ids: tuple[int, ...], _store: RunStore) -> list[dict[str, Any]]:
    return _store.comments(list(run_ids))


def comments(store: RunStore, run_ids: Sequence[int]) -> list[dict[str, Any]]:
    """store.comments, cached until the store changes (every comment writes an audit entry; shared, read-only)."""
    return _comments(*_key(store), tuple(int(i) for i in run_ids), store)


# ---------------------------------------------------------------------------------------------
# The Review page's views of the store: the same for every visitor until the store changes
# ---------------------------------------------------------------------------------------------


@cache.resource(ttl=TTL_S, max_entries=LIST_ENTRIES, show_spinner=False)
def _runs(url: str, revision: int, limit: int, _store: RunStore) -> pd.DataFrame:
    return review.runs_frame(_listed(url, revision, limit, _store)[0])


@cache.resource(ttl=TTL_S, max_entries=LIST_ENTRIES, show_spinner=False)
def _names(url: str, revision: int, limit: int, _store: RunStore) -> dict[int, str]:
    return {int(r.id): f"#{r.id} {r.label}" for r in _runs(url, revision, limit, _store).itertuples()}


@cache.shared_cache
def _runs_shown(
    url: str, revision: int, limit: int, filters: tuple[tuple[str, str | None], ...], _store: RunStore
) -> tuple[Any, list[int]]:
    shown = review.filter_runs(_runs(url, revision, limit, _store), **dict(filters))
    return arrow(table_format.display(tables.runs_table(shown))), [int(i) for i in shown["id"]]


def runs_frame(store: RunStore, limit: int) -> pd.DataFrame:
    """review.runs_frame of the newest `limit` runs (listed_runs), cached until the store changes (shared,
    read-only)."""
    return _runs(*_key(store), limit, store)


def run_names(store: RunStore, limit: int) -> dict[int, str]:
    """Run id -> '#id label' of the newest `limit` runs, as the Review page's run pickers show them, cached until
    the store changes (shared, read-only)."""
    return _names(*_key(store), limit, store)


def runs_shown(store: RunStore, limit: int, **filters: str | None) -> tuple[Any, list[int]]:
    """(the runs table as drawn (an Arrow table, read-only), the shown run ids) of the newest `limit` runs passing review.filter_runs(**filters)
    (whose GemmLensError on a bad filter it raises), cached until the store changes."""
    return _runs_shown(*_key(store), limit, tuple(sorted(filters.items())), store)


def _ids_key(run_ids: tuple[int, ...]) -> str:
    """Run ids as one short text for a cache key: Streamlit hashes a tuple element by element (hundreds of runs)."""
    return ",".join(map(str, run_ids))


@cache.resource(ttl=TTL_S, max_entries=LIST_ENTRIES, show_spinner=False)
def _compared_defaults(
    url: str, revision: int, ids: str, _run_ids: tuple[int, ...], _store: RunStore
) -> tuple[tuple[int, int] | None, list[str]]:
    # Which kernels and sizes each run holds is all the pair needs: reading the results' values (rows_frame) cost
    # ten times more, most of a fresh server's first Review visit.
    keys = review.keys_frame(_store.result_keys(_run_ids))
    return tables.comparable_pair(keys), sorted(keys["kernel"].dropna().unique())


def review_defaults(store: RunStore, run_ids: Sequence[int]) -> tuple[tuple[int, int] | None, list[str]]:
    """(tables.comparable_pair of the runs' results, their kernels sorted): the Review page's default comparison and
    its History tab's kernels, cached until the store changes (read from RunStore.result_keys, not the results; shared, read-only)."""
    ids = tuple(int(i) for i in run_ids)
    return _compared_defaults(*_key(store), _ids_key(ids), ids, store)


@dataclass(frozen=True)
class History:
    """One kernel's metric across the shown runs as the History tab draws it (shared by every session, read-only)."""

    figure: go.Figure
    table: Any
    """The history table as drawn (table_format.arrow)."""


@cache.shared_cache
def _history(url: str, revision: int, run_ids: tuple[int, ...], kernel: str, metric: str, _store: RunStore) -> History:
    history = review.kernel_history(_results(url, revision, run_ids, _store), kernel, metric=metric)
    table = arrow(table_format.display(tables.history_table(history, METRIC_BY_KEY[metric].label)))
    return History(figure=charts.history_figure(history, kernel, metric), table=table)


def history(store: RunStore, run_ids: Sequence[int], kernel: str, metric: str) -> History:
    """review.kernel_history of `kernel`'s `metric` in the runs' results, as figure and table, cached until the
    store changes."""
    return _history(*_key(store), tuple(int(i) for i in run_ids), kernel, metric, store)
