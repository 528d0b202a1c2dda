"""Saving runs from the Review page: the store is asked first whether it already holds the same measurements."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from profiling.app import state, ui
from profiling.runs.duplicates import identical_runs
from profiling.runs.records import SavedRun
from profiling.runs.store import RunStore
from profiling.team.roles import Identity


def save_runs_button(
    store: RunStore, label: str, make_runs: Callable[[], Sequence[SavedRun]], actor: Identity | None, key: str
) -> None:
    """A button that saves runs, asking first when the store already holds runs with the same measurements
    (duplicates.identical_runs: the same file saved or imported twice): save only the new ones, all again, or none.
    `make_runs` is called on the click (a file that is not runs is then a one-line error)."""
    with ui.user_errors():
        _save_runs_asking(store, label, make_runs, actor, key)


def _save_runs_asking(
    store: RunStore, label: str, make_runs: Callable[[], Sequence[SavedRun]], actor: Identity | None, key: str
) -> None:
    if st.button(ui.safe_md(label), key=key):
        runs = make_runs()
        if not any(i is not None for i in identical_runs(store, runs)):
            _save_runs(store, runs, actor)
            return
        state.set_save_pending(key)
    if state.save_pending() != key:
        return
    runs = make_runs()
    same = identical_runs(store, runs)
    held = sorted({i for i in same if i is not None})
    new = [run for run, i in zip(runs, same, strict=True) if i is None]
    if not held:
        state.set_save_pending(None)
        return
    st.warning(
        f"The run store already holds {len(runs) - len(new)} of these {len(runs)} run(s) with the same measurements "
        f"(run {', '.join(f'#{i}' for i in held)}). Saving them again would list each twice."
    )
    only_new, again, cancel = st.columns(3)
    if new and only_new.button(f"Save the {len(new)} new run(s) only", key=f"{key}_new", type="primary"):
        state.set_save_pending(None)
        _save_runs(store, new, actor)
    if again.button("Save all again", key=f"{key}_again"):
        state.set_save_pending(None)
        _save_runs(store, runs, actor)
    if cancel.button("Save nothing", key=f"{key}_cancel"):
        state.set_save_pending(None)
        st.rerun()


def _save_runs(store: RunStore, runs: Sequence[SavedRun], actor: Identity | None) -> None:
    with ui.user_errors():
        ids = store.import_runs(runs, actor=actor)
        st.toast(f"Saved run(s) {', '.join(f'#{i}' for i in ids)}.")
        state.set_save_pending(None)
        st.rerun()
