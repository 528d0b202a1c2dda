"""Comments on a saved run or one of its launches, with author and time (the Review page's Open tab): the thread,
oldest first, and a box to add one for those whose role writes (RunStore.add_comment checks the role again)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from profiling.app import store_cache, ui
from profiling.app.text import md_escape
from profiling.runs.comments import launch_name
from profiling.runs.records import SavedRun
from profiling.runs.store import MAX_COMMENT_CHARS, RunStore
from profiling.team.roles import Identity

WHOLE_RUN = "(the whole run)"

COMMENT_DRAFT = {"c_launch": None, "c_text": None}
"""The comment being written (widget key -> values it may hold, None: any): the Review page keeps it while the
Open tab is closed, so a draft survives a look at another tab."""

_CLEAR = "c_clear"  # set when a comment was added: the next run empties the draft before drawing it


def comment_line(comment: Mapping[str, Any]) -> str:
    """One comment (RunStore.comments) as Markdown: author in bold, time, what it is on, then the text; every part
    the reader typed or signed in with escaped."""
    when = str(comment["at"]).replace("T", " ").removesuffix("Z")[:16] + " UTC"
    on = f" on {md_escape(comment['launch'])}" if comment.get("launch") else ""
    return f"**{md_escape(comment['author'])}**, {md_escape(when)}{on}: {md_escape(comment['text'])}"


def launches(run: SavedRun) -> list[str]:
    """The launches of a run a comment can be about, in the run's order."""
    return list(dict.fromkeys(launch_name(r.kernel, r.size) for r in run.results))


def comments_section(store: RunStore, run: SavedRun, actor: Identity | None) -> None:
    """The run's comments, then (for a runner or admin, on a writable store) a form to add one."""
    run_id = run.id
    if run_id is None:
        return
    st.subheader(f"Comments on run #{run_id}")
    thread = store_cache.comments(store, [run_id])
    if not thread:
        st.caption("No comments on this run yet; they are kept in the store and go into the HTML report.")
    for comment in thread:
        st.markdown(comment_line(comment))
    if store.read_only:
        return
    if actor is None or not actor.may("comment"):
        role = actor.role if actor is not None else "signed-out reader"
        st.caption(f"Commenting is a write: a {md_escape(role)} reads the comments; runners and admins add them.")
        return
    # Not a form: a form's text reaches the server only on submit, so the draft would be lost with the tab drawn
    # only while open. A text area alone sends its text when it loses focus, and the page keeps it (COMMENT_DRAFT).
    if st.session_state.pop(_CLEAR, False):
        for key in COMMENT_DRAFT:
            st.session_state.pop(key, None)
    about = st.selectbox("On", [WHOLE_RUN, *launches(run)], key="c_launch")
    text = st.text_area("Comment", max_chars=MAX_COMMENT_CHARS, key="c_text")
    if st.button("Add comment", key="c_add"):
        with ui.user_errors():
            store.add_comment(run_id, text, launch="" if about == WHOLE_RUN else about, actor=actor)
            st.session_state[_CLEAR] = True
            st.rerun()
