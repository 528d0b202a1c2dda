"""Indexing: which elements and bytes each lane of a warp touches, drawn, and predicted against ncu (no GPU)."""

from __future__ import annotations

import streamlit as st

from profiling.app import indexing, permalink, state, ui

st.title("Indexing")
permalink.check("indexing")
state.frame()  # run inside app.py's frame (its sidebar), also when opened by its own URL
st.caption(
    "C (M x N) = A (M x K) · B (K x N), row-major: element (i, j) of an M x N matrix lies at i * N + j. "
    "Each block computes one tile of C, reading a strip of A's rows and B's columns along K; blockIdx and "
    "threadIdx decide which elements, and so which bytes, a warp's 32 lanes touch at once. That decides how "
    "many 32-byte sectors a global request needs and how many wavefronts a shared access takes. "
    "Everything here is predicted from the kernel's indexing model (kernels/indexing*.py), no GPU needed."
)

with ui.user_errors():
    sel = indexing.controls()
    indexing.sections(sel)
permalink.publish("indexing")
