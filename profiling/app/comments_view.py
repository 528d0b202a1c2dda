"""Comments on a saved run or one of its launches, with author and time (the Review page's Open tab)."""

from __future__ import annotations

import streamlit as st

from profiling.app import ui
from profiling.runs.records import RunResult, SavedRun
from profiling.runs.store import RunStore
from profiling.team.roles import Identity

WHOLE_RUN = "(the whole run)"


def launch_name(result: RunResult) -> str:
    """How a comment names one launch of a run: its kernel and size ('v3 4096x4096x4096')."""
    size = result.size_label or ("x".join(str(d) for d in (result.m, result.n, result.k)) if result.m else "")
    return f"{result.kernel} {size}".strip()


def comments_section(store: RunStore, run: SavedRun, actor: Identity | None) -> None:
    """The run's comments, oldest first, and a form to add one (on the run or one of its launches)."""
    if run.id is None:
        return
    st.subheader("Comments")
    with st.form(f"comment_form_{run.id}", clear_on_submit=True):
        launch = st.selectbox("On", [WHOLE_RUN, *dict.fromkeys(launch_name(r) for r in run.results)], key="c_launch")
        text = st.text_area("Comment", key="c_text", max_chars=5000)
        if st.form_submit_button("Add comment"):
            with ui.user_errors():
                store.add_comment(run.id, text, launch="" if launch == WHOLE_RUN else launch, actor=actor)
    found = store.comments([run.id])
    if not found:
        st.caption("No comments on this run yet; they are kept in the store and go into the HTML report.")
    for c in found:
        on = f" on {ui.safe_md(c['launch'])}" if c["launch"] else ""
        st.markdown(f"**{ui.safe_md(c['author'])}**{on}, {c['at']}: {ui.safe_md(c['text'])}")
