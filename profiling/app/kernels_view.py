"""The Kernels page's parts for one catalog kernel: what it adds and the design passage behind it, its compile facts
(the bundled run's, and nvcc's on request), and its source with the diff against the step before."""

from __future__ import annotations

from typing import Any

import streamlit as st

from kernels import design_docs
from kernels.registry import get_kernel
from kernels.spec import KernelSpec
from profiling.app import cache, kernel_facts, table_format, ui
from profiling.app.bundles import Bundle
from profiling.app.table_format import arrow
from profiling.paths import tool_path
from profiling.runs.results import ResultsDocument

NVCC_ARCHS = ["sm_90", "sm_80", "sm_89", "sm_100"]


ORIGINAL_KEY = "kernel_original"
"""The key of the expander holding the design-notes passage in its original Chinese (ui.lazy_expander)."""


def code_tab_key(kernel_id: str) -> str:
    """The key of a kernel's Source / Diff tabs (its session state: the open tab's label)."""
    return f"kernel_code_{kernel_id}"


def about_section(spec: KernelSpec) -> None:
    """What the kernel adds, the design-notes passage it comes from (in English, the original beneath), and the
    kernel it builds on."""
    st.header(spec.title)
    st.markdown(f"**What it adds.** {spec.adds}")
    seed = design_docs.passage(spec.id)
    if seed is not None:
        doc, part = seed
        st.markdown(
            f"**Design document.** {ui.safe_md(doc.title)}, section “{ui.safe_md(part.section)}”: "
            f"{ui.safe_md(part.gist)}"
        )
        st.markdown(f"> {ui.safe_md(part.english)}")
        st.caption(f"Quoted in English from the project's seed notes, which cover {ui.safe_md(doc.covers)}.")
        original = ui.lazy_expander("The passage in the original Chinese", key=ORIGINAL_KEY)
        if original is not None:
            # st.text: shown in the browser's own fonts; where no CJK font is installed it still names what it is
            original.text((f"{part.section_original}: " if part.section_original else "") + part.quote)
    elif spec.design_doc:
        st.markdown(f"**Design reference.** {spec.design_doc}")
    if spec.previous:
        st.markdown(f"**Builds on** `{spec.previous}`.")


@cache.resource(max_entries=256, show_spinner=False)
def _shown_facts(kernel_id: str, bundle_name: str | None) -> tuple[Any, Any]:
    """(kernel_facts.kernel_summary, the bundled run's compile facts row or None) of one kernel as drawn (Arrow),
    once per kernel and bundle: the same for every visitor, so a visit neither builds nor converts them."""
    summary = arrow(table_format.display(kernel_facts.kernel_summary(get_kernel(kernel_id))))
    doc = ui.bench_document(bundle_name) if bundle_name else ResultsDocument()
    bundled = kernel_facts.bundled_compile_facts(doc)
    row = bundled[bundled["kernel"] == kernel_id] if not bundled.empty else bundled
    return summary, (None if row.empty else arrow(table_format.display(row)))


def compile_facts_section(spec: KernelSpec, bundle: Bundle | None) -> None:
    """The kernel's summary beside its compile facts: the worker's (NVRTC) from the bundled run, and nvcc's ptxas
    report for a chosen arch when nvcc is installed (compiled on request, kept for this server)."""
    summary, facts = st.columns(2)
    shown_summary, row = _shown_facts(spec.id, bundle.name if bundle else None)
    with summary:
        st.dataframe(shown_summary, hide_index=True, width="stretch")
    with facts:
        st.subheader("Compile facts")
        if spec.source is None:
            st.info("A library kernel (cuBLAS): no source to compile.")
        elif row is not None:
            st.caption(f"Recorded by the worker (NVRTC) in the bundled run: {ui.safe_md(bundle.label)}")
            st.dataframe(row, hide_index=True, width="stretch")
        else:
            st.caption("Not in the bundled measurements.")
        if spec.source is not None and tool_path("nvcc"):
            _nvcc_facts(spec)
        elif spec.source is not None:
            st.caption("nvcc is not installed here; compile facts above come from the bundled run.")


def _nvcc_facts(spec: KernelSpec) -> None:
    cache = ui.nvcc_facts_cache()
    arch = st.selectbox("nvcc arch", NVCC_ARCHS, key="arch")
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


def source_section(spec: KernelSpec) -> None:
    """The kernel's CUDA source and its diff against the kernel it builds on (nothing for a library kernel)."""
    if not spec.source:
        return
    # Only the open tab is drawn: both codes went with every visit, the diff as large as the source. A key per kernel,
    # as the diff tab's label names the kernel it builds on.
    tabs = st.tabs(
        ["Source", f"Diff vs {spec.previous}" if spec.previous else "Diff"],
        key=code_tab_key(spec.id),
        on_change="rerun",
    )
    if tabs[0].open:
        with tabs[0]:
            st.code(spec.read_source(), language="cpp")
        return
    with tabs[1]:
        diff = kernel_facts.kernel_diff(spec)
        if diff:
            st.code(diff, language="diff")
        else:
            st.caption("The first kernel of its line: nothing to diff against.")
