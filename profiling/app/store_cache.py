"""Reads of the run store cached per server, keyed by the store's URL and revision (RunStore.revision: the newest
audit entry, which every write adds). A visit then costs one small query; the runs, the list and the result table
are read again only after someone changes the store, in this process or another one on the same database.

Runs are kept as shared objects (st.cache_resource): SavedRun is frozen, and keeping one object per run lets the
figure and table caches key it by identity instead of hashing its whole content on every visit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from profiling.app.cache import TTL_S
from profiling.runs import review
from profiling.runs.records import SavedRun

if TYPE_CHECKING:  # SQLAlchemy loads with the first page that opens the store, not with every first visit
    from profiling.runs.store import RunStore

RUN_ENTRIES = 256
LIST_ENTRIES = 32


def _key(store: RunStore) -> tuple[str, int]:
    return str(store.engine.url), store.revision()


@st.cache_resource(ttl=TTL_S, max_entries=RUN_ENTRIES, show_spinner=False)
def _run(url: str, revision: int, run_id: int, _store: RunStore) -> SavedRun:
    return _store.read_run(run_id)


@st.cache_data(ttl=TTL_S, max_entries=LIST_ENTRIES, show_spinner=False)
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
    """(the newest `limit` run summaries, the total when there are more), cached until the store changes."""
    return _listed(*_key(store), limit, store)


def results_frame(store: RunStore, run_ids: Sequence[int]) -> pd.DataFrame:
    """review.rows_frame of the runs' result rows, cached until the store changes."""
    return _results(*_key(store), tuple(int(i) for i in run_ids), store)


@st.cache_data(ttl=TTL_S, max_entries=LIST_ENTRIES, show_spinner=False)
def _comments(url: str, revision: int, run_ids: tuple[int, ...], _store: RunStore) -> list[dict[str, Any]]:
    return _store.comments(list(run_ids))


def comments(store: RunStore, run_ids: Sequence[int]) -> list[dict[str, Any]]:
    """store.comments, cached until the store changes (every comment writes an audit entry)."""
    return _comments(*_key(store), tuple(int(i) for i in run_ids), store)
