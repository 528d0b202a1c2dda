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

    st.subheader("The matrix view")
    st.caption(
        "First A, B and C with their block tiles: the chosen block's C tile, the A rows and B columns it reads, "
        "and the K slice of the chosen step. Then the chosen block's tile, element by element: which thread "
        "computes it, the chosen warp's lanes in colour."
    )
    indexing.show_matrix(sel)

    st.subheader("One warp, one instruction, lane by lane")
    st.caption(
        "Global: each lane's bytes against the 32-byte sectors (grey bands: 128-byte lines) the request must "
        "move. Shared: each lane's 4-byte words against the 32 banks; colour is the wavefront that serves the "
        "word, and the top row the n-way: the most distinct words one bank serves in one phase."
    )
    indexing.show_access(sel)

    st.subheader("Predicted, per instruction of this warp")
    st.dataframe(
        indexing.instruction_shown(sel),
        hide_index=True,
        column_config={"instruction": st.column_config.TextColumn(width="medium")},
    )

    st.subheader(f"Predicted, whole launch at {sel.shape.m} x {sel.shape.n} x {sel.shape.k}")
    indexing.show_launch(sel)

    st.subheader("Predicted against measured (bundled ncu captures at 1024 x 1024 x 1024)")
    st.caption(
        "Whole-launch figures the models predict, beside the counters Nsight Compute measured on the H100 and "
        "H200; a difference beyond the tolerance is a finding about the model or the kernel, shown, not hidden."
    )
    indexing.show_measured(sel.kernel)
permalink.publish("indexing")
