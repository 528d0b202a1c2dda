"""The Review page's admin section: the trash (restore a run, purge the trash after a confirmation) and the
audit log. Only admins see it; the run store checks the role again on every action."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from profiling.app import cache, state, store_cache, ui
from profiling.app.table_format import arrow
from profiling.app.text import md_escape
from profiling.runs.store import RunStore
from profiling.team.roles import Identity

AUDIT_ROWS = 200
"""The newest audit entries shown (`python -m profiling audit` prints any number)."""


def admin_section(store: RunStore, actor: Identity | None) -> None:
    """An expander with the trash and the audit log, for an actor who may delete; nothing for anyone else."""
    if actor is None or not actor.may("delete"):
        return
    for warning in store.warnings:  # the database role could rewrite the audit log: the deployment needs fixing
        st.warning(md_escape(warning))
    trash, log = _admin_view(*store_cache.store_key(store), actor.role, store, actor)
    ui.keep_choices({"trash_run": [t["id"] for t in trash]})  # the run picked in the trash, while the box is closed
    box = ui.lazy_expander(f"Admin: trash ({len(trash)}) and audit log", key="admin_open")
    if box is None:  # the trash and the audit log are built and sent only while someone has them open
        return
    with box:
        st.subheader("Trash")
        if trash:
            _trash(store, actor, trash)
        else:
            st.caption("The trash is empty: deleted runs wait here until an admin restores or purges them.")
        st.subheader("Audit log")
        if log is not None:
            st.table(log, hide_index=True)
        else:
            st.caption("Nothing saved, imported, deleted, restored or purged yet.")


@cache.shared_cache
def _admin_view(url: str, revision: int, role: str, _store: RunStore, _actor: Identity) -> tuple[list[dict], Any]:
    """(the trash, the newest AUDIT_ROWS audit entries as drawn or None when there are none), read once per store
    revision and role: the store checks the role on a miss, and a role's rights are the same for everyone in it."""
    log = _store.audit_log(AUDIT_ROWS, actor=_actor)
    # A static table (plain text in the page, searchable and printable); st.table renders Markdown, so every cell,
    # labels included, is escaped.
    shown = arrow(pd.DataFrame(log).drop(columns="id").astype(object).fillna("").map(md_escape)) if log else None
    return _store.trash(actor=_actor), shown


def _trash(store: RunStore, actor: Identity, trash: list[dict]) -> None:
    st.dataframe(pd.DataFrame(trash), hide_index=True, width="stretch", key="trash_table")
    names = {t["id"]: f"#{t['id']} {t['label']}" for t in trash}
    chosen = st.selectbox("Run in the trash", list(names), format_func=names.get, key="trash_run")
    restore, purge = st.columns(2)
    if restore.button(f"Restore run #{chosen}", key="restore"):
        store.restore_run(chosen, actor=actor)
        st.rerun()
    if purge.button(f"Purge the trash ({len(trash)} runs)", key="purge"):
        state.set_purge_pending(True)
    if not state.purge_pending():
        return
    st.warning(f"Delete the {len(trash)} run(s) in the trash and their results for good? This cannot be undone.")
    yes, no = st.columns(2)
    if yes.button("Yes, purge for good", key="purge_yes", type="primary"):
        store.purge_trash([t["id"] for t in trash], actor=actor)
        state.set_purge_pending(False)
        st.rerun()
    if no.button("Keep them", key="purge_no"):
        state.set_purge_pending(False)
        st.rerun()
