"""Why: warp-stall breakdowns, source and SASS hot spots, and the explanation of a step between two kernels, on the
bundled full-set captures (no GPU needed), uploaded reports or this session's profile."""

from __future__ import annotations

import streamlit as st

from profiling.app import permalink, state, why_view

st.title("Why")
permalink.check("why")
st.caption(
    "Why one kernel beats another: where its warps wait (stall reasons), which source lines and SASS instructions "
    "they wait on, and which counters moved between two versions."
)
bundle = state.frame().bundle
sources, devices = why_view.data_sources(bundle)
if not sources:
    st.info("No capture with warp-stall data: profile with the quick or full set, or upload a report or source page.")
    st.stop()
why_view.follow_sidebar("why_source", bundle)
permalink.bind("data", "why_source", list(sources))
name = st.selectbox("Data", list(sources), key="why_source")
why_view.context_note(bundle, name, devices)
data = sources[name]()

# Only the open section is drawn: the server pays Streamlit's price per message for every element, and the three
# sections together sent four times the minimal page's messages. The closed ones' choices stay, and stay in the link.
tabs, shown = permalink.open_tab("tab", why_view.SECTION_KEY, why_view.SECTIONS)
why_view.keep_closed(data, shown)
with tabs[shown]:
    (why_view.stall_section, why_view.source_section, why_view.explain_section)[shown](data)
permalink.publish("why")
