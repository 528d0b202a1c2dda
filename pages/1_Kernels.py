"""Kernels: the catalog, each kernel's source, what it adds, its diff against the previous version, compile facts."""

from __future__ import annotations

import streamlit as st

from kernels import design_docs
from kernels.catalog import CATALOG
from kernels.registry import get_kernel
from profiling.app import kernel_facts, state, tables, ui
from profiling.paths import tool_path
from profiling.runs.results import ResultsDocument

st.title("Kernels")
bundle = state.frame().bundle

st.dataframe(tables.display(kernel_facts.catalog_table()), hide_index=True, width="stretch")

ids = [s.id for s in CATALOG]
kernel_id = st.selectbox("Kernel", ids, index=ids.index("v3") if "v3" in ids else 0, key="kernel")
spec = get_kernel(kernel_id)
st.header(spec.title)
st.markdown(f"**What it adds.** {spec.adds}")
seed = design_docs.passage(spec.id)
if seed is not None:
    doc, part = seed
    st.markdown(f"**Design document.** {ui.safe_md(doc.title)}, section “{ui.safe_md(part.section)}”: "
                f"{ui.safe_md(part.gist)}")  # fmt: skip
    st.markdown(f"> {ui.safe_md(part.english)}")
    st.caption(f"Quoted in English from the project's seed notes, which cover {ui.safe_md(doc.covers)}.")
    with st.expander("The passage in the original Chinese"):
        # st.text: shown in the browser's own fonts; where no CJK font is installed it still names what it is
        st.text((f"{part.section_original}: " if part.section_original else "") + part.quote)
elif spec.design_doc:
    st.markdown(f"**Design reference.** {spec.design_doc}")
if spec.previous:
    st.markdown(f"**Builds on** `{spec.previous}`.")

summary, facts = st.columns(2)
with summary:
    st.dataframe(tables.display(kernel_facts.kernel_summary(spec)), hide_index=True, width="stretch")
with facts:
    st.subheader("Compile facts")
    doc = ui.bench_document(bundle.name) if bundle else ResultsDocument()
    bundled = kernel_facts.bundled_compile_facts(doc)
    row = bundled[bundled["kernel"] == spec.id] if not bundled.empty else bundled
    if spec.source is None:
        st.info("A library kernel (cuBLAS): no source to compile.")
    elif not row.empty:
        st.caption(f"Recorded by the worker (NVRTC) in the bundled run: {ui.safe_md(bundle.label)}")
        st.dataframe(tables.display(row), hide_index=True, width="stretch")
    else:
        st.caption("Not in the bundled measurements.")
    if spec.source is not None and tool_path("nvcc"):
        cache = ui.nvcc_facts_cache()
        arch = st.selectbox("nvcc arch", ["sm_90", "sm_80", "sm_89", "sm_100"], key="arch")
        key = (spec.id, arch)
        if key not in cache and st.button(f"Compile {spec.source} with nvcc ({arch})"):
            with st.spinner("nvcc -Xptxas -v …"):
                try:
                    cache[key] = kernel_facts.nvcc_compile_facts(spec, arch)
                except RuntimeError as exc:
                    ui.show_error(exc)
        if key in cache:
            st.caption(f"ptxas report from nvcc for {arch} (cached for this server)")
            st.dataframe(cache[key], hide_index=True, width="stretch")
    elif spec.source is not None:
        st.caption("nvcc is not installed here; compile facts above come from the bundled run.")

if spec.source:
    source_tab, diff_tab = st.tabs(["Source", f"Diff vs {spec.previous}" if spec.previous else "Diff"])
    with source_tab:
        st.code(spec.read_source(), language="cpp")
    with diff_tab:
        diff = kernel_facts.kernel_diff(spec)
        if diff:
            st.code(diff, language="diff")
        else:
            st.caption("The first kernel of its line: nothing to diff against.")
